//===- CpuTarget.cpp - the CPU target: OpenMP loops, MPI collectives ------===//
//
// Kernels are functions with OpenMP loops over the elements (or rows, or
// output elements) of a block; one thread computes each reduced value, in
// the simulator's order, so the CPU target agrees with the simulator bit
// for bit. f16/bf16 are stored as the runtime's Half / BFloat16 and
// converted exactly; arithmetic is plain C++, compiled without
// floating-point contraction. Collectives and matmuls call the runtime
// (coconet/cpu/runtime.h); the driver always runs under MPI.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "coconet/tile.h"

namespace coconet::codegen {

using namespace lower;

namespace {

/// Elements per tile of a flat elementwise kernel (the runtime's, which its
/// combineTile takes at most): the f16/bf16 tensors of a tile, widened,
/// stay in the first-level cache.
constexpr int kTile = static_cast<int>(rt::kTile);

/// An elementwise kernel runs in tiles, one whose tensors are all read at
/// the loop's index (flat) of the whole domain, any other within rows.
constexpr ElementForm kTiles[] = {ElementForm::Tile};
constexpr ElementForm kRowTiles[] = {ElementForm::RowTile};

TargetInfo cpuInfo() {
  TargetInfo i;
  i.displayName = "CPU";
  i.sourceExtension = ".cpp";
  i.runtimeNamespace = "coconet::rt::cpu";
  i.headerIncludes = "#include \"coconet/cpu/runtime.h\"";
  i.sourceIncludes = "#include \"coconet/cpu/convert.h\"";
  i.readOnlyPointer = "__restrict__ ";
  i.writtenPointer = "__restrict__ ";
  i.flatBlocks = kTiles;
  i.otherBlocks = kRowTiles;
  // One thread computes each group, in the simulator's order.
  i.groupThreads = false;
  i.packRows = true;
  i.overlapHeader = "coconet/cpu/progress.h";
  i.overlapState = "std::unique_ptr<coconet::rt::cpu::Progress> cc_progress;";
  i.algorithmFileHeader = "coconet/algorithm_check.h";
  i.overlapCreate = "COCONET_RETURN_IF_ERROR(coconet::rt::cpu::Progress::"
                    "create(&state->cc_progress));";
  i.overlapPath = "(state->cc_progress->why().empty() ? std::string(\"a "
                  "progress thread\") : \"one thread: \" + "
                  "state->cc_progress->why())";
  i.part = {"// On the progress thread, while this one computes the next "
            "part.",
            "cc_s.cc_progress->post([&, cc_c, cc_begin, cc_end]() -> "
            "coconet::rt::Status {",
            "(void)cc_c;", "return coconet::rt::Status();", "});"};
  i.overlapEnd = "COCONET_RETURN_IF_ERROR(cc_s.cc_progress->wait());";
  i.dispatch.before = "// Every part's alltoall on the progress thread, in "
                      "order; this thread computes\n"
                      "// each part once it has arrived.";
  i.dispatch.open = "cc_s.cc_progress->postPart(cc_c, [&, cc_c, cc_begin, "
                    "cc_end]() -> coconet::rt::Status {";
  i.dispatch.await =
      "COCONET_RETURN_IF_ERROR(cc_s.cc_progress->waitForPart(cc_c));";
  i.teamHeader = "coconet/cpu/team.h";
  i.teamRank = "cc_team.rank()";
  i.teamSize = "cc_team.size()";
  i.teamBarrier = "cc_team.barrier();";
  i.teamMemory = "shared memory";
  i.memorySpace = "host";
  i.scalarDoc = ", f16/bf16 ones as float and rounded.";
  i.stepDoc = "Runs one step.";
  i.driverPreamble = "// The CPU target always runs under MPI.\n"
                     "#ifndef COCONET_WITH_MPI\n"
                     "#define COCONET_WITH_MPI 1\n"
                     "#endif";
  i.alwaysMpi = true;
  i.driverHeader = "coconet/cpu/driver.h";
  i.pythonHeader = "coconet/cpu/python.h";
  i.pythonTarget = "cpu";
  return i;
}

class CpuTarget final : public Target {
public:
  CpuTarget() : Target(cpuInfo()) {}

  // --- Values ------------------------------------------------------------

