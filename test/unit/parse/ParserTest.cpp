//===- ParserTest.cpp - the lexer, the parser and the AST -----------------===//
//
// Feeds source text through parse::parseBuffer and checks the syntax tree
// (by walking it, through the AST printer, and through source ranges) and
// the syntax diagnostics: exact message, kind and line:column. The parser
// reports only the first syntax error of a file; integer literals that are
// too large are all reported, since the whole tree is walked.
//
//===----------------------------------------------------------------------===//

#include "parse/Parser.h"
#include "ast/Ast.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace {

using coconet::ast::BinaryOp;
using coconet::ast::Directive;
using coconet::ast::Expr;
using coconet::ast::LayoutKind;
using coconet::ast::Stmt;
using coconet::ast::UnaryOp;

/// The outcome of parsing one string. The SourceMgr is kept alive so that
/// the ranges in the tree stay valid.
struct Parsed {
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<coconet::ast::Module> module;
  std::string diagnostics;
  unsigned errors = 0;

  /// The tree as --emit=ast prints it ("" without a module).
  std::string ast() const {
    std::string out;
    llvm::raw_string_ostream os(out);
    if (module)
      coconet::ast::printModule(*module, os);
    return out;
  }
  /// "line:col" of a location.
  std::string at(llvm::SMLoc loc) const {
    auto [line, col] = sourceMgr->getLineAndColumn(loc);
    return std::to_string(line) + ":" + std::to_string(col);
  }
  /// The source text a range covers.
  static std::string text(llvm::SMRange range) {
    return std::string(range.Start.getPointer(),
                       range.End.getPointer() - range.Start.getPointer());
  }
  const coconet::ast::Program &program(size_t i = 0) const {
    REQUIRE(module);
    REQUIRE(module->programs.size() > i);
    return module->programs[i];
  }
  /// The expression of statement `i` of the first program.
  const Expr &value(size_t i) const {
    const auto &body = program().body;
    REQUIRE(body.size() > i);
    REQUIRE(body[i].values.size() == 1);
    return *body[i].values[0];
  }
};

Parsed parse(llvm::StringRef source) {
  Parsed result;
  result.sourceMgr = std::make_unique<llvm::SourceMgr>();
  unsigned id = result.sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, "test.coco"), llvm::SMLoc());
  llvm::raw_string_ostream os(result.diagnostics);
  coconet::DiagnosticEngine diags(*result.sourceMgr, os);
  result.module = coconet::parse::parseBuffer(*result.sourceMgr, id, diags);
  result.errors = diags.errorCount();
  os.flush();
  return result;
}

/// Parses a one-statement program and returns the printed statement.
std::string stmtOf(llvm::StringRef expr) {
  Parsed p = parse(("program p() { x = " + expr + "; }").str());
  INFO(p.diagnostics);
  REQUIRE(p.errors == 0);
  std::string ast = p.ast();
  size_t start = ast.find("  stmt x = ");
  REQUIRE(start != std::string::npos);
  start += 11;
  return ast.substr(start, ast.find('\n', start) - start);
}

/// Checks that parsing fails with exactly one syntax error: `where` (line:col)
/// and the message.
void expectSyntaxError(llvm::StringRef source, const std::string &where,
                       const std::string &message) {
  Parsed p = parse(source);
  INFO("source: " << source.str());
  INFO(p.diagnostics);
  CHECK_FALSE(p.module);
  CHECK(p.errors == 1);
  CHECK(p.diagnostics.find("test.coco:" + where + ": error: " + message +
                           " [syntax-error]\n") != std::string::npos);
}

size_t count(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

} // namespace

//===----------------------------------------------------------------------===//
// Files, imports, programs, meshes, parameters
//===----------------------------------------------------------------------===//

TEST_CASE("an empty file and a file of comments parse to an empty module",
          "[parse]") {
  for (const char *source : {"", "   \n\t\n", "// just a comment",
                             "/* block */ // line\n/* multi\nline */\n"}) {
    Parsed p = parse(source);
    INFO(source);
    REQUIRE(p.module);
    CHECK(p.errors == 0);
    CHECK(p.module->imports.empty());
    CHECK(p.module->programs.empty());
    CHECK(p.module->schedules.empty());
  }
}

TEST_CASE("imports: plain and dotted names", "[parse]") {
  Parsed p = parse("import util;\nimport optim.adam.v2;\n");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  REQUIRE(p.module->imports.size() == 2);
  const auto &a = p.module->imports[0];
  const auto &b = p.module->imports[1];
  CHECK(a.dotted() == "util");
  REQUIRE(b.path.size() == 3);
  CHECK(b.path[0].name == "optim");
  CHECK(b.path[2].name == "v2");
  CHECK(b.dotted() == "optim.adam.v2");
  CHECK(Parsed::text(b.range) == "import optim.adam.v2;");
  CHECK(p.at(b.path[1].range.Start) == "2:14");
  CHECK(p.ast() == "import util\nimport optim.adam.v2\n");
}

