//===- TokenScan.cpp - problems found in the tokens, before parsing -------===//
//
// The depth of expressions is tracked as an operator-precedence parser
// would build them, with a depth where the parser has a node: every frame
// (the top level, or one level of parentheses) keeps a stack of operand
// depths and a stack of operators waiting for their operands. Binding
// strengths are the grammar's: prefix + and - bind tightest, then * and /,
// then + and -, then the comparisons, all left-associative. A token that
// cannot continue an expression (';', '=', ':', '{', a keyword, ...) ends
// the one being read. Text that is not a well-formed expression is
// followed loosely (the state restarts) and left to the parser to report:
// the scan only has to agree with AstBuilder where the parse succeeds.
//
//===----------------------------------------------------------------------===//

#include "parse/TokenScan.h"

#include <algorithm>
#include <cstdio>

namespace coconet::parse {

namespace {
/// Binding strengths; 0 is below every operator.
constexpr unsigned kCompare = 1, kAdd = 2, kMul = 3, kPrefix = 4;
} // namespace

std::string badCharMessage(const SourceMap &map, size_t offset) {
  llvm::StringRef text = map.text();
  if (offset >= text.size())
    return "unexpected end of file";
  char32_t cp = 0;
  char buf[64];
  if (decodeUtf8(text, offset, cp) == 0) {
    std::snprintf(
        buf, sizeof(buf), "invalid UTF-8 byte 0x%02X",
        static_cast<unsigned>(static_cast<unsigned char>(text[offset])));
    return buf;
  }
  // A '"' the lexer could not close: a line break, a backslash or the
  // file's end before the closing '"'.
  if (cp == '"')
    return "unterminated string (a string is one line, without '\\')";
  if (cp > 0x20 && cp < 0x7F)
    return std::string("invalid character '") + static_cast<char>(cp) + "'";
  std::snprintf(buf, sizeof(buf), "invalid character U+%04X",
                static_cast<unsigned>(cp));
  return buf;
}

ScanProblem TokenScan::tooDeep(const antlr4::Token &token) const {
  return {map.startOffset(token), map.rangeOf(token),
          "expression nested too deeply", true};
}

std::optional<ScanProblem> TokenScan::check(const antlr4::Token &token,
                                            const antlr4::Token *next) {
  size_t type = token.getType();
  if (type == P::BAD_CHAR) {
    size_t offset = map.startOffset(token);
    return ScanProblem{offset, map.rangeOf(token), badCharMessage(map, offset),
                       false};
  }
  // A '/' right before a '*' is a "/*" that found no "*/".
  if (type == P::SLASH && next && next->getType() == P::STAR &&
      next->getStartIndex() == token.getStopIndex() + 1)
    return ScanProblem{map.startOffset(token), map.rangeOf(token, *next),
                       "unterminated block comment", false};

  // The parser recurses once per open '(' and once per prefix operator.
  bool deeper = false;
  if (type == P::LPAREN) {
    runs.push_back(run);
    carried += run;
    run = 0;
    deeper = true;
  } else if (type == P::RPAREN) {
    if (!runs.empty()) {
      carried -= runs.back();
      runs.pop_back();
    }
    run = 0;
  } else if (type == P::MINUS || type == P::PLUS) {
    ++run;
    deeper = true;
  } else {
    run = 0;
  }
  if (deeper && runs.size() + carried + run > kMaxExprNesting)
    return tooDeep(token);
  return depthOf(token, next);
}

std::optional<ScanProblem> TokenScan::depthOf(const antlr4::Token &token,
                                              const antlr4::Token *next) {
  std::optional<ScanProblem> problem;
  switch (token.getType()) {
  case P::IDENT:
    if (next && next->getType() == P::LPAREN) {
      callee = &token; // The '(' next opens its arguments.
      return std::nullopt;
    }
    return operand(1, nullptr);
  case P::INT:
  case P::FLOAT:
  case P::TRUE:
  case P::FALSE:
    return operand(1, nullptr);
  case P::LPAREN:
    if (!frames.back().expectOperand)
      restart();
    frames.emplace_back();
    frames.back().callee = callee;
    callee = nullptr;
    return std::nullopt;
  case P::RPAREN: {
    if (frames.size() == 1) {
      restart();
      return std::nullopt;
    }
    unsigned depth = finish(problem);
    if (problem)
      return problem;
    Frame done = frames.pop_back_val();
    depth = std::max(depth, done.deepest);
    if (done.callee) // A call is one deeper than its deepest argument.
      return operand(depth + 1, done.callee);
    return operand(std::max(depth, 1u), nullptr);
  }
  case P::COMMA: {
    unsigned depth = finish(problem);
    frames.back().deepest = std::max(frames.back().deepest, depth);
    return problem;
  }
  case P::STAR:
  case P::SLASH:
    return binary(token, kMul);
  case P::PLUS:
  case P::MINUS:
    if (frames.back().expectOperand) {
      frames.back().ops.push_back({&token, kPrefix, true});
      return std::nullopt;
    }
    return binary(token, kAdd);
  case P::LT:
  case P::LE:
  case P::GT:
  case P::GE:
  case P::EQ:
  case P::NE:
    return binary(token, kCompare);
  default:
    finish(problem);
    return problem;
  }
}

void TokenScan::restart() {
  Frame &frame = frames.back();
  frame.operands.clear();
  frame.ops.clear();
  frame.expectOperand = true;
}

std::optional<ScanProblem> TokenScan::operand(unsigned depth,
                                              const antlr4::Token *token) {
  if (!frames.back().expectOperand)
    restart(); // Two operands in a row: not an expression.
  Frame &frame = frames.back();
  frame.operands.push_back(depth);
  frame.expectOperand = false;
  if (depth > kMaxExprNesting && token)
    return tooDeep(*token);
  return std::nullopt;
}

std::optional<ScanProblem> TokenScan::binary(const antlr4::Token &token,
                                             unsigned precedence) {
  if (frames.back().expectOperand) {
    restart(); // An operator with no left operand: not an expression.
    return std::nullopt;
  }
  if (auto problem = reduce(precedence))
    return problem;
  frames.back().ops.push_back({&token, precedence, false});
  frames.back().expectOperand = true;
  return std::nullopt;
}

std::optional<ScanProblem> TokenScan::reduce(unsigned precedence) {
  Frame &frame = frames.back();
  while (!frame.ops.empty() && frame.ops.back().precedence >= precedence) {
    PendingOp op = frame.ops.pop_back_val();
    size_t arity = op.unary ? 1 : 2;
    if (frame.operands.size() < arity) { // An operator without operands.
      restart();
      return std::nullopt;
    }
    unsigned depth = frame.operands.pop_back_val();
    if (!op.unary)
      depth = std::max(depth, frame.operands.pop_back_val());
    frame.operands.push_back(depth + 1);
    if (depth + 1 > kMaxExprNesting)
      return tooDeep(*op.token);
  }
  return std::nullopt;
}

unsigned TokenScan::finish(std::optional<ScanProblem> &problem) {
  Frame &frame = frames.back();
  if (!frame.expectOperand)
    problem = reduce(0);
  unsigned depth = 0;
  for (unsigned d : frame.operands)
    depth = std::max(depth, d);
  restart();
  return depth;
}

} // namespace coconet::parse