  std::string storageType(ir::DType dtype) const override {
    if (dtype == ir::DType::F16)
      return "coconet::rt::Half";
    if (dtype == ir::DType::BF16)
      return "coconet::rt::BFloat16";
    return plainType(dtype);
  }
  std::string load(ir::DType dtype, llvm::StringRef expr) const override {
    if (dtype == ir::DType::F16 || dtype == ir::DType::BF16)
      return "coconet::rt::toFloat(" + expr.str() + ")";
    return expr.str();
  }
  std::string store(ir::DType dtype, llvm::StringRef expr) const override {
    if (dtype == ir::DType::F16 || dtype == ir::DType::BF16)
      return narrow(Narrowing::StoreFromDouble, dtype, expr);
    return expr.str();
  }
  std::string narrow(Narrowing how, ir::DType dtype,
                     llvm::StringRef expr) const override {
    const bool half = dtype == ir::DType::F16;
    switch (how) {
    case Narrowing::StoreFromDouble:
      return std::string(half ? "coconet::rt::toHalf("
                              : "coconet::rt::toBFloat16(") +
             expr.str() + ")";
    case Narrowing::RoundFloat:
      return std::string(half ? "coconet::rt::roundToHalf("
                              : "coconet::rt::roundToBFloat16(") +
             expr.str() + ")";
    case Narrowing::FromDouble:
      return "static_cast<float>(" +
             narrow(Narrowing::RoundFloat, dtype, expr) + ")";
    }
    return expr.str();
  }
  std::string arith(llvm::StringRef, llvm::StringRef op, bool,
                    llvm::StringRef a, llvm::StringRef b) const override {
    return "(" + a.str() + " " + op.str() + " " + b.str() + ")";
  }
  std::string mathCall(llvm::StringRef fn, bool,
                       llvm::StringRef args) const override {
    return "std::" + fn.str() + "(" + args.str() + ")";
  }
  std::string sqrtRounded(bool isDouble, llvm::StringRef x) const override {
    return mathCall("sqrt", isDouble, x);
  }

  // --- Kernels -----------------------------------------------------------

  void openKernel(CodeWriter &w, llvm::StringRef name, llvm::StringRef params,
                  bool, bool) const override {
    w.open("void " + name + "(" + params + ")");
  }
  void openLoop(CodeWriter &w, LoopKind kind, llvm::StringRef var,
                llvm::StringRef count) const override {
    switch (kind) {
    case LoopKind::Items:
      w.line("#pragma omp parallel for schedule(static)");
      break;
    case LoopKind::Groups:
      // One group is one thread's work: a parallel loop only pays for more.
      w.line("#pragma omp parallel for schedule(static) if (" + count +
             " > 1)");
      break;
    case LoopKind::GroupElements:
      break;
    }
    w.open(loop(var, count));
  }
  void openBlocks(CodeWriter &w, ElementForm form,
                  const BlockContext &c) const override;
  void closeBlocks(CodeWriter &w, ElementForm,
                   const BlockContext &) const override {
    w.close();
  }
  void emitBlockOp(CodeWriter &w, ElementForm form, const BlockContext &c,
                   const lower::BlockOp &op) const override;
  std::string groupCombine(llvm::StringRef value,
                           llvm::StringRef) const override {
    return value.str();
  }

  // --- Steps ---------------------------------------------------------------

