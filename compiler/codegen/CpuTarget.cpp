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

TargetInfo cpuInfo() {
  TargetInfo i;
  i.displayName = "CPU";
  i.sourceExtension = ".cpp";
  i.runtimeNamespace = "coconet::rt::cpu";
  i.headerIncludes = "#include \"coconet/cpu/runtime.h\"";
  i.sourceIncludes = "#include \"coconet/cpu/convert.h\"";
  i.readOnlyPointer = "__restrict__ ";
  i.writtenPointer = "__restrict__ ";
  // One thread computes each group, in the simulator's order.
  i.groupThreads = false;
  i.overlapHeader = "coconet/cpu/progress.h";
  i.overlapState = "std::unique_ptr<coconet::rt::cpu::Progress> cc_progress;";
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
  i.blockDoc = ".";
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
                  bool) const override {
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
  void emitElementwiseLoops(CodeWriter &w, const Plan &plan, const Step &step,
                            const ElementwiseKernel &k,
                            const UniformValues &uniform,
                            const FusedKernel *fused,
                            bool ranged) const override;
  void emitRowTileLoops(CodeWriter &w, const Plan &plan, const Step &step,
                        const ElementwiseKernel &k,
                        const UniformValues &uniform, const FusedKernel *fused,
                        bool ranged) const;
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
    std::string call;
    switch (c.kind) {
    case Collective::AllReduce:
      call = "allReduce(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + op + ", " + axis + ")";
      break;
    case Collective::ReduceScatter:
      call = "reduceScatter(" + in + ", " + out + ", " + ops.outCount + ", " +
             dtype + ", " + op + ", " + axis + ")";
      break;
    case Collective::AllGather:
      call = "allGather(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + axis + ")";
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
    }
    w.line("COCONET_RETURN_IF_ERROR(cc_s.mesh->" + call + ");");
  }
  void emitMatMul(CodeWriter &w, const Plan &plan, const MatMulCall &mm,
                  const MatMulOperands &o) const override {
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

  // --- The driver ------------------------------------------------------------

  /// A block bound to the program's symmetric memory is copied there.
  void emitUpload(CodeWriter &w, llvm::StringRef name) const override {
    const std::string n = name.str();
    w.line("if (cc_st.ok() && " + n + ".bound)");
    w.line("  std::memcpy(" + n + ".bound, " + n + ".host.data(), " + n +
           ".host.size());");
  }
  std::string blockPointer(llvm::StringRef name) const override {
    return "(" + name.str() + ".bound ? " + name.str() +
           ".bound : static_cast<void *>(" + name.str() + ".host.data()))";
  }
  void emitCreateProgram(CodeWriter &w) const override {
    w.line("cc_rt::cpu::Communicator cc_world(MPI_COMM_WORLD);");
    w.line("std::unique_ptr<cc_Program> cc_program;");
    w.line("cc_st = cc_Program::create(cc_world, cc_sizes, &cc_program);");
  }
  void emitSynchronize(CodeWriter &, bool) const override {}
  void emitDownload(CodeWriter &w) const override {
    w.line("if (cc_result.bound)");
    w.line("  std::memcpy(cc_result.host.data(), cc_result.bound, "
           "cc_result.host.size());");
  }

private:
  static std::string loop(llvm::StringRef var, llvm::StringRef count) {
    return "for (int64_t " + var.str() + " = 0; " + var.str() + " < " +
           count.str() + "; ++" + var.str() + ")";
  }
};

/// A tile's f16/bf16 results are kept as floats (`cc_s<member>`) and
/// narrowed into their buffers after the tile's loop.
void declareNarrowResults(CodeWriter &w, const Plan &plan,
                          const ElementwiseKernel &k,
                          const FusedKernel *fused) {
  for (size_t m = 0; m < k.members.size(); ++m) {
    const int out = k.members[m].output;
    if (out < 0)
      continue;
    const ir::DType dtype = plan.buffers[out].dtype;
    // The gathered member's tile, narrow or not, unless it is stored into
    // its own buffer where the others are copied from.
    const bool gathered =
        fused && fused->gatheredMember == m && !fused->storeGatheredLocally;
    if (isNarrow(dtype) || gathered)
      w.line(std::string(isNarrow(dtype) ? "float"
                                         : cpuTarget().storageType(dtype)) +
             " cc_s" + std::to_string(m) + "[" + std::to_string(kTile) + "];");
  }
}