TEST_CASE("a mesh declaration comes first in the parameter list", "[parse]") {
  Parsed p = parse("program a(mesh [pp: PP, tp: T], x: f32[N] local) {}\n"
                   "program b(mesh [w: P]) {}\n"
                   "program c() {}\n");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  REQUIRE(p.module->programs.size() == 3);
  const auto &a = p.program(0);
  CHECK(a.name.name == "a");
  CHECK(a.hasMesh);
  REQUIRE(a.mesh.size() == 2);
  CHECK(a.mesh[0].name.name == "pp");
  CHECK(a.mesh[0].size.name == "PP");
  CHECK(a.mesh[1].name.name == "tp");
  CHECK(a.mesh[1].size.name == "T");
  CHECK(Parsed::text(a.meshRange) == "mesh [pp: PP, tp: T]");
  REQUIRE(a.params.size() == 1);
  CHECK(a.params[0].name.name == "x");

  const auto &b = p.program(1);
  CHECK(b.hasMesh);
  CHECK(b.params.empty());
  REQUIRE(b.mesh.size() == 1);
  CHECK(b.mesh[0].size.name == "P");

  const auto &c = p.program(2);
  CHECK_FALSE(c.hasMesh);
  CHECK(c.params.empty());
  CHECK(c.body.empty());

  expectSyntaxError("program p(x: f32, mesh [a: A]) {}", "1:19",
                    "expected ')', found 'mesh'");
  expectSyntaxError("program p(mesh [a: 4]) {}", "1:20",
                    "expected an identifier, found '4'");
  expectSyntaxError("program p(mesh []) {}", "1:17",
                    "expected an identifier, found ']'");
}

TEST_CASE("parameters: scalars, tensors and a trailing comma", "[parse]") {
  Parsed p = parse("program p(s: f32, t: bool[N], u: u64[N, M],) {}");
  INFO(p.diagnostics);
  const auto &params = p.program().params;
  REQUIRE(params.size() == 3);
  CHECK(params[0].name.name == "s");
  CHECK(params[0].type.dtype.name == "f32");
  CHECK_FALSE(params[0].type.isTensor);
  CHECK(params[0].type.dims.empty());
  CHECK(params[1].type.isTensor);
  CHECK(params[1].type.dims.size() == 1);
  CHECK(params[2].type.dims.size() == 2);
  CHECK(Parsed::text(params[2].range) == "u: u64[N, M]");
  // Element types are plain identifiers here; sema checks them.
  Parsed q = parse("program p(x: f33[N]) {}");
  REQUIRE(q.module);
  CHECK(q.program().params[0].type.dtype.name == "f33");

  expectSyntaxError("program p(g: , w: f32[N] replicated) {\n    return w;\n}",
                    "1:14", "expected a type, found ','");
  expectSyntaxError("program p(x: f32[]) {}", "1:18",
                    "expected an integer or an identifier before ']'");
  expectSyntaxError("program p(x: f32[N,]) {}", "1:20",
                    "expected an integer or an identifier before ']'");
}

TEST_CASE("dimensions are products of integers and size names", "[parse]") {
  Parsed p = parse("program p(x: f16[4*H, B*S*2, 1024, N]) {}");
  INFO(p.diagnostics);
  const auto &dims = p.program().params[0].type.dims;
  REQUIRE(dims.size() == 4);
  REQUIRE(dims[0].factors.size() == 2);
  CHECK(dims[0].factors[0].isLiteral);
  CHECK(dims[0].factors[0].value == 4);
  CHECK_FALSE(dims[0].factors[1].isLiteral);
  CHECK(dims[0].factors[1].name == "H");
  CHECK(Parsed::text(dims[0].range) == "4*H");
  REQUIRE(dims[1].factors.size() == 3);
  CHECK(dims[1].factors[0].name == "B");
  CHECK(dims[1].factors[1].name == "S");
  CHECK(dims[1].factors[2].value == 2);
  REQUIRE(dims[2].factors.size() == 1);
  CHECK(dims[2].factors[0].isLiteral);
  CHECK(dims[2].factors[0].value == 1024);
  CHECK(p.ast() == "program p\n  param x: f16[4*H, B*S*2, 1024, N]\n");

  // Only '*' combines factors; signs and fractions are not dimensions.
  expectSyntaxError("program p(x: f32[-1]) {}", "1:18",
                    "expected an integer or an identifier, found '-'");
  expectSyntaxError("program p(x: f32[2.5]) {}", "1:18",
                    "expected an integer or an identifier, found '2.5'");
  expectSyntaxError("program p(x: f32[N+1]) {}", "1:19",
                    "expected ']', found '+'");
}

