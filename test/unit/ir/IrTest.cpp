//===- IrTest.cpp - types, printer and verifier of the typed IR -----------===//
//
// Symbolic dimensions, layout printing, the IR printer's stable form, and
// every invariant the verifier enforces.
//
//===----------------------------------------------------------------------===//

#include "ir/Describe.h"
#include "ir/Program.h"

#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

using namespace coconet::ir;

TEST_CASE("dimension products are canonical", "[ir][types]") {
  Dim a = Dim::constant(4) * Dim::symbol("H");
  Dim b = Dim::symbol("H") * Dim::constant(4);
  CHECK(a == b);
  CHECK(a.str() == "4*H");
  CHECK((Dim::symbol("S") * Dim::symbol("B")).str() == "B*S");
  CHECK(Dim::constant(1024).str() == "1024");
  CHECK(a != Dim::symbol("H"));
  DimEnv env{{"H", 8}};
  CHECK(a.evaluate(env) == 32);
  CHECK_FALSE(Dim::symbol("N").evaluate(env));
  DimEnv huge{{"H", int64_t(1) << 62}};
  CHECK_FALSE(a.evaluate(huge)); // overflow is not a value
  CHECK(a.divideBy(2)->str() == "2*H");
  CHECK_FALSE(a.divideBy(3));
}

TEST_CASE("element types parse and print", "[ir][types]") {
  for (const char *name :
       {"f16", "bf16", "f32", "f64", "i32", "i64", "u64", "bool"}) {
    auto d = parseDType(name);
    REQUIRE(d);
    CHECK(dtypeName(*d) == name);
  }
  CHECK_FALSE(parseDType("f8"));
  CHECK(dtypeSize(DType::BF16) == 2);
  CHECK(isFloat(DType::BF16));
  CHECK_FALSE(isFloat(DType::U64));
}

TEST_CASE("layouts print as source syntax", "[ir][types]") {
  Mesh world = Mesh::world();
  CHECK(Layout::replicated(1).str(world) == "replicated");
  CHECK(Layout::local(1).str(world) == "local");
  CHECK(Layout(1, {AxisState::Sliced, 2}).str(world) == "sliced(2)");
  Mesh mesh;
  mesh.isImplicit = false;
  mesh.axes = {{"pp", "PP"}, {"tp", "T"}};
  Layout l(2);
  l[1] = {AxisState::Sliced, 0};
  CHECK(l.str(mesh) == "replicated(pp) sliced(0, tp)");
  CHECK(l.slicesDim(0));
  CHECK_FALSE(l.slicesDim(1));
}

namespace {
/// A two-stage program: a local parameter and its allreduce.
struct Small {
  Program p;
  Stage *g;
  Stage *s;
  Small() {
    p.name = "small";
    p.mesh = Mesh::world();
    TensorType t{DType::F32, {Dim::symbol("N")}, Layout::local(1), {}};
    g = p.addStage(StageKind::Param, "g", t, {}, {});
    TensorType r = t;
    r.layout = Layout::replicated(1);
    s = p.addStage(StageKind::AllReduce, "s", r, {g}, {});
    p.addResult(s);
  }
  std::string print() {
    std::string out;
    llvm::raw_string_ostream os(out);
    printProgram(p, os);
    return out;
  }
};
} // namespace

TEST_CASE("the printer's form is stable", "[ir][printer]") {
  Small s;
  CHECK(s.print() == "program small {\n"
                     "  %0 g : f32[N] local = param 0\n"
                     "  %1 s : f32[N] replicated = allreduce(sum, %0) over "
                     "world\n"
                     "  results %1\n"
                     "}\n");
  CHECK(verifyProgram(s.p).empty());
}

TEST_CASE("the verifier rejects a use before definition", "[ir][verifier]") {
  Small s;
  s.g->operands.push_back(s.s);
  CHECK(verifyProgram(s.p).find("used before it is defined") !=
        std::string::npos);
}

TEST_CASE("the verifier rejects a layout with the wrong number of axes",
          "[ir][verifier]") {
  Small s;
  s.s->type.layout = Layout::replicated(2);
  CHECK(verifyProgram(s.p).find("layout has 2 axes") != std::string::npos);
}

TEST_CASE("the verifier rejects a sliced dimension out of range",
          "[ir][verifier]") {
  Small s;
  s.s->type.layout = Layout(1, {AxisState::Sliced, 1});
  CHECK(verifyProgram(s.p).find("out of range") != std::string::npos);
}

TEST_CASE("the verifier checks operand counts", "[ir][verifier]") {
  Small s;
  s.s->operands.clear();
  CHECK(verifyProgram(s.p).find("expects 1 operands") != std::string::npos);
}

TEST_CASE("the verifier checks allgather and reducescatter layouts",
          "[ir][verifier]") {
  Small s;
  TensorType t = s.s->type;
  Stage *ag = s.p.addStage(StageKind::AllGather, "ag", t, {s.s}, {});
  (void)ag;
  CHECK(verifyProgram(s.p).find("operands break the layout rule of "
                                "allgather: needs a sliced input on axis 0") !=
        std::string::npos);
  Small r;
  TensorType sliced = r.g->type;
  sliced.layout = Layout(1, {AxisState::Sliced, 0});
  Stage *rs = r.p.addStage(StageKind::ReduceScatter, "rs", sliced, {r.g}, {});
  rs->dim = 0;
  CHECK(verifyProgram(r.p).empty());
  rs->type.layout = Layout::replicated(1);
  CHECK(verifyProgram(r.p).find("layout replicated, but the layout rule of "
                                "reducescatter gives sliced(0)") !=
        std::string::npos);
}