/// A fused kernel's tile, before its elements: the reduced tile `cc_red`,
/// combined from every member's block in ascending member order (the block
/// itself when the team has one member), and stored where the plan keeps
/// the reduced value.
void fusedTileStart(CodeWriter &w, const Plan &plan, const FusedKernel &f) {
  if (!f.reducing)
    return;
  const Buffer &out = plan.buffers[f.reducing->output];
  const std::string type = cpuTarget().storageType(out.dtype);
  // One member's block is its own reduction (as a lone collective's alias
  // is): read where it is.
  w.line(type + " cc_combined[" + std::to_string(kTile) + "];");
  w.line("const " + type + " *__restrict__ cc_red = cc_combined;");
  w.line("if (cc_members == 1)");
  w.line("  cc_red = static_cast<const " + type +
         " *>(cc_from[0]) + cc_from_at + cc_first;");
  w.line("else");
  w.line("  coconet::rt::cpu::combineTile(cc_from, cc_members, cc_from_at + "
         "cc_first, cc_combined, cc_len,");
  w.line("                                " + runtimeDType(out.dtype) + ", " +
         runtimeReduceOp(f.reducing->op) + ");");
  const std::string bytes =
      "static_cast<size_t>(cc_len) * sizeof(" + type + ")";
  if (f.storeReduced)
    w.line("std::memcpy(" + out.name + " + cc_first, cc_red, " + bytes + ");");
  if (f.gatherReduced) {
    // Gathered as it is reduced, into every member's output.
    w.open("for (int64_t cc_q = 0; cc_q < cc_members; ++cc_q)");
    w.line("std::memcpy(static_cast<" + type +
           " *>(cc_to[cc_q]) + cc_to_at + cc_first, cc_red, " + bytes + ");");
    w.close();
  }
}

/// A fused kernel's tile, after its elements: the gathered member's tile
/// into its own buffer (where the plan keeps it) and into every member's
/// block of the gathered output.
void fusedTileEnd(CodeWriter &w, const Plan &plan, const FusedKernel &f) {
  if (!f.gatheredMember)
    return;
  const ElementwiseKernel &k = f.kernel();
  const std::string m = std::to_string(*f.gatheredMember);
  const Buffer &in = plan.buffers[k.members[*f.gatheredMember].output];
  const Buffer &out = plan.buffers[f.gather->output];
  const std::string type = cpuTarget().storageType(out.dtype);
  // A wide value stored into its own buffer by the tile's loop is copied
  // from there (while it is in the cache); else from the tile.
  const bool fromOwn = !isNarrow(out.dtype) && f.storeGatheredLocally;
  auto copyTo = [&](const std::string &to) {
    if (isNarrow(out.dtype))
      return "coconet::rt::cpu::narrow(cc_s" + m + ", " + to + ", cc_len);";
    return "std::memcpy(" + to + ", " +
           (fromOwn ? in.name + " + cc_first" : "cc_s" + m) +
           ", static_cast<size_t>(cc_len) * sizeof(" + type + "));";
  };
  if (f.storeGatheredLocally && !fromOwn)
    w.line(copyTo(in.name + " + cc_first"));
  w.open("for (int64_t cc_q = 0; cc_q < cc_members; ++cc_q)");
  if (f.selfInView)
    w.line("if (cc_q == cc_me)").line("  continue; // this member's own block");
  w.line(
      copyTo("static_cast<" + type + " *>(cc_to[cc_q]) + cc_to_at + cc_first"));
  w.close();
}