TEST_CASE("layout terms with and without axes", "[parse]") {
  Parsed p =
      parse("program p(mesh [dp: D, tp: T],\n"
            "          a: f32[N, M] sliced(1, tp) local(dp),\n"
            "          b: f32[N] sliced, c: f32[N] sliced(0),\n"
            "          d: f32[N] replicated(dp, tp), e: f32[N] local,\n"
            "          f: f32[N] replicated local(tp) sliced(0, dp, tp)) {}");
  INFO(p.diagnostics);
  const auto &params = p.program().params;
  REQUIRE(params.size() == 6);

  const auto &a = params[0].type.layout;
  REQUIRE(a.size() == 2);
  CHECK(a[0].kind == LayoutKind::Sliced);
  CHECK(a[0].sliceDim == 1);
  REQUIRE(a[0].axes.size() == 1);
  CHECK(a[0].axes[0].name == "tp");
  CHECK(Parsed::text(a[0].range) == "sliced(1, tp)");
  CHECK(a[1].kind == LayoutKind::Local);
  CHECK_FALSE(a[1].sliceDim);
  REQUIRE(a[1].axes.size() == 1);
  CHECK(a[1].axes[0].name == "dp");

  const auto &b = params[1].type.layout;
  REQUIRE(b.size() == 1);
  CHECK(b[0].kind == LayoutKind::Sliced);
  CHECK_FALSE(b[0].sliceDim); // absent means dimension 0
  CHECK(b[0].axes.empty());   // every axis not named elsewhere

  CHECK(params[2].type.layout[0].sliceDim == 0);
  CHECK(params[3].type.layout[0].kind == LayoutKind::Replicated);
  CHECK(params[3].type.layout[0].axes.size() == 2);
  CHECK(params[4].type.layout[0].kind == LayoutKind::Local);
  CHECK(params[5].type.layout.size() == 3);
  CHECK(params[5].type.layout[2].axes.size() == 2);

  CHECK(p.ast() ==
        "program p\n"
        "  mesh [dp: D, tp: T]\n"
        "  param a: f32[N, M] sliced(1, tp) local(dp)\n"
        "  param b: f32[N] sliced\n"
        "  param c: f32[N] sliced(0)\n"
        "  param d: f32[N] replicated(dp, tp)\n"
        "  param e: f32[N] local\n"
        "  param f: f32[N] replicated local(tp) sliced(0, dp, tp)\n");
}

TEST_CASE("layout syntax errors, a layout after a scalar parses", "[parse]") {
  // sliced takes its dimension before any axis.
  expectSyntaxError("program p(x: f32[N] sliced(tp)) {}", "1:28",
                    "expected an integer, found 'tp'");
  expectSyntaxError("program p(x: f32[N] local()) {}", "1:27",
                    "expected an identifier before ')'");
  // Sema says that scalars have no layout; the grammar accepts one.
  Parsed p = parse("program p(s: f32 local(world)) {}");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  const auto &type = p.program().params[0].type;
  CHECK_FALSE(type.isTensor);
  REQUIRE(type.layout.size() == 1);
  CHECK(type.layout[0].kind == LayoutKind::Local);
}

//===----------------------------------------------------------------------===//
// Statements and expressions
//===----------------------------------------------------------------------===//

TEST_CASE("assignment and return statements", "[parse]") {
  Parsed p = parse("program p(g: f32[N] local) {\n"
                   "    s = g;\n"
                   "    t = update(w, s);\n"
                   "    return s, t + 1, 2;\n"
                   "}\n");
  INFO(p.diagnostics);
  const auto &body = p.program().body;
  REQUIRE(body.size() == 3);
  CHECK(body[0].kind == Stmt::Kind::Assign);
  CHECK(body[0].name.name == "s");
  CHECK(p.at(body[0].name.range.Start) == "2:5");
  CHECK(Parsed::text(body[0].range) == "s = g;");
  // update is an ordinary call to the parser.
  CHECK(body[1].values[0]->kind == Expr::Kind::Call);
  CHECK(body[1].values[0]->text == "update");
  CHECK(body[2].kind == Stmt::Kind::Return);
  CHECK(body[2].name.name.empty());
  REQUIRE(body[2].values.size() == 3);
  CHECK(body[2].values[1]->kind == Expr::Kind::Binary);
  CHECK(p.ast() == "program p\n"
                   "  param g: f32[N] local\n"
                   "  stmt s = name g\n"
                   "  stmt t = call update(name w, name s)\n"
                   "  stmt return name s, (name t + int 1), int 2\n");

  expectSyntaxError("program p() { return; }", "1:21",
                    "expected an expression, found ';'");
  expectSyntaxError("program p() { x = 1; return a, ; }", "1:32",
                    "expected an expression, found ';'");
  expectSyntaxError("program p() { 3 = x; }", "1:15",
                    "expected a statement or '}', found '3'");
  // '=' or, for a constant (`c: f32[N] = 0;`), its type.
  expectSyntaxError("program p() { x == 1; }", "1:17",
                    "expected ':' or '=', found '=='");
}

TEST_CASE("literals: integers, floats in every form, booleans", "[parse]") {
  Parsed p = parse("program p() {\n"
                   "  a = 0; b = 18446744073709551615; c = 1.5e-3; d = .5;\n"
                   "  e = 2.; f = 1e3; g = 2E+2; h = true; i = false;\n"
                   "}");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  CHECK(p.value(0).kind == Expr::Kind::IntLit);
  CHECK(p.value(0).intValue == 0);
  CHECK(p.value(1).intValue == UINT64_MAX);
  CHECK(p.value(1).text == "18446744073709551615");
  CHECK(p.value(2).kind == Expr::Kind::FloatLit);
  CHECK(p.value(2).floatValue == 1.5e-3);
  CHECK(p.value(2).text == "1.5e-3");
  CHECK(p.value(3).floatValue == 0.5);
  CHECK(p.value(4).kind == Expr::Kind::FloatLit);
  CHECK(p.value(4).floatValue == 2.0);
  CHECK(p.value(5).kind == Expr::Kind::FloatLit);
  CHECK(p.value(5).floatValue == 1000.0);
  CHECK(p.value(6).floatValue == 200.0);
  CHECK(p.value(7).kind == Expr::Kind::BoolLit);
  CHECK(p.value(7).boolValue);
  CHECK_FALSE(p.value(8).boolValue);
  // A negative number is unary minus applied to a literal.
  CHECK(stmtOf("-1") == "(-int 1)");
  CHECK(stmtOf("-0.25") == "(-float 0.25)");
}

