//===- TokenScan.h - problems found in the tokens, before parsing -*- C++ -*-=//
//
// Internal to parse/. Parser.cpp lexes a file one token at a time and shows
// each token to a TokenScan before the parser runs. The scan finds:
//
//   - lexical problems: a bad character, an unterminated block comment;
//   - nesting the parser's recursion cannot take: parentheses and prefix
//     operators more than kMaxExprNesting deep;
//   - expressions whose tree would be more than kMaxExprNesting deep: it
//     tracks the depth of every expression as a precedence parser would
//     build it (a chain `a + a + ...` of 300 operands is 300 deep), with
//     state proportional to the nesting, not to the length.
//
// The file is lexed only up to the first problem, so refusing a
// 1,000,000-operand chain costs the few hundred tokens before its 257th
// operator, not a parse tree of the whole chain. The depth the scan
// computes is the one AstBuilder computes (parentheses make no node, a call
// is one deeper than its deepest argument); AstBuilder still checks it.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_PARSE_TOKENSCAN_H
#define COCONET_PARSE_TOKENSCAN_H

#include "parse/AstBuilder.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace coconet::parse {

/// One problem found by the scan. `order` is the byte offset of the token
/// it is about. `tooDeep` problems stop everything (the parser is not run);
/// the others are reported unless the parser finds an earlier one.
struct ScanProblem {
  size_t order;
  llvm::SMRange range;
  std::string message;
  bool tooDeep;
};

/// The message for a BAD_CHAR token (or any single unexpected character) at
/// byte `offset`.
std::string badCharMessage(const SourceMap &map, size_t offset);

class TokenScan {
public:
  explicit TokenScan(const SourceMap &map) : map(map) { frames.emplace_back(); }

  /// Looks at `token`, with `next` the token after it (null after EOF).
  /// Returns the first problem; after one, the scan must not be fed more.
  std::optional<ScanProblem> check(const antlr4::Token &token,
                                   const antlr4::Token *next);

private:
  using P = coconet_antlr::CoCoNetParser;

  /// An operator waiting for its operands, with its binding strength.
  struct PendingOp {
    const antlr4::Token *token;
    unsigned precedence;
    bool unary;
  };
  /// The top level, or one level of parentheses: a call's arguments or a
  /// parenthesised expression. Holds the expression being read in it as a
  /// precedence parser does, with depths instead of nodes.
  struct Frame {
    const antlr4::Token *callee = nullptr; ///< Null: plain parentheses.
    unsigned deepest = 0;                  ///< The deepest argument so far.
    llvm::SmallVector<unsigned, 8> operands;
    llvm::SmallVector<PendingOp, 8> ops;
    bool expectOperand = true;
  };

  std::optional<ScanProblem> depthOf(const antlr4::Token &token,
                                     const antlr4::Token *next);
  std::optional<ScanProblem> operand(unsigned depth,
                                     const antlr4::Token *token);
  std::optional<ScanProblem> binary(const antlr4::Token &token,
                                    unsigned precedence);
  /// Applies the operators of the current frame down to `precedence`.
  std::optional<ScanProblem> reduce(unsigned precedence);
  /// Ends the expression of the current frame; its depth.
  unsigned finish(std::optional<ScanProblem> &problem);
  /// Forgets the expression of the current frame (after text that is not
  /// an expression).
  void restart();
  ScanProblem tooDeep(const antlr4::Token &token) const;

  const SourceMap &map;
  llvm::SmallVector<Frame, 16> frames;
  /// An identifier just before a '(': the name of the call it opens.
  const antlr4::Token *callee = nullptr;
  /// The parser's recursion: open parentheses, and prefix operators in a
  /// row at each level (`carried`: those still open at outer levels).
  llvm::SmallVector<unsigned, 64> runs;
  unsigned carried = 0, run = 0;
};

} // namespace coconet::parse

#endif // COCONET_PARSE_TOKENSCAN_H