  void emitCollective(CodeWriter &w, const Plan &, const CollectiveCall &c,
                      const CollectiveOperands &ops) const override {
    const std::string &in = ops.in, &out = ops.out, &count = ops.count;
    const std::string dtype = runtimeDType(c.dtype);
    const std::string axis = std::to_string(c.axis);
    const std::string op = runtimeReduceOp(c.op);
    // A schedule's algorithm other than the library's: the mesh runs it on
    // a team of the axis's members (the library's where there is none).
    if (c.table) {
      // An algorithm file's table (codegen/AlgorithmCode.cpp).
      w.line("COCONET_RETURN_IF_ERROR(cc_s.mesh->runAlgorithm(" + c.tableName +
             ", " + in + ", " + out + ", " + count + ", " + dtype + ", " + op +
             ", " + axis + "));");
      return;
    }
    std::string algorithm;
    if (ir::isTeamAlgorithm(c.algorithm))
      algorithm = ", coconet::rt::cpu::Mesh::Algorithm::" +
                  teamAlgorithmEnumerator(c.algorithm);
    std::string call;
    switch (c.kind) {
    case Collective::AllReduce:
      call = "allReduce(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + op + ", " + axis + algorithm + ")";
      break;
    case Collective::ReduceScatter:
      call = "reduceScatter(" + in + ", " + out + ", " + ops.outCount + ", " +
             dtype + ", " + op + ", " + axis + algorithm + ")";
      break;
    case Collective::AllGather:
      call = "allGather(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + axis + algorithm + ")";
      break;
    case Collective::Broadcast:
      call = "broadcast(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + ops.root + ", " + axis + ")";
      break;
    case Collective::Reduce:
      call = "reduce(" + in + ", " + out + ", " + count + ", " + dtype + ", " +
             op + ", " + ops.root + ", " + axis + ")";
      break;
    case Collective::SendRecv:
      call = "sendRecv(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + std::to_string(c.offset) + ", " + axis + ")";
      break;
    case Collective::AllToAll:
      // Blocks apart (an overlap's parts: the library's), or the schedule's
      // algorithm.
      call = "allToAll(" + in + ", " + out + ", " + ops.blockCount + ", " +
             dtype + ", " + axis +
             (ops.blockStride.empty() ? algorithm : ", " + ops.blockStride) +
             ")";
      break;
    case Collective::AllToAllV:
      // The counts first (every member's), then the rows: MPI_Alltoallv
      // (of an overlap's part, its segments).
      call = (ops.part.empty() ? "allToAllV(" : "allToAllVPart(") + in + ", " +
             ops.rowsIn + ", " + ops.counts + ", " + ops.groups + ", " + out +
             ", " + ops.rowsOut + ", nullptr, " + ops.row + ", " + dtype +
             ", " + axis + algorithm +
             (ops.part.empty() ? "" : ", " + ops.part + ", " + ops.parts) + ")";
      break;
    }
    w.line("COCONET_RETURN_IF_ERROR(cc_s.mesh->" + call + ");");
  }
  void emitMatMul(CodeWriter &w, const Plan &plan, const MatMulCall &mm,
                  const MatMulOperands &o) const override {
    if (!o.counts.empty()) {
      w.line(std::string("coconet::rt::cpu::") +
             (o.part.empty() ? "groupedMatmul(" : "groupedMatmulPart(") +
             runtimeDType(plan.buffers[mm.c].dtype) + ", " + o.m + ", " + o.n +
             ", " + o.k + ", " + o.a + ", " + o.b + ",");
      w.line("    " + o.groups + ", " + o.localGroups + ", " + o.counts + ", " +
             o.c + (o.part.empty() ? "" : ", " + o.part + ", " + o.parts) +
             ");");
      return;
    }
    w.line("coconet::rt::cpu::matmul(" +
           runtimeDType(plan.buffers[mm.c].dtype) + ", " + o.batch + ", " +
           o.m + ", " + o.n + ", " + o.k + ",");
    w.line("    " + o.a + ", " + o.strideA + ", " + o.b + ", " + o.strideB +
           ", " + o.c + ", " + o.strideC + ");");
  }
  void emitCopy(CodeWriter &w, llvm::StringRef to, llvm::StringRef from,
                llvm::StringRef count, ir::DType dtype) const override {
    w.line("std::memcpy(" + to + ", " + from + ", static_cast<size_t>(" +
           count + ") * sizeof(" + storageType(dtype) + "));");
  }
  void emitStoreScalar(CodeWriter &w, llvm::StringRef to,
                       llvm::StringRef value) const override {
    w.line(to + "[0] = " + value + ";");
  }
  void emitLaunch(CodeWriter &w, const Plan &, const Step &step,
                  llvm::StringRef, llvm::StringRef args,
                  const KernelRange &) const override {
    w.line("cc_" + step.name + "(" + args + ");");
  }

  // --- Fused collectives ----------------------------------------------------

  std::string fusedTeamParams(const Plan &,
                              const FusedKernel &k) const override {
    std::string team = "coconet::rt::cpu::Team &cc_team";
    if (k.reducing)
      team += ", const void *const *cc_from";
    if (k.gather)
      team += ", void *const *cc_to";
    return team;
  }
  std::string fusedTeamArgs(const Plan &plan, const FusedKernel &k,
                            llvm::StringRef team) const override {
    std::string out = "*" + team.str();
    if (k.reducing)
      out +=
          ", cc_s.cc_peers_" + bufferName(plan, k.reducing->input) + ".data()";
    if (k.gather)
      out +=
          ", cc_s.cc_peers_" + bufferName(plan, k.gather->output) + ".data()";
    return out;
  }
  void emitFusedLaunch(CodeWriter &w, const Plan &, const FusedKernel &k,
                       llvm::StringRef, llvm::StringRef args,
                       const KernelRange &) const override {
    w.line(k.name + "(" + args + ");");
  }
  void emitTeamBufferState(CodeWriter &w, const Plan &,
                           const Buffer &b) const override {
    w.line("std::vector<void *> cc_peers_" + b.name + ";");
  }
  void emitTeamBufferBind(CodeWriter &w, const Plan &, const Buffer &b,
                          llvm::StringRef team) const override {
    w.line("for (int cc_m = 0; cc_m < " + team + "->size(); ++cc_m)");
    w.line("  state->cc_peers_" + b.name + ".push_back(" + team +
           "->peer(cc_m, state->cc_sym_" + b.name + "));");
  }

  // --- The program object ----------------------------------------------------

  void emitStateMembers(CodeWriter &, const Plan &) const override {}
  void emitCreateLibraries(CodeWriter &, const Plan &) const override {}
  void emitDestroyLibraries(CodeWriter &, const Plan &) const override {}