TEST_CASE("unary minus and plus bind tightest", "[parse][precedence]") {
  CHECK(stmtOf("-a * b") == "((-name a) * name b)");
  CHECK(stmtOf("a * -b") == "(name a * (-name b))");
  CHECK(stmtOf("- - a") == "(-(-name a))");
  CHECK(stmtOf("+a - -b") == "((+name a) - (-name b))");
  CHECK(stmtOf("-(a + b)") == "(-(name a + name b))");

  Parsed p = parse("program p() { x = -a * b; }");
  const Expr &mul = p.value(0);
  REQUIRE(mul.kind == Expr::Kind::Binary);
  CHECK(mul.binaryOp == BinaryOp::Mul);
  REQUIRE(mul.operands.size() == 2);
  const Expr &neg = *mul.operands[0];
  CHECK(neg.kind == Expr::Kind::Unary);
  CHECK(neg.unaryOp == UnaryOp::Neg);
  REQUIRE(neg.operands.size() == 1);
  CHECK(neg.operands[0]->kind == Expr::Kind::Name);
  CHECK(neg.operands[0]->text == "a");
}

TEST_CASE("'*' and '/' bind tighter than + and -, which bind tighter "
          "than "
          "comparisons",
          "[parse][precedence]") {
  CHECK(stmtOf("a + b * c") == "(name a + (name b * name c))");
  CHECK(stmtOf("a * b + c") == "((name a * name b) + name c)");
  CHECK(stmtOf("a - b / c + d") == "((name a - (name b / name c)) + name d)");
  CHECK(stmtOf("a + 1 < b * 2") == "((name a + int 1) < (name b * int 2))");
  CHECK(stmtOf("a == b + c") == "(name a == (name b + name c))");

  Parsed p = parse("program p() { x = a + b * c; }");
  const Expr &add = p.value(0);
  REQUIRE(add.kind == Expr::Kind::Binary);
  CHECK(add.binaryOp == BinaryOp::Add);
  CHECK(add.operands[0]->kind == Expr::Kind::Name);
  REQUIRE(add.operands[1]->kind == Expr::Kind::Binary);
  CHECK(add.operands[1]->binaryOp == BinaryOp::Mul);
}

TEST_CASE("binary operators are left-associative", "[parse][precedence]") {
  CHECK(stmtOf("2 - 3 - 4") == "((int 2 - int 3) - int 4)");
  CHECK(stmtOf("a / b * c") == "((name a / name b) * name c)");
  CHECK(stmtOf("a / b / c") == "((name a / name b) / name c)");
  CHECK(stmtOf("a - b + c") == "((name a - name b) + name c)");
  // Comparisons share one level: a < b < c parses (sema rejects it).
  CHECK(stmtOf("a < b < c") == "((name a < name b) < name c)");
  CHECK(stmtOf("a < b == c != d <= e >= f > g") ==
        "((((((name a < name b) == name c) != name d) <= name e) >= name f) "
        "> name g)");

  Parsed p = parse("program p() { x = 2 - 3 - 4; }");
  const Expr &outer = p.value(0);
  REQUIRE(outer.kind == Expr::Kind::Binary);
  CHECK(outer.binaryOp == BinaryOp::Sub);
  REQUIRE(outer.operands[0]->kind == Expr::Kind::Binary);
  CHECK(outer.operands[0]->binaryOp == BinaryOp::Sub);
  CHECK(outer.operands[1]->kind == Expr::Kind::IntLit);
  CHECK(outer.operands[1]->intValue == 4);
}

TEST_CASE("parentheses group without making a node", "[parse][precedence]") {
  CHECK(stmtOf("(a + b) * c") == "((name a + name b) * name c)");
  CHECK(stmtOf("a - (b - c)") == "(name a - (name b - name c))");
  CHECK(stmtOf("(((a)))") == "name a");

  Parsed p = parse("program p() { x = (a + b) * c; }");
  const Expr &mul = p.value(0);
  CHECK(Parsed::text(mul.range) == "(a + b) * c");
  REQUIRE(mul.operands[0]->kind == Expr::Kind::Binary);
  CHECK(Parsed::text(mul.operands[0]->range) == "a + b");
  CHECK(p.at(mul.operands[1]->range.Start) == "1:29");

  expectSyntaxError("program p() { x = (1 + 2; }", "1:25",
                    "expected ')' before ';'");
  expectSyntaxError("program p() { x = (a b); }", "1:22",
                    "expected ')', found 'b'");
}