/// The input index of a tile's element in ElementForm::Tile: the reduced
/// input of a fused kernel is the tile cc_red (widened into cc_l<i> when it
/// is f16/bf16).
BodyOverrides fusedOverrides(const Plan &plan, const FusedKernel *f) {
  BodyOverrides o;
  if (!f)
    return o;
  // The gathered member goes to the tile cc_s<m> unless the loop stores a
  // wide value into its own buffer, which the copies then read.
  if (f->gatheredMember) {
    const ir::DType dtype =
        plan.buffers[f->kernel().members[*f->gatheredMember].output].dtype;
    if (isNarrow(dtype) || !f->storeGatheredLocally)
      o.tileMember = static_cast<int>(*f->gatheredMember);
  }
  if (f->reducedInput) {
    const ir::DType dtype = plan.buffers[f->reducing->output].dtype;
    o.input = static_cast<int>(*f->reducedInput);
    o.inputValue = isNarrow(dtype)
                       ? "cc_l" + std::to_string(*f->reducedInput) + "[cc_j]"
                       : "cc_red[cc_j]";
  }
  return o;
}
void narrowResults(CodeWriter &w, const Plan &plan, const ElementwiseKernel &k,
                   const FusedKernel *fused) {
  for (size_t m = 0; m < k.members.size(); ++m) {
    const int out = k.members[m].output;
    if (fused && fused->gatheredMember == m)
      continue; // copied into every member after the tile
    if (out >= 0 && isNarrow(plan.buffers[out].dtype))
      w.line("coconet::rt::cpu::narrow(cc_s" + std::to_string(m) + ", " +
             bufferName(plan, out) + " + cc_first, cc_len);");
  }
}

/// An elementwise kernel's loops. One whose tensors are all read at the
/// loop's index (flat) runs on vectors: OpenMP's threads share tiles of
/// kTile elements, the f16/bf16 tensors of a tile are widened to floats
/// before it and its f16/bf16 results narrowed after it (cpu/convert.h:
/// F16C where the CPU has it), and the tile's elements are one `omp simd`
/// loop of float arithmetic. Others loop over elements.
void CpuTarget::emitElementwiseLoops(CodeWriter &w, const Plan &plan,
                                     const Step &step,
                                     const ElementwiseKernel &k,
                                     const UniformValues &uniform,
                                     const FusedKernel *fused,
                                     bool ranged) const {
  if (!k.flat) {
    emitRowTileLoops(w, plan, step, k, uniform, fused, ranged);
    return;
  }
  const std::string tileSize = std::to_string(kTile);
  const std::string end = ranged ? "cc_end" : "cc_g.n";
  if (ranged && !fused)
    w.line("(void)cc_g; // a part's range stands for the whole count");
  w.line("const int64_t cc_tiles = (" +
         std::string(ranged ? "cc_end - cc_begin" : "cc_g.n") + " + " +
         std::to_string(kTile - 1) + ") / " + tileSize + ";");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_t = 0; cc_t < cc_tiles; ++cc_t)");
  w.line("const int64_t cc_first = " +
         std::string(ranged ? "cc_begin + " : "") + "cc_t * " + tileSize + ";");
  w.line("const int64_t cc_len = std::min<int64_t>(" + tileSize + ", " + end +
         " - cc_first);");
  if (fused)
    fusedTileStart(w, plan, *fused);
  for (unsigned i = 0; i < k.inputs.size(); ++i) {
    const KernelInput &in = k.inputs[i];
    const Buffer &b = plan.buffers[in.buffer];
    if (in.isScalar() || !isNarrow(b.dtype))
      continue;
    const std::string tile = "cc_l" + std::to_string(i);
    const bool reduced = fused && fused->reducedInput == i;
    const std::string at =
        reduced ? std::string("cc_red")
                : b.name + (in.shifted ? " + cc_g.o" + std::to_string(i) : "") +
                      " + cc_first";
    w.line("float " + tile + "[" + tileSize + "];");
    w.line("coconet::rt::cpu::widen(" + at + ", " + tile + ", cc_len);");
  }
  declareNarrowResults(w, plan, k, fused);
  w.line("#pragma omp simd");
  w.open("for (int64_t cc_j = 0; cc_j < cc_len; ++cc_j)");
  w.line("const int64_t cc_i = cc_first + cc_j;");
  w.line("(void)cc_i;"); // unused when every tensor is in a tile
  emitElementBody(w, plan, step, k, *this, ElementForm::Tile, uniform,
                  fusedOverrides(plan, fused));
  w.close();
  narrowResults(w, plan, k, fused);
  if (fused)
    fusedTileEnd(w, plan, *fused);
  w.close();
}

