//===- Report.cpp - what a scheduled program launches and moves -----------===//
//
// The cost model (docs/report.md has the long form). Everything is per rank
// and per step, as polynomials in the size names.
//
// - Launches, in program order: a kernel (fuse group) counts once, at its
//   first member; an unfused computation stage is a kernel of its own; a
//   matmul is a launch with FLOPs; an unfused communication stage is a
//   collective; parameters launch nothing.
// - Elements a rank holds: the global shape with every dimension that is
//   sliced over mesh axes of size names A, B divided by A*B; replicated and
//   local dimensions count in full. Bytes = elements * dtype size.
// - Memory of a launch: it reads every operand that comes from outside it
//   once, and writes every member that is used outside it, is a result or
//   updates a parameter (intermediates of a kernel stay in registers). An
//   elementwise stage reads of an operand only the block its own (sliced)
//   result needs, and of a broadcast operand (fewer dimensions) only that
//   operand's elements. A collective reads its input and writes its output.
// - Network (ring algorithms; P the size of the collective's axis, the
//   product of all axes for `over all`; n the per-rank bytes of the input,
//   of the output for allgather): allreduce sends 2(P-1)/P*n, reducescatter,
//   allgather and alltoall (P-1)/P*n, broadcast, reduce (pipelined) and
//   sendrecv n.
//   A rank receives as much as it sends. A fused collective kernel sends
//   what its collectives send; its memory is only what crosses its boundary.
// - FLOPs: 2*M*N*K per rank for a matmul [..., M, K] x [..., K, N] (the
//   rank's block of the result times its part of K); other stages count 0.
//
//===----------------------------------------------------------------------===//

#include "analysis/Report.h"

#include "analysis/Polynomial.h"
#include "ir/AlgorithmTable.h"
#include "ir/Describe.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <vector>

#include <cmath>
#include <string>
#include <vector>

namespace coconet::analysis {
namespace {

using ir::Stage;
using ir::StageKind;

/// Per dimension of a value, the mesh axes (bit a for axis a) that cut the
/// block a rank reads or holds.
using AxisMasks = llvm::SmallVector<uint64_t, 4>;

/// The bit of axis `a` (no bit beyond 64 axes: such a mesh is not sliced).
uint64_t axisBit(unsigned a) { return a < 64 ? uint64_t(1) << a : 0; }

using Kind = LaunchCost::Kind;

class LaunchCounter {
public:
  explicit LaunchCounter(const ir::Program &program);
  /// The launches of one step, in program order; a fused collective for
  /// which `sequential` holds as its collectives and kernel (its fallback
  /// form).
  std::vector<LaunchCost>
  launches(llvm::function_ref<bool(const ir::Kernel &)> sequential) const;

private:
  Monomial axisSizes(int axis) const;
  AxisMasks ownMasks(const Stage &value) const;
  AxisMasks readMasks(const Stage &reader, const Stage &operand) const;
  Polynomial extent(const ir::Dim &dim, uint64_t mask) const;
  Polynomial elements(const Stage &value, const AxisMasks &masks) const;
  Polynomial bytes(const Stage &value, const AxisMasks &masks) const;
  Polynomial bytes(const Stage &value) const {
    return bytes(value, ownMasks(value));
  }
  Polynomial network(const Stage &stage) const;
  Polynomial matmulFlops(const Stage &stage) const;
  Polynomial matmulPacked(const Stage &stage) const;
  void addCompute(const Stage &stage, LaunchCost &launch) const;
  void addMemory(llvm::ArrayRef<const Stage *> members,
                 LaunchCost &launch) const;
  const Stage *gatheredInto(const Stage &value) const;
  LaunchCost makeLaunch(llvm::ArrayRef<const Stage *> members,
                        std::string description) const;
  std::string typeText(const Stage &stage) const {
    return stage.type.str(program.mesh);
  }
  std::string describe(const Stage &stage) const;
  std::string describe(const ir::Kernel &kernel, unsigned index) const;
  std::string overlapNote(llvm::ArrayRef<const Stage *> members) const;