TEST_CASE("every binary operator has its own kind and spelling", "[parse]") {
  struct Case {
    const char *op;
    BinaryOp kind;
  };
  const Case cases[] = {{"+", BinaryOp::Add}, {"-", BinaryOp::Sub},
                        {"*", BinaryOp::Mul}, {"/", BinaryOp::Div},
                        {"<", BinaryOp::Lt},  {"<=", BinaryOp::Le},
                        {">", BinaryOp::Gt},  {">=", BinaryOp::Ge},
                        {"==", BinaryOp::Eq}, {"!=", BinaryOp::Ne}};
  for (const Case &c : cases) {
    INFO(c.op);
    Parsed p = parse(std::string("program p() { x = a ") + c.op + " b; }");
    const Expr &e = p.value(0);
    REQUIRE(e.kind == Expr::Kind::Binary);
    CHECK(e.binaryOp == c.kind);
    CHECK(coconet::ast::spelling(e.binaryOp) == c.op);
  }
}

TEST_CASE("calls: positional and keyword arguments", "[parse]") {
  Parsed p = parse("program p() {\n"
                   "  a = f();\n"
                   "  b = allreduce(sum, g, axis=tp);\n"
                   "  c = sum(x * 2, dim=-1);\n"
                   "  d = f(g(h(1)), k=m(2));\n"
                   "}");
  INFO(p.diagnostics);
  REQUIRE(p.module);

  const Expr &a = p.value(0);
  CHECK(a.kind == Expr::Kind::Call);
  CHECK(a.text == "f");
  CHECK(a.operands.empty());
  CHECK(a.argKeys.empty());

  const Expr &b = p.value(1);
  CHECK(b.text == "allreduce");
  CHECK(Parsed::text(b.calleeRange) == "allreduce");
  CHECK(Parsed::text(b.range) == "allreduce(sum, g, axis=tp)");
  REQUIRE(b.operands.size() == 3);
  REQUIRE(b.argKeys.size() == 3);
  CHECK(b.argKeys[0].name.empty());
  CHECK(b.argKeys[1].name.empty());
  CHECK(b.argKeys[2].name == "axis");
  CHECK(p.at(b.argKeys[2].range.Start) == "3:25");
  CHECK(b.operands[0]->kind == Expr::Kind::Name);
  CHECK(b.operands[0]->text == "sum");
  CHECK(b.operands[2]->text == "tp");

  const Expr &c = p.value(2);
  REQUIRE(c.operands.size() == 2);
  CHECK(c.argKeys[1].name == "dim");
  CHECK(c.operands[0]->kind == Expr::Kind::Binary);
  CHECK(c.operands[1]->kind == Expr::Kind::Unary);

  CHECK(p.ast() ==
        "program p\n"
        "  stmt a = call f()\n"
        "  stmt b = call allreduce(name sum, name g, axis=name tp)\n"
        "  stmt c = call sum((name x * int 2), dim=(-int 1))\n"
        "  stmt d = call f(call g(call h(int 1)), k=call m(int 2))\n");
}