private:
  static std::string loop(llvm::StringRef var, llvm::StringRef count) {
    return "for (int64_t " + var.str() + " = 0; " + var.str() + " < " +
           count.str() + "; ++" + var.str() + ")";
  }
};

using lower::BlockOp;
using lower::BlockValue;

BlockValue memberValue(unsigned m) { return {BlockValue::Kind::Member, m}; }

/// Is member `m`'s value kept in the tile `cc_s<m>` (as floats for f16/bf16)
/// rather than stored by the tile's loop into its buffer: f16/bf16 results
/// (narrowed after the loop), and a gathered member not stored where it is
/// (copied into every member after the loop).
bool inTile(const BlockContext &c, unsigned m) {
  const std::optional<unsigned> out = c.k.members[m].output;
  if (!out)
    return false;
  return isNarrow(c.plan.buffers[*out].dtype) ||
         (c.body.storedToPeers(memberValue(m)) &&
          !c.body.stored(memberValue(m)));
}

/// A row-invariant fused gather's row in a row tile: `cc_row<i>`, the
/// tile's first element in the data's row at the position the index holds,
/// or the zero tile where the position is outside the data.
void emitGatherRow(CodeWriter &w, const BlockContext &c, unsigned i) {
  const KernelInput &in = c.k.inputs[i];
  const Buffer &b = c.plan.buffers[in.buffer];
  const std::string n = std::to_string(i);
  const std::string type = cpuTarget().storageType(b.dtype);
  emitGatherPosition(w, c.plan, in, i, c.k.domain, cpuTarget());
  w.line("const " + type + " *cc_row" + n + ";");
  w.line("{");
  w.indent();
  w.line("const int64_t cc_c" + std::to_string(c.k.domain.size() - 1) +
         " = cc_lo;");
  w.line("cc_row" + n + " = cc_v" + n + " ? " + b.name + " + " +
         inputIndex(&c.k, in, i, c.k.domain, "cc_first", "cc_g") +
         " : coconet::rt::cpu::kZeroTile<" + type + ">;");
  w.close();
}

/// How the tile's element loop reads the reduced input (the tile cc_red,
/// widened into cc_l<i> when it is f16/bf16) and where it puts the members
/// kept in tiles.
BodyOverrides tileOverrides(const BlockContext &c) {
  BodyOverrides o;
  for (unsigned m = 0; m < c.k.members.size(); ++m)
    if (c.body.storedToPeers(memberValue(m)) && inTile(c, m))
      o.tileMember = m;
  const FusedKernel *f = c.fused;
  if (f && f->reducedInput) {
    const ir::DType dtype = c.plan.buffers[f->reducing->output].dtype;
    o.input = f->reducedInput;
    o.inputValue = isNarrow(dtype)
                       ? "cc_l" + std::to_string(*f->reducedInput) + "[cc_j]"
                       : "cc_red[cc_j]";
  }
  return o;
}