  const ir::Program &program;
  llvm::DenseMap<const Stage *, llvm::SmallVector<const Stage *, 4>> users;
  llvm::DenseSet<const Stage *> results;
};

LaunchCounter::LaunchCounter(const ir::Program &program) : program(program) {
  for (const auto &s : program.getStages())
    for (const Stage *o : s->operands) {
      auto &u = users[o];
      if (u.empty() || u.back() != s.get())
        u.push_back(s.get());
    }
  for (const Stage *r : program.getResults())
    results.insert(r);
}

/// The size names of `axis` (every axis for -1) as a monomial.
Monomial LaunchCounter::axisSizes(int axis) const {
  Monomial m;
  for (unsigned a = 0; a < program.mesh.size(); ++a)
    if (axis < 0 || static_cast<unsigned>(axis) == a)
      ++m[program.mesh.axes[a].size];
  return m;
}

AxisMasks LaunchCounter::ownMasks(const Stage &value) const {
  AxisMasks masks(value.type.rank(), 0);
  const ir::Layout &layout = value.type.layout;
  for (unsigned a = 0; a < layout.size(); ++a)
    if (layout[a].state == ir::AxisState::Sliced && layout[a].dim >= 0 &&
        static_cast<unsigned>(layout[a].dim) < masks.size())
      masks[layout[a].dim] |= axisBit(a);
  return masks;
}

/// What `reader` reads of `operand`: its own block, cut further, for an
/// elementwise reader, along the dimensions its result is sliced on.
AxisMasks LaunchCounter::readMasks(const Stage &reader,
                                   const Stage &operand) const {
  AxisMasks masks = ownMasks(operand);
  if (reader.kind != StageKind::Elementwise)
    return masks;
  const ir::TensorType &out = reader.type;
  int shift =
      static_cast<int>(out.rank()) - static_cast<int>(operand.type.rank());
  for (unsigned a = 0; a < out.layout.size(); ++a) {
    if (out.layout[a].state != ir::AxisState::Sliced)
      continue;
    int dim = out.layout[a].dim - shift;
    if (dim >= 0 && static_cast<unsigned>(dim) < masks.size() &&
        operand.type.shape[dim] == out.shape[out.layout[a].dim])
      masks[dim] |= axisBit(a);
  }
  return masks;
}

/// A dimension divided by the sizes of the axes in `mask`.
Polynomial LaunchCounter::extent(const ir::Dim &dim, uint64_t mask) const {
  Monomial divisor;
  for (unsigned a = 0; a < program.mesh.size(); ++a)
    if (mask & axisBit(a))
      --divisor[program.mesh.axes[a].size];
  return Polynomial::fromDim(dim) * Polynomial::term(1, divisor);
}

Polynomial LaunchCounter::elements(const Stage &value,
                                   const AxisMasks &masks) const {
  Polynomial count(1);
  for (unsigned d = 0; d < value.type.rank(); ++d)
    count = count * extent(value.type.shape[d], masks[d]);
  return count;
}

Polynomial LaunchCounter::bytes(const Stage &value,
                                const AxisMasks &masks) const {
  return elements(value, masks) *
         Polynomial(static_cast<int64_t>(ir::dtypeSize(value.type.dtype)));
}

/// Bytes one rank sends (and receives) for a communication stage.
Polynomial LaunchCounter::network(const Stage &stage) const {
  if (!ir::isCommunication(stage.kind) || stage.operands.empty())
    return {};
  Polynomial n =
      bytes(stage.kind == StageKind::AllGather ? stage : *stage.operands[0]);
  Monomial inverse;
  for (const auto &[name, exp] : axisSizes(stage.axis))
    inverse[name] = -exp;
  // An algorithm file: the most chunks one rank sends over its steps, each
  // n / (R k) (the axis's size is R, which the run checks).
  if (stage.table) {
    const ir::AlgorithmTable &t = *stage.table;
    std::vector<int64_t> sent(t.ranks, 0);
    for (const auto &step : t.steps)
      for (const ir::AlgorithmTable::Transfer &x : step)
        if (x.src < t.ranks)
          ++sent[x.src];
    const int64_t most =
        sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end());
    return n *
           Polynomial(Rational(
               most, std::max<int64_t>(1, int64_t{t.ranks} * t.chunksPerRank)));
  }
  // (P-1)/P * n = n - n/P.
  Polynomial ring = n - n * Polynomial::term(1, inverse);
  switch (stage.kind) {
  case StageKind::AllReduce:
    return ring * Polynomial(2);
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::AllToAll:  // all but its own block of its input
  case StageKind::AllToAllV: // as many, where the routing is even
    return ring;
  case StageKind::Broadcast:
  case StageKind::Reduce:
  case StageKind::SendRecv:
  case StageKind::Param:
  case StageKind::Elementwise:
  case StageKind::Reduction:
  case StageKind::MatMul:
  case StageKind::Transpose:
  case StageKind::Reshape:
  case StageKind::LayerNorm:
  case StageKind::RmsNorm:
  case StageKind::TopK:
  case StageKind::CumSum:
  case StageKind::Gather:
  case StageKind::Scatter:
  case StageKind::GroupedMatMul:
    break;
  }
  return n;
}

/// 2 * (the rank's block of the result) * (the rank's part of K).
Polynomial LaunchCounter::matmulFlops(const Stage &stage) const {
  if (stage.kind != StageKind::MatMul || stage.operands.empty() ||
      stage.operands[0]->type.rank() == 0)
    return {};
  const Stage &lhs = *stage.operands[0];
  Polynomial k = extent(lhs.type.shape.back(), ownMasks(lhs).back());
  return Polynomial(2) * elements(stage, ownMasks(stage)) * k;
}

/// The elements of a matmul's right-hand operand this rank's call reads:
/// its whole block (LaunchCost::packed).
Polynomial LaunchCounter::matmulPacked(const Stage &stage) const {
  if (stage.kind != StageKind::MatMul || stage.operands.size() != 2)
    return {};
  const Stage &rhs = *stage.operands[1];
  return elements(rhs, ownMasks(rhs));
}

/// Whether `op` is a call of the math library where the exact CPU target
/// evaluates it (sqrt and rsqrt are instructions; abs and relu are
/// comparisons).
static bool isLibmCall(ir::ScalarOp op) {
  static constexpr ir::ScalarOp kCalls[] = {
      ir::ScalarOp::Exp,     ir::ScalarOp::Log,  ir::ScalarOp::Tanh,
      ir::ScalarOp::Erf,     ir::ScalarOp::Gelu, ir::ScalarOp::Silu,
      ir::ScalarOp::Sigmoid, ir::ScalarOp::Pow};
  return llvm::is_contained(kCalls, op);
}

/// Whether the targets compute `e` in float and round it to its f16 or bf16
/// type: arithmetic, math, casts and dropout do; operands, constants,
/// negation (exact), comparisons and selects (of values already rounded) do
/// not.
static bool roundsToNarrowFloat(const ir::ScalarExpr &e) {
  if (e.dtype != ir::DType::F16 && e.dtype != ir::DType::BF16)
    return false;
  switch (ir::scalarOpClass(e.op)) {
  case ir::ScalarOpClass::Cast:
    return !e.args.empty() && e.args[0]->dtype != e.dtype;
  case ir::ScalarOpClass::Arith:
  case ir::ScalarOpClass::Pow:
  case ir::ScalarOpClass::MinMax:
  case ir::ScalarOpClass::FloatMath:
  case ir::ScalarOpClass::NumMath:
  case ir::ScalarOpClass::Dropout:
    return true;
  case ir::ScalarOpClass::Leaf:
  case ir::ScalarOpClass::Neg:
  case ir::ScalarOpClass::Compare:
  case ir::ScalarOpClass::Select:
    return false;
  }
  return false;
}

/// The ordered sums, random draws, math library calls and roundings of
/// `stage` (LaunchCost::ordered, drawn, libm, rounded), over the rank's own
/// block of its input.
void LaunchCounter::addCompute(const Stage &stage, LaunchCost &launch) const {
  if (stage.kind == StageKind::Reduction && !stage.operands.empty()) {
    // max and min keep no running sum: any order gives the same bits.
    if (stage.reduction == ir::ReductionKind::Max ||
        stage.reduction == ir::ReductionKind::Min)
      return;
    const Stage &in = *stage.operands[0];
    launch.ordered += elements(in, readMasks(stage, in));
    launch.orderedChains += elements(stage, ownMasks(stage));
    return;
  }
  if ((stage.kind == StageKind::LayerNorm ||
       stage.kind == StageKind::RmsNorm) &&
      !stage.operands.empty() && stage.type.rank() > 0) {
    // Over the last dimension: one sum a row (two for a layer norm: the
    // mean, then the variance).
    const Stage &in = *stage.operands[0];
    const Polynomial passes(stage.kind == StageKind::LayerNorm ? 2 : 1);
    launch.ordered += passes * elements(in, readMasks(stage, in));
    const AxisMasks own = ownMasks(stage);
    Polynomial rows(1);
    for (unsigned d = 0; d + 1 < stage.type.rank(); ++d)
      rows = rows * extent(stage.type.shape[d], own[d]);
    launch.orderedChains += passes * rows;
    return;
  }
  if (stage.kind != StageKind::Elementwise || !stage.body)
    return;
  const auto body = ir::postOrder(stage.body);
  if (llvm::any_of(body, [](const ir::ScalarExpr *e) {
        return e->op == ir::ScalarOp::Dropout;
      }))
    launch.drawn += elements(stage, ownMasks(stage));
  // A call whose operands are all scalars is made once, before the loop
  // over the elements (the targets hoist it): only the others count.
  llvm::DenseSet<const ir::ScalarExpr *> perElement;
  for (const ir::ScalarExpr *e : body) {
    bool varies = e->op == ir::ScalarOp::Dropout;
    if (e->op == ir::ScalarOp::Operand)
      varies = e->operandIndex < stage.operands.size() &&
               stage.operands[e->operandIndex]->type.rank() > 0;
    for (const ir::ScalarExpr *a : e->args)
      varies |= perElement.contains(a);
    if (varies)
      perElement.insert(e);
  }
  const auto calls = llvm::count_if(body, [&](const ir::ScalarExpr *e) {
    return isLibmCall(e->op) && ir::isFloat(e->dtype) && perElement.contains(e);
  });
  if (calls > 0)
    launch.libm += Polynomial(static_cast<int64_t>(calls)) *
                   elements(stage, ownMasks(stage));
  const auto roundings = llvm::count_if(body, [&](const ir::ScalarExpr *e) {
    return roundsToNarrowFloat(*e) && perElement.contains(e);
  });
  if (roundings > 0)
    launch.rounded += Polynomial(static_cast<int64_t>(roundings)) *
                      elements(stage, ownMasks(stage));
}

/// The allgather that gathers `value` in place into the parameter it
/// updates, as the lowering places it (lower/Buffers.cpp): `value` is an
/// elementwise result only that allgather reads, sliced along dimension 0
/// over the gathered axis alone, of a parameter not returned and read by
/// `value`'s own kernel alone; it then lives in the rank's block of the
/// parameter, and the allgather moves only the others' blocks. Null
/// otherwise.
const Stage *LaunchCounter::gatheredInto(const Stage &value) const {
  if (value.kind != StageKind::Elementwise || value.type.rank() == 0 ||
      results.contains(&value))
    return nullptr;
  auto it = users.find(&value);
  if (it == users.end() || it->second.size() != 1 ||
      it->second[0]->kind != StageKind::AllGather)
    return nullptr;
  const Stage *ag = it->second[0];
  const Stage *p = ag->updates;
  if (!p || ag->axis < 0 || results.contains(p))
    return nullptr;
  if (value.type.layout.slicingAxes(0) !=
          llvm::SmallVector<unsigned, 2>{static_cast<unsigned>(ag->axis)} ||
      !p->type.layout.slicingAxes(0).empty())
    return nullptr;
  const ir::Kernel *kernel = program.kernelOf(&value);
  if (auto readers = users.find(p); readers != users.end())
    for (const Stage *r : readers->second)
      if (r != &value && (!kernel || program.kernelOf(r) != kernel))
        return nullptr;
  return ag;
}

/// Reads of the operands from outside `members`, writes of the members
/// that leave it. An operand read by several members is read once, as the
/// largest block any of them needs.
void LaunchCounter::addMemory(llvm::ArrayRef<const Stage *> members,
                              LaunchCost &launch) const {
  llvm::DenseSet<const Stage *> inside(members.begin(), members.end());
  // An allgather into the block its input already holds: the others'
  // blocks come in, the rank's own stays.
  if (members.size() == 1 && members[0]->kind == StageKind::AllGather &&
      !members[0]->operands.empty() &&
      gatheredInto(*members[0]->operands[0]) == members[0]) {
    const Stage &ag = *members[0];
    const Polynomial others = bytes(ag) - bytes(*ag.operands[0]);
    launch.read += others;
    launch.write += others;
    launch.touched.push_back({ag.updates, bytes(ag)});
    return;
  }
  llvm::SmallVector<const Stage *, 8> outside;
  llvm::DenseMap<const Stage *, AxisMasks> masks;
  for (const Stage *m : members)
    for (const Stage *o : m->operands) {
      if (inside.contains(o))
        continue;
      AxisMasks view = readMasks(*m, *o);
      auto [it, inserted] = masks.try_emplace(o, view);
      if (inserted) {
        outside.push_back(o);
        continue;
      }
      for (unsigned d = 0; d < view.size(); ++d)
        it->second[d] &= view[d];
    }
  for (const Stage *o : outside) {
    Polynomial read = bytes(*o, masks[o]);
    launch.read += read;
    launch.touched.push_back({o, read});
  }
  for (const Stage *m : members) {
    bool leaves = m->updates || results.contains(m);
    auto it = users.find(m);
    if (it != users.end())
      for (const Stage *u : it->second)
        leaves |= !inside.contains(u);
    if (!leaves)
      continue;
    Polynomial written = bytes(*m);
    launch.write += written;
    // An update writes its parameter's buffer, as does a value gathered in
    // place by a later allgather (its block of the parameter); read here,
    // its lines are in the cache when the store comes.
    const Stage *buffer = m->updates ? m->updates : m;
    if (const Stage *ag = gatheredInto(*m); ag && !inside.contains(ag))
      buffer = ag->updates;
    // Read here or not, the buffer holds all the bytes written (an
    // allgather into its parameter writes the whole of what it read a
    // block of).
    launch.touched.push_back({buffer, written});
    if (!masks.count(buffer))
      launch.fresh += written;
  }
}

LaunchCost LaunchCounter::makeLaunch(llvm::ArrayRef<const Stage *> members,
                                     std::string description) const {
  LaunchCost launch;
  launch.description = std::move(description);
  addMemory(members, launch);
  bool communicates = false, computes = false, multiplies = false;
  for (const Stage *m : members) {
    launch.members.push_back(m);
    if (ir::isCommunication(m->kind) && !m->operands.empty())
      launch.transfers.push_back(
          {m, bytes(m->kind == StageKind::AllGather ? *m : *m->operands[0])});
    communicates |= ir::isCommunication(m->kind);
    computes |= !ir::isCommunication(m->kind);
    multiplies |= m->kind == StageKind::MatMul;
    launch.sent += network(*m);
    launch.flops += matmulFlops(*m);
    launch.packed += matmulPacked(*m);
    launch.batched |= m->kind == StageKind::MatMul && m->type.rank() > 2;
    if (m->kind == StageKind::MatMul && m->type.rank() >= 2) {
      const AxisMasks own = ownMasks(*m);
      const unsigned r = m->type.rank();
      launch.matmulRows = extent(m->type.shape[r - 2], own[r - 2]);
      launch.matmulCols = extent(m->type.shape[r - 1], own[r - 1]);
      launch.matmulBatch = Polynomial(1);
      for (unsigned d = 0; d + 2 < r; ++d)
        launch.matmulBatch =
            launch.matmulBatch * extent(m->type.shape[d], own[d]);
    }
    addCompute(*m, launch);
  }
  launch.kind = multiplies                 ? Kind::Matmul
                : communicates && computes ? Kind::FusedCollective
                : communicates             ? Kind::Collective
                                           : Kind::Kernel;
  if (launch.kind == Kind::FusedCollective)
    for (const Stage *m : members) {
      if ((m->kind == StageKind::ReduceScatter ||
           m->kind == StageKind::AllReduce) &&
          m->operands[0]->isParam())
        launch.staging += Polynomial(2) * bytes(*m->operands[0]);
      if (m->kind != StageKind::AllGather)
        continue;
      if (m->updates || results.contains(m))
        launch.staging += Polynomial(2) * bytes(*m);
      const bool readOld =
          m->updates && llvm::any_of(members, [&](const Stage *o) {
            return llvm::is_contained(o->operands, m->updates);
          });
      if (readOld)
        launch.staging += Polynomial(2) * bytes(*m);
    }
  launch.description += overlapNote(members);
  return launch;
}

std::string LaunchCounter::describe(const Stage &stage) const {
  std::string in =
      stage.operands.empty() ? "" : typeText(*stage.operands[0]) + " -> ";
  const ir::StageDescription d = ir::describeStage(program, stage);
  if (ir::isCommunication(stage.kind)) {
    std::string attrs = d.attributes();
    return d.operation + " " + stage.name +
           (attrs.empty() ? "" : " (" + attrs + ")") + " over " + d.axis +
           ": " + in + typeText(stage);
  }
  if (stage.kind == StageKind::MatMul && stage.operands.size() == 2)
    return "matmul " + stage.name + ": " + typeText(*stage.operands[0]) +
           " x " + typeText(*stage.operands[1]) + " -> " + typeText(stage);
  if (stage.kind == StageKind::Elementwise)
    in.clear();
  return "kernel " + stage.name + " (" + ir::operationText(d) + "): " + in +
         typeText(stage);
}

std::string LaunchCounter::describe(const ir::Kernel &kernel,
                                    unsigned index) const {
  std::string s =
      "kernel k" + std::to_string(index) +
      (kernel.isFusedCollective() ? " (fused collective):" : " (elementwise):");
  for (const Stage *m : kernel.stages)
    s += " " + m->name;
  return s;
}

/// ", overlapped with y in 4 chunks" for each overlap pair with a member.
std::string
LaunchCounter::overlapNote(llvm::ArrayRef<const Stage *> members) const {
  std::string note;
  bool named = members.size() > 1;
  for (const ir::Overlap &o : program.overlaps)
    for (const Stage *m : members) {
      const Stage *other = m == o.consumer   ? o.producer
                           : m == o.producer ? o.consumer
                                             : nullptr;
      if (!other)
        continue;
      note += std::string(", ") + (named ? m->name + " " : "") +
              "overlapped with " + other->name + " in " +
              std::to_string(o.chunks) + " chunks";
    }
  return note;
}

std::vector<LaunchCost> LaunchCounter::launches(
    llvm::function_ref<bool(const ir::Kernel &)> sequential) const {
  std::vector<LaunchCost> out;
  for (const auto &ptr : program.getStages()) {
    const Stage *s = ptr.get();
    if (s->isParam())
      continue;
    const ir::Kernel *k = program.kernelOf(s);
    if (!k) {
      out.push_back(makeLaunch({s}, describe(*s)));
      continue;
    }
    if (k->stages.front() != s)
      continue;
    auto index = static_cast<unsigned>(k - program.kernels.data());
    llvm::SmallVector<const Stage *, 8> members(k->stages.begin(),
                                                k->stages.end());
    if (!k->isFusedCollective() || !sequential(*k)) {
      out.push_back(makeLaunch(members, describe(*k, index)));
      continue;
    }
    // The reducing collective, the kernel, the allgather, one by one.
    llvm::SmallVector<const Stage *, 8> compute;
    for (const Stage *m : members)
      if (ir::isCommunication(m->kind) && m->kind != StageKind::AllGather)
        out.push_back(makeLaunch({m}, describe(*m)));
      else if (!ir::isCommunication(m->kind))
        compute.push_back(m);
    if (!compute.empty()) {
      std::string names;
      for (const Stage *m : compute)
        names += " " + m->name;
      out.push_back(makeLaunch(compute, "kernel k" + std::to_string(index) +
                                            " (elementwise):" + names));
    }
    for (const Stage *m : members)
      if (m->kind == StageKind::AllGather)
        out.push_back(makeLaunch({m}, describe(*m)));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// An integer when the value is one, else six significant digits.
std::string number(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (std::fabs(v) < 9e15 && v == std::floor(v))
    os << static_cast<int64_t>(v);
  else
    os << llvm::format("%.6g", v);
  return s;
}

/// "1.75 MiB" (binary prefixes) or "8.59 GFLOP" (decimal ones).
/// What a row counts: bytes (binary prefixes), FLOPs or elements (decimal).
enum class Counted { Bytes, Flops, Elements };

std::string scaled(double v, Counted counted) {
  static const char *const kBytes[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  static const char *const kFlops[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP",
                                       "TFLOP"};
  static const char *const kElements[] = {"", "k", "M", "G", "T"};
  double base = counted == Counted::Bytes ? 1024 : 1000;
  unsigned unit = 0;
  while (std::fabs(v) >= base && unit < 4) {
    v /= base;
    ++unit;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.2f", v);
  while (s.back() == '0')
    s.pop_back();
  if (s.back() == '.')
    s.pop_back();
  switch (counted) {
  case Counted::Bytes:
    return s + " " + kBytes[unit];
  case Counted::Flops:
    return s + " " + kFlops[unit];
  case Counted::Elements:
    return s + kElements[unit] + " elements";
  }
  return s;
}

bool isConstant(const Polynomial &p) {
  return llvm::all_of(p.terms(),
                      [](const auto &term) { return term.first.empty(); });
}

struct Row {
  const char *label;
  Polynomial value;
  Counted counted;
};

void printRows(llvm::ArrayRef<Row> rows, const ir::DimEnv &sizes,
               llvm::raw_ostream &os) {
  size_t width = 0;
  for (const Row &r : rows)
    width = std::max(width, r.value.str().size());
  for (const Row &r : rows) {
    std::string text = r.value.str();
    os << "       " << llvm::left_justify(r.label, 6) << ' ';
    std::optional<double> v = r.value.evaluate(sizes);
    if (!v || isConstant(r.value)) {
      os << text << '\n';
      continue;
    }
    os << llvm::left_justify(text, width) << " = " << number(*v);
    if (std::fabs(*v) >= (r.counted == Counted::Bytes ? 1024 : 1000))
      os << " (" << scaled(*v, r.counted) << ')';
    os << '\n';
  }
}

void printLaunch(const LaunchCost &launch, unsigned index,
                 const ir::DimEnv &sizes, llvm::raw_ostream &os) {
  os << "  " << index << ". " << launch.description << '\n';
  llvm::SmallVector<Row, 4> rows{{"read", launch.read, Counted::Bytes},
                                 {"write", launch.write, Counted::Bytes}};
  if (launch.kind == Kind::Collective || launch.kind == Kind::FusedCollective)
    rows.push_back({"net", launch.sent, Counted::Bytes});
  if (launch.kind == Kind::FusedCollective)
    rows.push_back({"copies", launch.staging, Counted::Bytes});
  if (launch.kind == Kind::Matmul) {
    rows.push_back({"flops", launch.flops, Counted::Flops});
    rows.push_back({"packed", launch.packed, Counted::Elements});
  }
  if (!launch.ordered.isZero())
    rows.push_back({"summed", launch.ordered, Counted::Elements});
  if (!launch.drawn.isZero())
    rows.push_back({"drawn", launch.drawn, Counted::Elements});
  if (!launch.libm.isZero())
    rows.push_back({"libm", launch.libm, Counted::Elements});
  if (!launch.rounded.isZero())
    rows.push_back({"rounds", launch.rounded, Counted::Elements});
  printRows(rows, sizes, os);
}

/// "3 launches (1 kernel, 2 collectives)".
std::string launchCounts(llvm::ArrayRef<LaunchCost> launches) {
  unsigned counts[4] = {0, 0, 0, 0};
  for (const LaunchCost &l : launches)
    ++counts[static_cast<unsigned>(l.kind)];
  auto count = [](unsigned n, llvm::StringRef what) {
    return std::to_string(n) + " " + what.str() + (n == 1 ? "" : "s");
  };
  unsigned kernels = counts[static_cast<unsigned>(Kind::Kernel)] +
                     counts[static_cast<unsigned>(Kind::FusedCollective)];
  llvm::SmallVector<std::string, 3> parts;
  if (kernels)
    parts.push_back(count(kernels, "kernel"));
  if (unsigned n = counts[static_cast<unsigned>(Kind::Matmul)])
    parts.push_back(count(n, "matmul"));
  if (unsigned n = counts[static_cast<unsigned>(Kind::Collective)])
    parts.push_back(count(n, "collective"));
  std::string s = std::to_string(launches.size()) +
                  (launches.size() == 1 ? " launch" : " launches");
  if (!parts.empty())
    s += " (" + llvm::join(parts, ", ") + ")";
  return s;
}

void printHeader(const ir::Program &program, llvm::StringRef scheduleName,
                 const ir::DimEnv &sizes, llvm::raw_ostream &os) {
  os << "report " << program.name
     << (scheduleName == "unscheduled" ? ", " : ", schedule ") << scheduleName
     << ": per rank and step; net: bytes sent (as many are received)\n";
  llvm::SmallVector<std::string, 4> bound;
  for (const std::string &name : program.sizeNames) {
    auto it = sizes.find(name);
    if (it != sizes.end())
      bound.push_back(name + " = " + std::to_string(it->second));
  }
  os << "  sizes: " << (bound.empty() ? "unbound" : llvm::join(bound, ", "))
     << '\n';
  llvm::SmallVector<std::string, 4> sharded;
  for (const Stage *p : program.getParams())
    if (p->sharded)
      sharded.push_back(p->name + " (" + p->type.str(program.mesh) + ")");
  if (!sharded.empty())
    os << "  sharded: " << llvm::join(sharded, ", ") << '\n';
}

} // namespace

std::vector<LaunchCost> analyzeLaunches(const ir::Program &program,
                                        bool sequential) {
  return LaunchCounter(program).launches(
      [&](const ir::Kernel &) { return sequential; });
}

std::vector<LaunchCost>
analyzeLaunches(const ir::Program &program,
                llvm::function_ref<bool(const ir::Kernel &)> sequential) {
  return LaunchCounter(program).launches(sequential);
}

void printReport(const ir::Program &program,
                 llvm::ArrayRef<LaunchCost> launches,
                 llvm::StringRef scheduleName, const ir::DimEnv &sizes,
                 llvm::raw_ostream &os, llvm::ArrayRef<std::string> times,
                 llvm::StringRef totalTime) {
  printHeader(program, scheduleName, sizes, os);
  LaunchCost total;
  for (unsigned i = 0; i < launches.size(); ++i) {
    printLaunch(launches[i], i + 1, sizes, os);
    if (i < times.size() && !times[i].empty())
      os << "       time   " << times[i] << '\n';
    total.read += launches[i].read;
    total.write += launches[i].write;
    total.sent += launches[i].sent;
    total.flops += launches[i].flops;
  }
  os << "  total: " << launchCounts(launches) << '\n';
  printRows({{"read", total.read, Counted::Bytes},
             {"write", total.write, Counted::Bytes},
             {"memory", total.read + total.write, Counted::Bytes},
             {"net", total.sent, Counted::Bytes},
             {"flops", total.flops, Counted::Flops}},
            sizes, os);
  if (!totalTime.empty())
    os << "       time   " << totalTime << '\n';
}

} // namespace coconet::analysis
