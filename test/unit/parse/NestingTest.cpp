//===- NestingTest.cpp - expressions too deep are refused before parsing --===//
//
// The token scan (parse/TokenScan.cpp) computes the depth of every
// expression as the parser would build it, so that a long chain is refused
// after a few hundred tokens instead of after a parse tree of the whole
// file. These tests hold it to the depth AstBuilder gives: random
// expressions of known depth around the limit (operators of every binding
// strength, prefix operators, calls, keyword arguments, the parentheses
// precedence needs) parse exactly when they are at most kMaxExprNesting
// deep, and a refusal points at the operator (or call) that went past the
// limit, which is where the scan reports it (AstBuilder's own check reports
// at the start of the expression).
//
//===----------------------------------------------------------------------===//

#include "parse/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

namespace {

constexpr unsigned kLimit = 256; // parse::kMaxExprNesting, documented.

struct Result {
  bool parsed;
  std::string diagnostics;
  unsigned errors;
  /// The character the diagnostic points at and the one after it.
  std::string at;
};

Result parse(const std::string &source) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, "test.coco"), llvm::SMLoc());
  Result r;
  llvm::raw_string_ostream os(r.diagnostics);
  coconet::DiagnosticEngine diags(sm, os);
  r.parsed = coconet::parse::parseBuffer(sm, id, diags) != nullptr;
  r.errors = diags.errorCount();
  os.flush();
  // "test.coco:1:COL: error: ..." (the sources are one line).
  size_t colon = r.diagnostics.find(':', 10);
  if (colon != std::string::npos)
    r.at = source.substr(std::stoul(r.diagnostics.substr(colon + 1)) - 1, 2);
  return r;
}

/// Random expressions of an exact depth, printed with the parentheses the
/// grammar's precedence needs (and no others: parentheses make no node).
class Generator {
public:
  explicit Generator(uint64_t seed) : state(seed) {}

  /// An expression of depth `depth` and the binding strength of its root
  /// (5: a leaf or a call, 4: prefix, 3: * /, 2: + -, 1: comparisons).
  std::pair<std::string, unsigned> expr(unsigned depth) {
    if (depth == 1) {
      static const char *leaves[] = {"a", "7", "2.5", "true", "f()"};
      return {leaves[next() % 5], 5};
    }
    switch (next() % 6) {
    case 0: { // Prefix operator.
      auto [operand, strength] = expr(depth - 1);
      if (strength < 4)
        operand = "(" + operand + ")";
      return {std::string(next() % 2 ? "-" : "+") + operand, 4};
    }
    case 1: { // A call: one argument of depth - 1, maybe others.
      std::string args;
      unsigned n = 1 + next() % 3, deep = next() % n;
      for (unsigned i = 0; i < n; ++i) {
        if (i)
          args += ", ";
        if (next() % 4 == 0)
          args += "k" + std::to_string(i) + "=";
        unsigned shallow = std::min<unsigned>(1 + next() % 3, depth - 1);
        args += expr(i == deep ? depth - 1 : shallow).first;
      }
      return {"g(" + args + ")", 5};
    }
    default: { // A binary operator: one side depth - 1.
      static const std::pair<const char *, unsigned> ops[] = {
          {" * ", 3}, {" / ", 3},  {" + ", 2}, {" - ", 2},
          {" < ", 1}, {" == ", 1}, {" >= ", 1}};
      auto [op, strength] = ops[next() % 7];
      unsigned other = 1 + next() % 3;
      // Chains lean left, as written. The parser's recursion counts a
      // binary + or - right before a '(' as a level of its own (TokenScan
      // counts it as it counts a prefix operator), so `a - (a - (...))` is
      // twice as deep to it: deep right sides only for the others.
      bool deepLeft = strength == 2 || next() % 4 != 0;
      auto lhs = expr(deepLeft ? depth - 1 : std::min(other, depth - 1));
      auto rhs = expr(deepLeft ? std::min(other, depth - 1) : depth - 1);
      // Left-associative: the right side needs parentheses at equal strength.
      if (lhs.second < strength)
        lhs.first = "(" + lhs.first + ")";
      if (rhs.second <= strength)
        rhs.first = "(" + rhs.first + ")";
      return {lhs.first + op + rhs.first, strength};
    }
    }
  }

private:
  uint64_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }
  uint64_t state;
};

std::string program(const std::string &expr) {
  return "program p(a: f32) { x = " + expr + "; return x; }";
}

} // namespace

TEST_CASE("the scan refuses exactly the expressions deeper than the limit",
          "[parse][nesting]") {
  Generator gen(20240607);
  unsigned refused = 0, accepted = 0;
  for (int i = 0; i < 240; ++i) {
    unsigned depth = kLimit - 6 + static_cast<unsigned>(i % 12);
    std::string source = program(gen.expr(depth).first);
    Result r = parse(source);
    INFO("depth " << depth << ": " << source);
    INFO(r.diagnostics);
    CHECK(r.parsed == (depth <= kLimit));
    if (r.parsed) {
      ++accepted;
      continue;
    }
    ++refused;
    CHECK(r.errors == 1);
    CHECK(r.diagnostics.find("error: expression nested too deeply "
                             "[syntax-error]") != std::string::npos);
    // The operator or the called name, never the start of an operand.
    bool atOperator = !r.at.empty() &&
                      std::string("+-*/<>=").find(r.at[0]) != std::string::npos;
    bool atCall = r.at == "g(" || r.at == "f(";
    CHECK((atOperator || atCall));
  }
  CHECK(accepted == 140);
  CHECK(refused == 100);
}

TEST_CASE("a long chain is refused at the operator past the limit",
          "[parse][nesting]") {
  auto chain = [](unsigned operands, const char *op) {
    std::string s = "a";
    for (unsigned i = 1; i < operands; ++i)
      s += std::string(" ") + op + " a";
    return program(s);
  };
  // 256 operands: 255 operators, 256 deep. Accepted.
  CHECK(parse(chain(kLimit, "+")).parsed);
  CHECK(parse(chain(kLimit, "<")).parsed);
  // 257 operands: the 256th operator makes a node 257 deep. It is at
  // column 25 + 4 * 255 ("program p(a: f32) { x = " is 24 columns).
  for (const char *op : {"+", "-", "*", "/", "<"}) {
    Result r = parse(chain(kLimit + 1, op));
    INFO(r.diagnostics);
    CHECK_FALSE(r.parsed);
    CHECK(r.diagnostics.find("test.coco:1:1047: error: expression nested too "
                             "deeply") != std::string::npos);
  }
  // A million operands: the same place, found as fast.
  Result big = parse(chain(1000000, "+"));
  CHECK(big.diagnostics.find("test.coco:1:1047: error: expression nested too "
                             "deeply") != std::string::npos);
  // Flat text of any length is fine: many arguments, many statements,
  // chains of products inside a short sum.
  std::string args = "a";
  for (int i = 0; i < 20000; ++i)
    args += ", a";
  CHECK(parse(program("g(" + args + ")")).parsed);
  std::string body;
  for (int i = 0; i < 5000; ++i)
    body += "x" + std::to_string(i) + " = a * a + a / a - (a < a); ";
  CHECK(parse("program p(a: f32) { " + body + "return x0; }").parsed);
}