TEST_CASE("the verifier holds every kind to its layout rule",
          "[ir][verifier]") {
  // An elementwise stage of a local and a replicated value is local.
  Small s;
  ScalarExpr read;
  read.op = ScalarOp::Operand;
  const ScalarExpr *body = s.p.addExpr(read);
  TensorType t = s.g->type;
  Stage *e = s.p.addStage(StageKind::Elementwise, "e", t, {s.g, s.s}, {});
  e->body = body;
  CHECK(verifyProgram(s.p).empty());
  e->type.layout = Layout::replicated(1);
  CHECK(verifyProgram(s.p).find("layout replicated, but the layout rule of "
                                "elementwise gives local") !=
        std::string::npos);
  // A sum of a sliced value is a per-rank partial value: local.
  Small r;
  TensorType sliced = r.g->type;
  sliced.layout = Layout(1, {AxisState::Sliced, 0});
  Stage *rs = r.p.addStage(StageKind::ReduceScatter, "rs", sliced, {r.g}, {});
  rs->dim = 0;
  TensorType scalar{DType::F32, {}, Layout::replicated(1), {}};
  Stage *sum = r.p.addStage(StageKind::Reduction, "sum", scalar, {rs}, {});
  CHECK(verifyProgram(r.p).find("the layout rule of reduction gives local") !=
        std::string::npos);
  sum->type.layout = Layout::local(1);
  CHECK(verifyProgram(r.p).empty());
}

TEST_CASE("the verifier checks bodies and updates", "[ir][verifier]") {
  Small s;
  ScalarExpr e;
  e.op = ScalarOp::Operand;
  e.operandIndex = 3;
  Stage *ew = s.p.addStage(StageKind::Elementwise, "e", s.s->type, {s.s}, {});
  ew->body = s.p.addExpr(e);
  CHECK(verifyProgram(s.p).find("body reads operand 3") != std::string::npos);
  e.operandIndex = 0;
  ew->body = s.p.addExpr(e);
  CHECK(verifyProgram(s.p).empty());
  ew->updates = s.g; // replicated value into a local parameter
  CHECK(verifyProgram(s.p).find("changes the parameter's type") !=
        std::string::npos);
}

TEST_CASE("every view describes a stage the same way", "[ir][describe]") {
  Program p;
  p.name = "d";
  p.mesh.isImplicit = false;
  p.mesh.axes = {{"dp", "D"}, {"tp", "T"}};
  TensorType local{DType::F32, {Dim::symbol("N")}, Layout::local(2), {}};
  Stage *x = p.addStage(StageKind::Param, "x", local, {}, {});
  x->sharded = true;
  TensorType scalar{DType::F32, {}, Layout::local(2), {}};
  Stage *r = p.addStage(StageKind::Reduction, "r", scalar, {x}, {});
  r->reduction = ReductionKind::Norm;
  Stage *s = p.addStage(StageKind::Reduction, "s", local, {x}, {});
  s->dim = 0;
  Stage *rs = p.addStage(StageKind::ReduceScatter, "rs", local, {x}, {});
  rs->reduceOp = ReduceOp::Max;
  rs->axis = 1;
  rs->dim = 0;
  Stage *b = p.addStage(StageKind::Broadcast, "b", local, {x}, {});
  b->axis = -1;
  b->root = 2;
  Stage *sr = p.addStage(StageKind::SendRecv, "sr", local, {x}, {});
  sr->offset = -1;
  auto text = [&](const Stage *stage) {
    return operationText(describeStage(p, *stage));
  };
  CHECK(text(x) == "param 0");
  CHECK(describeStage(p, *x).sharded);
  CHECK(text(r) == "reduction norm");
  CHECK(text(s) == "reduction sum(dim=0)");
  CHECK(text(rs) == "reducescatter(max, dim=0) over tp");
  CHECK(text(b) == "broadcast(root=2) over all");
  CHECK(text(sr) == "sendrecv(offset=-1) over dp");
  CHECK(describeStage(p, *rs).attributes() == "max, dim=0");
  CHECK(describeKind(*r) == "a reduction (norm)");
  CHECK(describeKind(*b) == "a broadcast");
  CHECK(describeKind(*x) == "a parameter");
  // The IR printer lays out the same description with the operands.
  std::string printed;
  llvm::raw_string_ostream os(printed);
  printProgram(p, os);
  CHECK(printed.find("= reducescatter(max, %0, dim=0) over tp") !=
        std::string::npos);
  CHECK(printed.find("= broadcast(%0, root=2) over all") != std::string::npos);
  CHECK(printed.find("= reduction sum(%0, dim=0)") != std::string::npos);
  CHECK(printed.find("= param 0 sharded") != std::string::npos);
}
