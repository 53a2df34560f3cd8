//===- AstBuilder.h - from ANTLR's parse tree to the AST --------*- C++ -*-===//
//
// Internal to parse/: nothing outside this folder includes it. SourceMap
// decodes a buffer into the code points ANTLR reads and maps ANTLR's
// code-point indices back to locations in the llvm::SourceMgr buffer.
// AstBuilder walks the parse tree of a file that parsed without syntax errors
// and builds the ast::Module, reporting integer literals that are too large
// and expressions nested too deeply.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_PARSE_ASTBUILDER_H
#define COCONET_PARSE_ASTBUILDER_H

#include "ast/Ast.h"
#include "diag/Diagnostic.h"
#include "diag/TerminalText.h" // decodeUtf8

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

// ANTLR's runtime headers trip -Wattributes with GCC.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
#include "CoCoNetParser.h"
#pragma GCC diagnostic pop

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace coconet::parse {

/// The deepest nesting of parentheses, unary operators and expression nodes
/// the parser accepts; deeper input gets "expression nested too deeply"
/// instead of overflowing the stack here or in later phases.
constexpr unsigned kMaxExprNesting = 256;

/// The text of one buffer as ANTLR reads it, and the way back from ANTLR's
/// code-point indices to byte locations in the buffer.
class SourceMap {
public:
  /// Decodes `text` as UTF-8 into `codePoints`; each byte that does not start
  /// a valid sequence becomes one U+FFFD, so no input is ever rejected here.
  SourceMap(llvm::StringRef text, std::u32string &codePoints);

  /// The buffer's bytes.
  llvm::StringRef text() const { return buffer; }
  /// The byte offset of code point `index`; an index at or past the end
  /// gives the end of the buffer.
  size_t offsetOf(size_t index) const;
  /// The location of code point `index` in the buffer.
  llvm::SMLoc locOf(size_t index) const;
  /// The byte offset where `token` starts; the end of the buffer for the
  /// end-of-file token.
  size_t startOffset(const antlr4::Token &token) const;
  /// The bytes `token` covers, from its first byte to one past its last; an
  /// empty range at its start for the end-of-file token.
  llvm::SMRange rangeOf(const antlr4::Token &token) const;
  /// The source bytes of `token`.
  llvm::StringRef textOf(const antlr4::Token &token) const;
  /// From the first byte of `first` to one past the last byte of `last`.
  llvm::SMRange rangeOf(const antlr4::Token &first,
                        const antlr4::Token &last) const;

private:
  llvm::StringRef buffer;
  size_t numCodePoints = 0;
  /// The byte offset of every code point plus one for the end; empty when
  /// the text is ASCII, where a code-point index is the byte offset.
  std::vector<size_t> offsets;
};

/// Builds the AST of a file that parsed without syntax errors. Expressions
/// are built with an explicit stack, so a long operator chain cannot
/// overflow the native stack.
class AstBuilder {
public:
  AstBuilder(const SourceMap &map, DiagnosticEngine &diags)
      : map(map), diags(diags) {}

  /// Builds the module of buffer `bufferId`. Returns null after reporting an
  /// integer literal that is too large or an expression nested more than
  /// kMaxExprNesting deep; the whole tree is still walked so that every such
  /// problem is reported.
  std::unique_ptr<ast::Module>
  build(coconet_antlr::CoCoNetParser::FileContext &file, unsigned bufferId);

private:
  using P = coconet_antlr::CoCoNetParser;

  ast::Import buildImport(P::ImportDeclContext &ctx);
  ast::Program buildProgram(P::ProgramDeclContext &ctx);
  ast::Param buildParam(P::ParamContext &ctx);
  ast::TypeSpec buildTypeSpec(P::TypeSpecContext &ctx);
  ast::DimExpr buildDim(P::DimExprContext &ctx);
  ast::LayoutTerm buildLayout(P::LayoutTermContext &ctx);
  ast::Stmt buildStmt(P::StmtContext &ctx);
  ast::ExprPtr buildExpr(P::ExprContext *root);
  ast::ExprPtr buildLeaf(P::PrimaryContext *primary, llvm::SMRange range);
  ast::Schedule buildSchedule(P::ScheduleDeclContext &ctx);
  ast::Directive buildDirective(P::DirectiveContext &ctx);

  ast::Ident ident(const antlr4::Token *token) const;
  llvm::SMRange rangeOf(antlr4::ParserRuleContext &ctx) const;
  /// The value of an INT token, or nullopt (reported) when it exceeds `max`.
  std::optional<uint64_t> intValue(const antlr4::Token *token, uint64_t max);

  const SourceMap &map;
  DiagnosticEngine &diags;
  bool failed = false;
};

} // namespace coconet::parse

#endif // COCONET_PARSE_ASTBUILDER_H