/// The bytes of a tile of `dtype`.
std::string tileBytes(ir::DType dtype) {
  return "static_cast<size_t>(cc_len) * sizeof(" +
         cpuTarget().storageType(dtype) + ")";
}

/// Member `cc_q`'s block of the gathered output at the tile.
std::string peerTile(const BlockContext &c, const BlockOp &op) {
  return "static_cast<" +
         cpuTarget().storageType(c.plan.buffers[op.buffer].dtype) +
         " *>(cc_to[cc_q]) + cc_to_at + cc_first";
}

/// An elementwise kernel's tiles: OpenMP's threads share tiles of kTile
/// elements; the f16/bf16 tensors of a tile are widened to floats before
/// its element loop and its f16/bf16 results narrowed after it (cpu/
/// convert.h: F16C where the CPU has it), and the tile's elements are one
/// `omp simd` loop of float arithmetic. A kernel that reads some tensor at
/// computed indices (broadcasts) runs in tiles within one row of the
/// domain's last dimension: the other coordinates are the row's, the last
/// one is the tile's start plus the lane, so no element divides its index;
/// a tensor read along the row is widened a tile at a time as in the flat
/// form, one broadcast along it is the same element for the whole tile.
void CpuTarget::openBlocks(CodeWriter &w, ElementForm form,
                           const BlockContext &c) const {
  const std::string tileSize = std::to_string(kTile);
  const bool ranged = c.ranged;
  if (form == ElementForm::Tile) {
    const std::string end = ranged ? "cc_end" : "cc_g.n";
    if (ranged && !c.fused)
      w.line("(void)cc_g; // a part's range stands for the whole count");
    w.line("const int64_t cc_tiles = (" +
           std::string(ranged ? "cc_end - cc_begin" : "cc_g.n") + " + " +
           std::to_string(kTile - 1) + ") / " + tileSize + ";");
    w.line("#pragma omp parallel for schedule(static)");
    w.open("for (int64_t cc_tile = 0; cc_tile < cc_tiles; ++cc_tile)");
    w.line(
        "const int64_t cc_first = " + std::string(ranged ? "cc_begin + " : "") +
        "cc_tile * " + tileSize + ";");
    w.line("const int64_t cc_len = std::min<int64_t>(" + tileSize + ", " + end +
           " - cc_first);");
    return;
  }
  const unsigned rank = c.k.domain.size();
  const std::string row = "cc_g.e" + std::to_string(rank - 1);
  llvm::SmallVector<bool, 4> used = usedCoordinates(c.k);
  w.line("const int64_t cc_row_tiles = (" + row + " + " +
         std::to_string(kTile - 1) + ") / " + tileSize + ";");
  // A range is whole rows (lower/Chunks.cpp).
  w.line("const int64_t cc_tiles = " + row + " > 0 ? " +
         (ranged ? "(cc_end - cc_begin)" : "cc_g.n") + " / " + row +
         " * cc_row_tiles : 0;");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_tile = 0; cc_tile < cc_tiles; ++cc_tile)");
  w.line("const int64_t cc_r = " +
         (ranged ? "cc_begin / " + row + " + " : std::string()) +
         "cc_tile / cc_row_tiles;");
  w.line("const int64_t cc_lo = (cc_tile % cc_row_tiles) * " + tileSize + ";");
  w.line("const int64_t cc_first = cc_r * " + row + " + cc_lo;");
  w.line("const int64_t cc_len = std::min<int64_t>(" + tileSize + ", " + row +
         " - cc_lo);");
  // The row's coordinates (every dimension but the last).
  emitCoordinates(w, llvm::ArrayRef<bool>(used).drop_back(), "cc_r", "cc_g");
}