TEST_CASE("keyword argument order is sema's business, '=' is not an "
          "operator",
          "[parse]") {
  // A positional argument after a keyword one parses; sema reports it.
  Parsed p = parse("program p() { x = f(a, dim=1, 2); }");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  const Expr &call = p.value(0);
  REQUIRE(call.argKeys.size() == 3);
  CHECK(call.argKeys[0].name.empty());
  CHECK(call.argKeys[1].name == "dim");
  CHECK(call.argKeys[2].name.empty());

  expectSyntaxError("program p() { z = f(a=b=c); }", "1:24",
                    "expected ')', found '='");
  expectSyntaxError("program p() { x = f(1 + 2 = 3); }", "1:27",
                    "expected ')', found '='");
  expectSyntaxError("program p() { x = f(a b); }", "1:23",
                    "expected ')', found 'b'");
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

TEST_CASE("schedules: every directive form", "[parse][schedule]") {
  Parsed p = parse("schedule rs_ag for adam {\n"
                   "    (rs, ag) = split(gs);\n"
                   "    split(gs);\n"
                   "    reorder(ag, w1, w2);\n"
                   "    shard(m, v);\n"
                   "    fuse(g32, m1);\n"
                   "    overlap(a, b) chunks 4;\n"
                   "    apply other;\n"
                   "    noargs();\n"
                   "}\n"
                   "schedule empty for adam {}\n");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  REQUIRE(p.module->schedules.size() == 2);
  const auto &s = p.module->schedules[0];
  CHECK(s.name.name == "rs_ag");
  CHECK(s.program.name == "adam");
  REQUIRE(s.directives.size() == 8);

  const Directive &bind = s.directives[0];
  CHECK(bind.kind == Directive::Kind::Transform);
  CHECK(bind.transform.name == "split");
  REQUIRE(bind.results.size() == 2);
  CHECK(bind.results[0].name == "rs");
  CHECK(bind.results[1].name == "ag");
  REQUIRE(bind.args.size() == 1);
  CHECK(bind.args[0].name == "gs");
  CHECK_FALSE(bind.chunks);
  CHECK(Parsed::text(bind.range) == "(rs, ag) = split(gs);");

  CHECK(s.directives[1].results.empty());
  CHECK(s.directives[2].args.size() == 3);
  CHECK(s.directives[3].transform.name == "shard");

  const Directive &overlap = s.directives[5];
  CHECK(overlap.transform.name == "overlap");
  CHECK(overlap.args.size() == 2);
  REQUIRE(overlap.chunks);
  CHECK(*overlap.chunks == 4);
  CHECK(Parsed::text(overlap.chunksRange) == "chunks 4");
  CHECK(p.at(overlap.chunksRange.Start) == "7:19");

  const Directive &apply = s.directives[6];
  CHECK(apply.kind == Directive::Kind::Apply);
  CHECK(apply.transform.name == "other");
  CHECK(apply.args.empty());

  CHECK(s.directives[7].args.empty());
  CHECK(p.module->schedules[1].directives.empty());

  CHECK(p.ast() == "schedule rs_ag for adam\n"
                   "  directive (rs, ag) = split(gs)\n"
                   "  directive split(gs)\n"
                   "  directive reorder(ag, w1, w2)\n"
                   "  directive shard(m, v)\n"
                   "  directive fuse(g32, m1)\n"
                   "  directive overlap(a, b) chunks 4\n"
                   "  apply other\n"
                   "  directive noargs()\n"
                   "schedule empty for adam\n");
}

TEST_CASE("schedule syntax errors", "[parse][schedule]") {
  expectSyntaxError("schedule s for p { split(x) }", "1:28",
                    "expected ';' after directive");
  expectSyntaxError("schedule s for p { overlap(a, b) chunks; }", "1:40",
                    "expected an integer before ';'");
  expectSyntaxError("schedule s for p { overlap(a, b) chunks 4 }", "1:42",
                    "expected ';' after directive");
  expectSyntaxError("schedule s for p { apply(x); }", "1:25",
                    "expected an identifier, found '('");
  // Directive arguments are names, not expressions.
  expectSyntaxError("schedule s for p { split(x, 1); }", "1:29",
                    "expected an identifier or a file name in quotes, found "
                    "'1'");
  expectSyntaxError("schedule s for p { () = split(x); }", "1:21",
                    "expected an identifier before ')'");
  expectSyntaxError("schedule s for p { 3; }", "1:20",
                    "expected a directive or '}', found '3'");
  expectSyntaxError("schedule s p {}", "1:12", "expected 'for' before 'p'");
}

//===----------------------------------------------------------------------===//
// Lexical structure
//===----------------------------------------------------------------------===//

TEST_CASE("comments are skipped anywhere between tokens", "[parse][lex]") {
  Parsed p = parse("// header\n"
                   "program /* name: */ p(x: f32[N /* rows */] // trailing\n"
                   "  local) {\n"
                   "  /* a\n"
                   "     multi-line comment with * and / and // inside */\n"
                   "  y = x /* mid */ * 2; // y = 3; @ is fine here\n"
                   "  return y; /* @ $ */\n"
                   "}\n");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  CHECK(p.errors == 0);
  CHECK(p.ast() == "program p\n"
                   "  param x: f32[N] local\n"
                   "  stmt y = (name x * int 2)\n"
                   "  stmt return name y\n");
  // A line comment ends at the end of the line.
  CHECK(stmtOf("1 // c\n + 2") == "(int 1 + int 2)");
}

TEST_CASE("block comments do not nest", "[parse][lex]") {
  // The first "*/" closes the comment: "/* b" inside it is plain text...
  Parsed p = parse("program p() { x = 1 /* a /* b */; return x; }");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  CHECK(p.program().body.size() == 2);
  // ... and a second "*/" is left over as the tokens '*' and '/'.
  expectSyntaxError("program p() { x = 1 /* a /* b */ */; return x; }", "1:35",
                    "expected an expression, found '/'");
}

TEST_CASE("keywords cannot be used as names", "[parse][lex]") {
  expectSyntaxError("program local() {}", "1:9",
                    "expected an identifier, found 'local'");
  expectSyntaxError("program p(mesh: f32) {}", "1:15",
                    "expected '[', found ':'");
  expectSyntaxError("program p() { chunks = 1; }", "1:15",
                    "expected a statement or '}', found 'chunks'");
  // Names of operations are plain identifiers.
  Parsed p = parse("program allreduce(sum: f32) { matmul = sum; }");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  CHECK(p.program().name.name == "allreduce");
  CHECK(p.program().body[0].name.name == "matmul");
  // Identifiers: letters, digits and '_', not starting with a digit.
  CHECK(stmtOf("_a1 + B_2") == "(name _a1 + name B_2)");
}

TEST_CASE("CRLF line endings count lines correctly", "[parse][lex]") {
  Parsed p = parse("program p() {\r\n  x = 1;\r\n  y = x;\r\n}\r\n");
  INFO(p.diagnostics);
  REQUIRE(p.module);
  CHECK(p.at(p.program().body[1].name.range.Start) == "3:3");
  expectSyntaxError("program p() {\r\n  x = 1\r\n  return x;\r\n}", "2:8",
                    "expected ';' after statement");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_CASE("a missing a semicolon is reported just past the previous token",
          "[parse][error]") {
  expectSyntaxError("program p(g: f32[N] local) {\n"
                    "    s = allreduce(sum, g)\n"
                    "    return s;\n"
                    "}\n",
                    "2:26", "expected ';' after statement");
  expectSyntaxError("program p() { x = 1 }", "1:20",
                    "expected ';' after statement");
  expectSyntaxError("program p() { x = 1 + 2 3; }", "1:24",
                    "expected ';' after statement");
  expectSyntaxError("import a.b\nprogram p() {}", "1:11",
                    "expected ';' after import");

  // The caret points at the end of the previous token, and the whole
  // diagnostic is printed with the source line.
  Parsed p = parse("program p() { x = 1 }");
  CHECK(p.diagnostics == "test.coco:1:20: error: expected ';' after statement "
                         "[syntax-error]\n"
                         "program p() { x = 1 }\n"
                         "                   ^\n");
}

TEST_CASE("missing and wrong tokens name what was expected", "[parse][error]") {
  expectSyntaxError("program p(g: f32[N] local) {\n"
                    "    s = allreduce(sum, g;\n"
                    "    return s;\n"
                    "}\n",
                    "2:25", "expected ')' before ';'");
  expectSyntaxError("program p() { x = 1 + ; }", "1:23",
                    "expected an expression, found ';'");
  expectSyntaxError("program p() { x = 1; y }", "1:24",
                    "expected ':' or '=', found '}'");
  expectSyntaxError("program p() { x = 1; } garbage", "1:24",
                    "expected 'import', 'program' or 'schedule', found "
                    "'garbage'");
  expectSyntaxError("program p() { x = 1; }}", "1:23",
                    "expected 'import', 'program' or 'schedule', found '}'");
}

TEST_CASE("errors at the end of the file", "[parse][error]") {
  expectSyntaxError("program", "1:8",
                    "expected an identifier, found end of file");
  expectSyntaxError("program p", "1:10", "expected '(', found end of file");
  expectSyntaxError("program p() { x = 1;", "1:21",
                    "expected a statement or '}', found end of file");
}

TEST_CASE("invalid characters are reported with their location",
          "[parse][error][lex]") {
  expectSyntaxError("program p(g: f32[N] local) {\n"
                    "    s = g @ g;\n"
                    "    return s;\n"
                    "}\n",
                    "2:11", "invalid character '@'");
  expectSyntaxError("program p() { x = 1 $ 2; }", "1:21",
                    "invalid character '$'");
  expectSyntaxError("program p() { x = 1 \xC3\xA9 2; }", "1:21",
                    "invalid character U+00E9");
  expectSyntaxError("program p() { x = 1 \xFF 2; }", "1:21",
                    "invalid UTF-8 byte 0xFF");
  expectSyntaxError(llvm::StringRef("program p() { x = a; } \0 ", 25), "1:24",
                    "invalid character U+0000");
}

TEST_CASE("an unterminated block comment is reported at its start",
          "[parse][error][lex]") {
  expectSyntaxError("program p(g: f32[N] local) {\n"
                    "    /* never closed\n"
                    "    return g;\n"
                    "}\n",
                    "2:5", "unterminated block comment");
  expectSyntaxError("program p() { x = 1; } /* open", "1:24",
                    "unterminated block comment");
}

TEST_CASE("only the first syntax error of a file is reported",
          "[parse][error]") {
  // Two independent syntax errors: one message, for the first.
  Parsed p = parse("program p() {\n  x = 1\n  y = (2;\n}\n");
  CHECK_FALSE(p.module);
  CHECK(p.errors == 1);
  CHECK(count(p.diagnostics, "error:") == 1);
  CHECK(p.diagnostics.find("test.coco:2:8: error: expected ';' after "
                           "statement") != std::string::npos);

  // "First" is first in the source, whether the lexer or the parser found
  // the problem.
  expectSyntaxError("program p() { x = @ 1 }", "1:19", "invalid character '@'");
  expectSyntaxError("program p() { x = 1 } @", "1:20",
                    "expected ';' after statement");
  expectSyntaxError("program p() { x = 1 } /* open", "1:20",
                    "expected ';' after statement");
  // A syntax error hides integer literals that are too large.
  expectSyntaxError("program p() { x = 99999999999999999999 }", "1:39",
                    "expected ';' after statement");
}

TEST_CASE("integer literals that are too large: every one is reported",
          "[parse][error]") {
  Parsed p = parse("program p(g: f32[N] local) {\n"
                   "    s = g * 18446744073709551615;\n"
                   "    t = g * 18446744073709551616;\n"
                   "    u = 123456789012345678901234567890;\n"
                   "    return s;\n"
                   "}\n");
  CHECK_FALSE(p.module);
  CHECK(p.errors == 2);
  CHECK(p.diagnostics.find("test.coco:3:13: error: integer literal "
                           "'18446744073709551616' is too large "
                           "[integer-too-large]") != std::string::npos);
  CHECK(p.diagnostics.find("test.coco:4:9: error: integer literal "
                           "'123456789012345678901234567890' is too large "
                           "[integer-too-large]") != std::string::npos);
  CHECK(p.diagnostics.find("syntax-error") == std::string::npos);

  // Dimensions, slice dimensions and chunk counts must fit in an int64.
  Parsed q = parse("program p(g: f32[9223372036854775808] "
                   "sliced(9223372036854775808)) { return g; }\n"
                   "schedule s for p { overlap(a, b) chunks "
                   "99999999999999999999; }");
  CHECK_FALSE(q.module);
  CHECK(q.errors == 3);
  CHECK(count(q.diagnostics, "[integer-too-large]") == 3);
  CHECK(q.diagnostics.find("test.coco:1:18: error: integer literal "
                           "'9223372036854775808' is too large") !=
        std::string::npos);
  CHECK(q.diagnostics.find("test.coco:2:41: error:") != std::string::npos);

  Parsed r = parse("program p(g: f32[9223372036854775807]) { return g; }");
  INFO(r.diagnostics);
  REQUIRE(r.module);
  CHECK(r.program().params[0].type.dims[0].factors[0].value == INT64_MAX);
}

TEST_CASE("nesting deeper than 256 levels is refused, not a crash",
          "[parse][error]") {
  auto nested = [](const std::string &open, unsigned depth,
                   const std::string &close) {
    std::string s = "program p() { x = ";
    for (unsigned i = 0; i < depth; ++i)
      s += open;
    s += "1";
    for (unsigned i = 0; i < depth; ++i)
      s += close;
    return s + "; return x; }";
  };
  // 256 parentheses are fine; the 257th '(' (column 19 + 256) is one too
  // many, and it is reported without parsing.
  Parsed ok = parse(nested("(", 256, ")"));
  INFO(ok.diagnostics);
  CHECK(ok.module);
  CHECK(ok.errors == 0);
  expectSyntaxError(nested("(", 257, ")"), "1:275",
                    "expression nested too deeply");
  // Prefix operators count as levels too.
  CHECK(parse(nested("-", 200, "")).module);
  expectSyntaxError(nested("-", 300, ""), "1:275",
                    "expression nested too deeply");
  expectSyntaxError(nested("((", 5000, "))"), "1:275",
                    "expression nested too deeply");
  // Calls nest through the AST: reported at the outermost expression.
  CHECK(parse(nested("f(", 255, ")")).module);
  expectSyntaxError(nested("f(", 256, ")"), "1:19",
                    "expression nested too deeply");
}

TEST_CASE("a module is returned exactly when no error was reported",
          "[parse][error]") {
  // Deterministic mutations of a valid file: deleting, duplicating or
  // replacing single bytes must never crash or throw, and the parser
  // returns a module if and only if it reported nothing.
  const std::string base =
      "import optim.adam;\n"
      "program p(mesh [dp: D, tp: T], x: f16[4*H, N] sliced(1, tp) local,\n"
      "          s: f32) {\n"
      "  /* c */ y = -x * 2 + allreduce(sum, x, axis=tp) / (s - 1.5e-3);\n"
      "  return y, y < 3; // done\n"
      "}\n"
      "schedule q for p { (a, b) = split(y); overlap(a, b) chunks 4; "
      "apply r; }\n";
  REQUIRE(parse(base).module);
  const char replacements[] = {'(', ')', ';', '*', '/',  '@',    '9',
                               'x', ' ', '.', '=', '\0', '\xC3', ','};
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  unsigned failures = 0;
  for (int i = 0; i < 300; ++i) {
    std::string text = base;
    size_t pos = next() % text.size();
    switch (next() % 3) {
    case 0:
      text.erase(pos, 1);
      break;
    case 1:
      text.insert(pos, 1, text[pos]);
      break;
    default:
      text[pos] = replacements[next() % sizeof(replacements)];
      break;
    }
    Parsed p = parse(text);
    INFO(text);
    INFO(p.diagnostics);
    CHECK((p.module != nullptr) == (p.errors == 0));
    if (!p.module) {
      ++failures;
      CHECK(p.diagnostics.find("error:") != std::string::npos);
    }
  }
  CHECK(failures > 0); // the mutations do break the file
}

TEST_CASE("source ranges cover whole constructs", "[parse]") {
  Parsed p = parse("program prog(x: f32[N] local) {\n"
                   "  y = sum(x, dim=0) + 1;\n"
                   "}\n"
                   "schedule s for prog { fuse(y); }\n");
  INFO(p.diagnostics);
  const auto &prog = p.program();
  CHECK(p.at(prog.name.range.Start) == "1:9");
  CHECK(Parsed::text(prog.name.range) == "prog");
  CHECK(Parsed::text(prog.params[0].type.range) == "f32[N] local");
  CHECK(Parsed::text(prog.params[0].type.dtype.range) == "f32");
  const Expr &add = p.value(0);
  CHECK(Parsed::text(add.range) == "sum(x, dim=0) + 1");
  CHECK(Parsed::text(add.operands[0]->range) == "sum(x, dim=0)");
  CHECK(Parsed::text(add.operands[0]->operands[1]->range) == "0");
  CHECK(p.at(add.operands[1]->range.Start) == "2:23");
  const auto &sched = p.module->schedules.at(0);
  CHECK(Parsed::text(sched.range) == "schedule s for prog { fuse(y); }");
  CHECK(p.at(sched.program.range.Start) == "4:16");
  CHECK(Parsed::text(sched.directives.at(0).args[0].range) == "y");
  CHECK(p.at(prog.range.Start) == "1:1");
  CHECK(p.at(prog.range.End) == "3:2");
}