/// An elementwise kernel that reads some tensor at computed indices
/// (broadcasts) runs in tiles of at most kTile elements within one row of
/// the domain's last dimension: the other coordinates are the row's, the
/// last one is the tile's start plus the lane, so no element divides its
/// index; a tensor read along the row is widened a tile at a time as in
/// the flat form, one broadcast along it is the same element for the
/// whole tile.
void CpuTarget::emitRowTileLoops(CodeWriter &w, const Plan &plan,
                                 const Step &step, const ElementwiseKernel &k,
                                 const UniformValues &uniform,
                                 const FusedKernel *fused, bool ranged) const {
  const unsigned rank = k.domain.size();
  const std::string last = std::to_string(rank - 1);
  const std::string row = "cc_g.e" + last;
  const std::string tileSize = std::to_string(kTile);
  const std::string inner = "cc_c" + last;
  llvm::SmallVector<bool, 4> used = usedCoordinates(k);
  w.line("const int64_t cc_row_tiles = (" + row + " + " +
         std::to_string(kTile - 1) + ") / " + tileSize + ";");
  // A range is whole rows (lower/Chunks.cpp).
  w.line("const int64_t cc_tiles = " + row + " > 0 ? " +
         (ranged ? "(cc_end - cc_begin)" : "cc_g.n") + " / " + row +
         " * cc_row_tiles : 0;");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_t = 0; cc_t < cc_tiles; ++cc_t)");
  w.line("const int64_t cc_r = " +
         (ranged ? "cc_begin / " + row + " + " : std::string()) +
         "cc_t / cc_row_tiles;");
  w.line("const int64_t cc_lo = (cc_t % cc_row_tiles) * " + tileSize + ";");
  w.line("const int64_t cc_first = cc_r * " + row + " + cc_lo;");
  w.line("const int64_t cc_len = std::min<int64_t>(" + tileSize + ", " + row +
         " - cc_lo);");
  // The row's coordinates (every dimension but the last).
  emitCoordinates(w, llvm::ArrayRef<bool>(used).drop_back(), "cc_r", "cc_g");
  if (fused)
    fusedTileStart(w, plan, *fused);
  for (unsigned i = 0; i < k.inputs.size(); ++i) {
    const KernelInput &in = k.inputs[i];
    const Buffer &b = plan.buffers[in.buffer];
    if (!isNarrow(b.dtype) || !rowContiguous(in, rank))
      continue;
    const std::string tile = "cc_l" + std::to_string(i);
    w.line("float " + tile + "[" + tileSize + "];");
    if (fused && fused->reducedInput == i) {
      w.line("coconet::rt::cpu::widen(cc_red, " + tile + ", cc_len);");
      continue;
    }
    const std::string widen =
        "coconet::rt::cpu::widen(" + b.name + " + " +
        inputIndex(&k, in, i, k.domain, "cc_first", "cc_g") + ", " + tile +
        ", cc_len);";
    if (in.flat || in.shifted) {
      w.line(widen);
      continue;
    }
    // The tile's first element: the index at the last coordinate cc_lo.
    w.line("{");
    w.indent();
    w.line("const int64_t " + inner + " = cc_lo;");
    w.line(widen);
    w.close();
  }
  declareNarrowResults(w, plan, k, fused);
  w.line("#pragma omp simd");
  w.open("for (int64_t cc_j = 0; cc_j < cc_len; ++cc_j)");
  w.line("const int64_t cc_i = cc_first + cc_j;");
  w.line("(void)cc_i;");
  if (used[rank - 1]) { // unused when only tiles read along the row
    w.line("const int64_t " + inner + " = cc_lo + cc_j;");
    w.line("(void)" + inner + ";");
  }
  emitElementBody(w, plan, step, k, *this, ElementForm::RowTile, uniform,
                  fusedOverrides(plan, fused));
  w.close();
  narrowResults(w, plan, k, fused);
  if (fused)
    fusedTileEnd(w, plan, *fused);
  w.close();
}

} // namespace

const Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace coconet::codegen