void CpuTarget::emitBlockOp(CodeWriter &w, ElementForm form,
                            const BlockContext &c, const BlockOp &op) const {
  const Plan &plan = c.plan;
  const ElementwiseKernel &k = c.k;
  const FusedKernel *f = c.fused;
  const std::string tileSize = std::to_string(kTile);
  const unsigned rank = k.domain.size();
  switch (op.kind) {
  case BlockOp::Kind::TeamReduce: {
    // The reduced tile `cc_red`, combined from every member's block in
    // the members' order; one member's block is its own reduction (as
    // a lone collective's alias is): read where it is.
    const Buffer &out = plan.buffers[op.buffer];
    const std::string type = storageType(out.dtype);
    w.line(type + " cc_combined[" + tileSize + "];");
    w.line("const " + type + " *__restrict__ cc_red = cc_combined;");
    w.line("if (cc_members == 1)");
    w.line("  cc_red = static_cast<const " + type +
           " *>(cc_from[0]) + cc_from_at + cc_first;");
    w.line("else");
    w.line("  coconet::rt::cpu::combineTile(cc_from, cc_members, cc_from_at + "
           "cc_first, cc_combined, cc_len,");
    w.line("                                " + runtimeDType(out.dtype) + ", " +
           runtimeReduceOp(f->reducing->op) + ");");
    return;
  }
  case BlockOp::Kind::Load: {
    const unsigned i = op.value.index;
    const KernelInput &in = k.inputs[i];
    const Buffer &b = plan.buffers[in.buffer];
    const bool reduced = f && f->reducedInput == i;
    if (in.table) {
      // A value per segment: where the tile lies in one segment (the
      // common case: segments are tensors, tiles 512 elements), its one
      // value cc_u<i>, which the element loop reads as a scalar; else the
      // tile cc_l<i>, each run of its elements in one segment given that
      // segment's value (the walk starts at the chunk of the tile's first
      // element: segment_walk.h).
      const std::string ends =
          plan.buffers[c.plan.tables[*in.table].buffer].name;
      const std::string n = std::to_string(i);
      const std::string tile = "cc_l" + n;
      const std::string type = computeType(b.dtype);
      w.line(type + " " + tile + "[" + tileSize + "];");
      w.line(type + " cc_u" + n + " = 0;");
      w.line("bool cc_one" + n + ";");
      w.line("{");
      w.indent();
      w.line("const int64_t cc_g0 = cc_g.segoff + cc_first;");
      w.line("int64_t cc_seg = " + ends + "[cc_g.t" + n +
             " + (cc_g0 >> coconet::rt::kSegmentChunkLog2)];");
      w.line("while (" + ends + "[cc_seg] <= cc_g0)");
      w.line("  ++cc_seg;");
      w.line("cc_one" + n + " = " + ends + "[cc_seg] >= cc_g0 + cc_len;");
      w.open("if (cc_one" + n + ")");
      w.line("cc_u" + n + " = " + load(b.dtype, b.name + "[cc_seg]") + ";");
      w.close(" else {");
      w.indent();
      w.open("for (int64_t cc_p = 0; cc_p < cc_len;)");
      w.line("while (" + ends + "[cc_seg] <= cc_g0 + cc_p)");
      w.line("  ++cc_seg;");
      w.line("const int64_t cc_q = std::min<int64_t>(cc_len, " + ends +
             "[cc_seg] - cc_g0);");
      w.line("const " + type + " cc_v = " + load(b.dtype, b.name + "[cc_seg]") +
             ";");
      w.line("for (int64_t cc_j = cc_p; cc_j < cc_q; ++cc_j)");
      w.line("  " + tile + "[cc_j] = cc_v;");
      w.line("cc_p = cc_q;");
      w.close();
      w.close();
      w.close();
      return;
    }
    // Wide tensors are read where they are by the element loop.
    if (!isNarrow(b.dtype) ||
        (form == ElementForm::RowTile && !rowContiguous(in, rank)))
      return;
    const std::string tile = "cc_l" + std::to_string(i);
    w.line("float " + tile + "[" + tileSize + "];");
    if (reduced) {
      w.line("coconet::rt::cpu::widen(cc_red, " + tile + ", cc_len);");
      return;
    }
    if (form == ElementForm::Tile) {
      w.line("coconet::rt::cpu::widen(" + b.name +
             (in.shifted ? " + cc_g.o" + std::to_string(i) : "") +
             " + cc_first, " + tile + ", cc_len);");
      return;
    }
    const std::string widen =
        "coconet::rt::cpu::widen(" + b.name + " + " +
        inputIndex(&k, in, i, k.domain, "cc_first", "cc_g") + ", " + tile +
        ", cc_len);";
    if (in.flat || in.shifted) {
      w.line(widen);
      return;
    }
    // The tile's first element: the index at the last coordinate cc_lo.
    w.line("{");
    w.indent();
    w.line("const int64_t cc_c" + std::to_string(rank - 1) + " = cc_lo;");
    w.line(widen);
    w.close();
    return;
  }
  case BlockOp::Kind::Compute: {
    for (unsigned m = 0; m < k.members.size(); ++m) {
      if (!inTile(c, m))
        continue;
      const ir::DType dtype = plan.buffers[*k.members[m].output].dtype;
      w.line(std::string(isNarrow(dtype) ? "float" : storageType(dtype)) +
             " cc_s" + std::to_string(m) + "[" + tileSize + "];");
    }
    // The element loop: where the kernel reads values per segment, twice,
    // for a tile within one segment (each value one scalar) and for one
    // that crosses a segment's end (each value from its filled tile).
    auto elementLoop = [&](bool tableScalars) {
      // The positions of the fused gathers that a row reads at one
      // position: once, before the row's loop.
      bool hoisted = false;
      if (form == ElementForm::RowTile)
        for (unsigned i = 0; i < k.inputs.size(); ++i)
          if (rowInvariantGather(k.inputs[i], rank)) {
            emitGatherRow(w, c, i);
            hoisted = true;
          }
      w.line("#pragma omp simd");
      w.open("for (int64_t cc_j = 0; cc_j < cc_len; ++cc_j)");
      w.line("const int64_t cc_i = cc_first + cc_j;");
      w.line("(void)cc_i;"); // unused when every tensor is in a tile
      if (form == ElementForm::RowTile && usedCoordinates(k)[rank - 1]) {
        // Unused when only tiles read along the row.
        const std::string inner = "cc_c" + std::to_string(rank - 1);
        w.line("const int64_t " + inner + " = cc_lo + cc_j;");
        w.line("(void)" + inner + ";");
      }
      BodyOverrides overrides = tileOverrides(c);
      overrides.tableScalars = tableScalars;
      overrides.gathersHoisted = hoisted;
      emitElementBody(w, plan, c.step, k, *this, form, c.uniform, overrides);
      w.close();
    };
    std::string oneSegment;
    for (unsigned i = 0; i < k.inputs.size(); ++i)
      if (k.inputs[i].table)
        oneSegment += (oneSegment.empty() ? "" : " && ") +
                      std::string("cc_one") + std::to_string(i);
    if (oneSegment.empty()) {
      elementLoop(false);
      return;
    }
    w.open("if (" + oneSegment + ")");
    elementLoop(true);
    w.close(" else {");
    w.indent();
    elementLoop(false);
    w.close();
    return;
  }
  case BlockOp::Kind::Store: {
    const Buffer &b = plan.buffers[op.buffer];
    if (op.value.kind == BlockValue::Kind::Reduced) {
      w.line("std::memcpy(" + b.name + " + cc_first, cc_red, " +
             tileBytes(b.dtype) + ");");
      return;
    }
    // A wide member's elements were stored by the element loop.
    if (isNarrow(b.dtype))
      w.line("coconet::rt::cpu::narrow(cc_s" + std::to_string(op.value.index) +
             ", " + b.name + " + cc_first, cc_len);");
    return;
  }
  case BlockOp::Kind::StoreToPeers: {
    const Buffer &out = plan.buffers[op.buffer];
    const std::string to = peerTile(c, op);
    if (op.value.kind == BlockValue::Kind::Reduced) {
      w.line("std::memcpy(" + to + ", cc_red, " + tileBytes(out.dtype) + ");");
      return;
    }
    const unsigned m = op.value.index;
    if (isNarrow(out.dtype)) {
      w.line("coconet::rt::cpu::narrow(cc_s" + std::to_string(m) + ", " + to +
             ", cc_len);");
      return;
    }
    // A wide value the element loop stored into its own buffer is copied
    // from there (while it is in the cache); else from its tile.
    const std::string from =
        inTile(c, m) ? "cc_s" + std::to_string(m)
                     : plan.buffers[*k.members[m].output].name + " + cc_first";
    w.line("std::memcpy(" + to + ", " + from + ", " + tileBytes(out.dtype) +
           ");");
    return;
  }
  }
}

} // namespace

const Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace coconet::codegen
