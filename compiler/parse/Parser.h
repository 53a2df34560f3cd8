//===- Parser.h - parse a .coco buffer into an AST --------------*- C++ -*-===//
//
// The public entry point of parse/, and the only header other folders
// include from it: ANTLR stays behind this interface. The parser reads one
// llvm::SourceMgr buffer, reports syntax errors through the
// DiagnosticEngine and returns the ast::Module, or null when the file has a
// syntax error.
//
// Error policy: only the FIRST syntax error of a file is reported, and the
// parser stops there. ANTLR's recovery after an error mostly produces
// cascades of follow-on messages that point at correct code; one precise
// message is clearer. "First" means first in the source: a bad character or
// an unterminated block comment is reported unless the parser stopped at an
// earlier token. Messages are clang-like, lower-case, without a period:
//
//   expected ';' after statement          (pointing just past the last token)
//   expected ')' before '{'               (a token is missing)
//   expected an expression, found ';'     (a wrong token)
//   unexpected 'x'                        (when too many tokens would fit)
//   invalid character '@'
//   unterminated block comment
//   expression nested too deeply          (more than 256 levels)
//
// Expected tokens are listed when there are at most four of them, with
// groups named: "an expression", "a statement", "a directive", "a layout",
// "a type", "an identifier"; the end of the input is called "end of file".
// A file without syntax errors can still fail with integer literals that are
// too large (each reported as integer-too-large). The parser never throws
// and never crashes, whatever the bytes of the buffer.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_PARSE_PARSER_H
#define COCONET_PARSE_PARSER_H

#include "ast/Ast.h"
#include "diag/Diagnostic.h"

#include <memory>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace coconet::parse {

/// Parses buffer `bufferId` of the SourceMgr. Syntax errors are reported
/// through `diags`; returns null if there was any syntax error (the AST is
/// then not built), or if an integer literal was too large or an expression
/// nested too deeply. Every AST node carries its source range in the buffer.
std::unique_ptr<ast::Module> parseBuffer(llvm::SourceMgr &sourceMgr,
                                         unsigned bufferId,
                                         DiagnosticEngine &diags);

} // namespace coconet::parse

#endif // COCONET_PARSE_PARSER_H
