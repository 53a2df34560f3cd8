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

namespace coconet::codegen {

using namespace lower;

namespace {

/// Elements per tile of a flat elementwise kernel: the f16/bf16 tensors of
/// a tile, widened, stay in the first-level cache.
constexpr int kTile = 512;

class CpuTarget final : public Target {
public:
  llvm::StringRef displayName() const override { return "CPU"; }
  llvm::StringRef sourceExtension() const override { return ".cpp"; }
  llvm::StringRef runtimeNamespace() const override {
    return "coconet::rt::cpu";
  }

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
      return storeNarrowFromDouble(dtype, expr);
    return expr.str();
  }
  std::string storeNarrowFromDouble(ir::DType dtype,
                                    llvm::StringRef expr) const override {
    return std::string(dtype == ir::DType::F16 ? "coconet::rt::toHalf("
                                               : "coconet::rt::toBFloat16(") +
           expr.str() + ")";
  }
  std::string roundNarrow(ir::DType dtype,
                          llvm::StringRef expr) const override {
    return std::string(dtype == ir::DType::F16
                           ? "coconet::rt::roundToHalf("
                           : "coconet::rt::roundToBFloat16(") +
           expr.str() + ")";
  }
  std::string narrowFromDouble(ir::DType dtype,
                               llvm::StringRef expr) const override {
    return "static_cast<float>(" + roundNarrow(dtype, expr) + ")";
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

  void emitKernelPrelude(CodeWriter &) const override {}
  void openKernel(CodeWriter &w, llvm::StringRef name, llvm::StringRef params,
                  bool) const override {
    w.open("void " + name + "(" + params + ")");
  }
  llvm::StringRef readOnlyPointer() const override { return "__restrict__ "; }
  llvm::StringRef writtenPointer() const override { return "__restrict__ "; }
  void openItemLoop(CodeWriter &w, llvm::StringRef var,
                    llvm::StringRef count) const override {
    w.line("#pragma omp parallel for schedule(static)");
    w.open(loop(var, count));
  }
  void emitElementwisePrologue(CodeWriter &) const override {}
  void emitElementwiseLoops(CodeWriter &w, const Plan &plan, const Step &step,
                            const ElementwiseKernel &k,
                            const UniformValues &uniform) const override;
  void emitRowTileLoops(CodeWriter &w, const Plan &plan, const Step &step,
                        const ElementwiseKernel &k,
                        const UniformValues &uniform) const;
  void openGroupLoop(CodeWriter &w, llvm::StringRef var,
                     llvm::StringRef count) const override {
    // One group is one thread's work: a parallel loop only pays for more.
    w.line("#pragma omp parallel for schedule(static) if (" + count + " > 1)");
    w.open(loop(var, count));
  }
  std::string groupElementLoop(llvm::StringRef var,
                               llvm::StringRef count) const override {
    return loop(var, count);
  }
  void declareGroupSum(CodeWriter &) const override {}
  std::string groupCombine(llvm::StringRef value,
                           llvm::StringRef) const override {
    return value.str();
  }
  void emitGroupCombine(CodeWriter &, llvm::StringRef,
                        llvm::StringRef) const override {}
  void shareFromLeader(CodeWriter &w, llvm::StringRef, llvm::StringRef,
                       llvm::StringRef value,
                       llvm::StringRef lhs) const override {
    if (lhs != value)
      w.line(lhs + " = " + value + ";");
  }
  bool openLeader(CodeWriter &) const override { return false; }
  void endGroup(CodeWriter &) const override {}

  // --- Steps ---------------------------------------------------------------

  void beginCollectiveGroup(CodeWriter &) const override {}
  void endCollectiveGroup(CodeWriter &) const override {}
  void emitCollective(CodeWriter &w, const Plan &plan, const CollectiveCall &c,
                      llvm::StringRef g) const override {
    const std::string in = bufferName(plan, c.input);
    const std::string out = bufferName(plan, c.output);
    const std::string dtype = runtimeDType(c.dtype);
    const std::string axis = std::to_string(c.axis);
    const std::string op = runtimeReduceOp(c.op);
    const std::string count = g.str() + ".count";
    std::string call;
    switch (c.kind) {
    case Collective::AllReduce:
      call = "allReduce(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + op + ", " + axis + ")";
      break;
    case Collective::ReduceScatter:
      call = "reduceScatter(" + in + ", " + out + ", " + g.str() +
             ".out_count, " + dtype + ", " + op + ", " + axis + ")";
      break;
    case Collective::AllGather:
      call = "allGather(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + axis + ")";
      break;
    case Collective::Broadcast:
      call = "broadcast(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + std::to_string(c.root) + ", " + axis + ")";
      break;
    case Collective::Reduce:
      call = "reduce(" + in + ", " + out + ", " + count + ", " + dtype + ", " +
             op + ", " + std::to_string(c.root) + ", " + axis + ")";
      break;
    case Collective::SendRecv:
      call = "sendRecv(" + in + ", " + out + ", " + count + ", " + dtype +
             ", " + std::to_string(c.offset) + ", " + axis + ")";
      break;
    }
    w.line("COCONET_RETURN_IF_ERROR(cc_s.mesh->" + call + ");");
  }
  void emitMatMul(CodeWriter &w, const Plan &plan, const MatMulCall &mm,
                  llvm::StringRef gRef) const override {
    const std::string g = gRef.str();
    w.line("coconet::rt::cpu::matmul(" +
           runtimeDType(plan.buffers[mm.c].dtype) + ", " + g + ".batch, " + g +
           ".m, " + g + ".n, " + g + ".k,");
    w.line("    " + bufferName(plan, mm.a) + ", " + g + ".m * " + g + ".k, " +
           bufferName(plan, mm.b) + ", " +
           (mm.batchedB ? g + ".k * " + g + ".n" : std::string("0")) + ", " +
           bufferName(plan, mm.c) + ", " + g + ".m * " + g + ".n);");
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
                  llvm::StringRef, llvm::StringRef args) const override {
    w.line("cc_" + step.name + "(" + args + ");");
  }

  // --- The program object ----------------------------------------------------

  void emitHeaderIncludes(CodeWriter &w) const override {
    w.line("#include \"coconet/cpu/runtime.h\"");
  }
  void emitSourceIncludes(CodeWriter &w) const override {
    w.line("#include \"coconet/cpu/convert.h\"");
  }
  llvm::StringRef memorySpace() const override { return "host"; }
  llvm::StringRef scalarDoc() const override {
    return ", f16/bf16 ones as float and rounded.";
  }
  void emitStepDoc(CodeWriter &) const override {}
  llvm::StringRef createParams() const override { return ""; }
  llvm::StringRef stepDoc() const override { return "Runs one step."; }
  void emitStateMembers(CodeWriter &, const Plan &) const override {}
  void emitStateInit(CodeWriter &) const override {}
  void emitCreateLibraries(CodeWriter &, const Plan &) const override {}
  void emitDestroyLibraries(CodeWriter &, const Plan &) const override {}

  // --- The driver ------------------------------------------------------------

  void emitDriverPreamble(CodeWriter &w) const override {
    w.comment("The CPU target always runs under MPI.");
    w.line("#ifndef COCONET_WITH_MPI")
        .line("#define COCONET_WITH_MPI 1")
        .line("#endif");
  }
  void emitMpiOrElse(CodeWriter &w, llvm::ArrayRef<std::string> mpi,
                     llvm::ArrayRef<std::string>) const override {
    for (const std::string &l : mpi)
      w.line(l);
  }
  llvm::StringRef blockDoc() const override { return "."; }
  void emitBlockMembers(CodeWriter &) const override {}
  void emitBlockAllocation(CodeWriter &) const override {}
  void emitUpload(CodeWriter &, llvm::StringRef) const override {}
  std::string blockPointer(llvm::StringRef name) const override {
    return "static_cast<void *>(" + name.str() + ".host.data())";
  }
  void emitCreateProgram(CodeWriter &w) const override {
    w.line("cc_rt::cpu::Communicator cc_world(MPI_COMM_WORLD);");
    w.line("std::unique_ptr<cc_Program> cc_program;");
    w.line("cc_st = cc_Program::create(cc_world, cc_sizes, &cc_program);");
  }
  void emitSynchronize(CodeWriter &, bool) const override {}
  void emitDownload(CodeWriter &) const override {}

private:
  static std::string loop(llvm::StringRef var, llvm::StringRef count) {
    return "for (int64_t " + var.str() + " = 0; " + var.str() + " < " +
           count.str() + "; ++" + var.str() + ")";
  }
};

/// A tile's f16/bf16 results are kept as floats (`cc_s<member>`) and
/// narrowed into their buffers after the tile's loop.
void declareNarrowResults(CodeWriter &w, const Plan &plan,
                          const ElementwiseKernel &k) {
  for (size_t m = 0; m < k.members.size(); ++m)
    if (k.members[m].output >= 0 &&
        isNarrow(plan.buffers[k.members[m].output].dtype))
      w.line("float cc_s" + std::to_string(m) + "[" + std::to_string(kTile) +
             "];");
}
void narrowResults(CodeWriter &w, const Plan &plan,
                   const ElementwiseKernel &k) {
  for (size_t m = 0; m < k.members.size(); ++m) {
    const int out = k.members[m].output;
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
                                     const UniformValues &uniform) const {
  if (!k.flat) {
    emitRowTileLoops(w, plan, step, k, uniform);
    return;
  }
  const std::string tileSize = std::to_string(kTile);
  w.line("const int64_t cc_tiles = (cc_g.n + " + std::to_string(kTile - 1) +
         ") / " + tileSize + ";");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_t = 0; cc_t < cc_tiles; ++cc_t)");
  w.line("const int64_t cc_first = cc_t * " + tileSize + ";");
  w.line("const int64_t cc_len = std::min<int64_t>(" + tileSize +
         ", cc_g.n - cc_first);");
  for (unsigned i = 0; i < k.inputs.size(); ++i) {
    const KernelInput &in = k.inputs[i];
    const Buffer &b = plan.buffers[in.buffer];
    if (in.isScalar() || !isNarrow(b.dtype))
      continue;
    const std::string tile = "cc_l" + std::to_string(i);
    const std::string at = b.name +
                           (in.shifted ? " + cc_g.o" + std::to_string(i) : "") +
                           " + cc_first";
    w.line("float " + tile + "[" + tileSize + "];");
    w.line("coconet::rt::cpu::widen(" + at + ", " + tile + ", cc_len);");
  }
  declareNarrowResults(w, plan, k);
  w.line("#pragma omp simd");
  w.open("for (int64_t cc_j = 0; cc_j < cc_len; ++cc_j)");
  w.line("const int64_t cc_i = cc_first + cc_j;");
  w.line("(void)cc_i;"); // unused when every tensor is in a tile
  emitElementBody(w, plan, step, k, *this, ElementForm::Tile, uniform);
  w.close();
  narrowResults(w, plan, k);
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
                                 const UniformValues &uniform) const {
  const unsigned rank = k.domain.size();
  const std::string last = std::to_string(rank - 1);
  const std::string row = "cc_g.e" + last;
  const std::string tileSize = std::to_string(kTile);
  const std::string inner = "cc_c" + last;
  llvm::SmallVector<bool, 4> used = usedCoordinates(k);
  w.line("const int64_t cc_row_tiles = (" + row + " + " +
         std::to_string(kTile - 1) + ") / " + tileSize + ";");
  w.line("const int64_t cc_tiles = " + row + " > 0 ? cc_g.n / " + row +
         " * cc_row_tiles : 0;");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_t = 0; cc_t < cc_tiles; ++cc_t)");
  w.line("const int64_t cc_r = cc_t / cc_row_tiles;");
  w.line("const int64_t cc_lo = (cc_t % cc_row_tiles) * " + tileSize + ";");
  w.line("const int64_t cc_first = cc_r * " + row + " + cc_lo;");
  w.line("const int64_t cc_len = std::min<int64_t>(" + tileSize + ", " + row +
         " - cc_lo);");
  // The row's coordinates (every dimension but the last).
  emitCoordinates(w, llvm::ArrayRef<bool>(used).drop_back(), "cc_r", "cc_g");
  for (unsigned i = 0; i < k.inputs.size(); ++i) {
    const KernelInput &in = k.inputs[i];
    const Buffer &b = plan.buffers[in.buffer];
    if (!isNarrow(b.dtype) || !rowContiguous(in, rank))
      continue;
    const std::string tile = "cc_l" + std::to_string(i);
    w.line("float " + tile + "[" + tileSize + "];");
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
  declareNarrowResults(w, plan, k);
  w.line("#pragma omp simd");
  w.open("for (int64_t cc_j = 0; cc_j < cc_len; ++cc_j)");
  w.line("const int64_t cc_i = cc_first + cc_j;");
  w.line("(void)cc_i;");
  if (used[rank - 1]) { // unused when only tiles read along the row
    w.line("const int64_t " + inner + " = cc_lo + cc_j;");
    w.line("(void)" + inner + ";");
  }
  emitElementBody(w, plan, step, k, *this, ElementForm::RowTile, uniform);
  w.close();
  narrowResults(w, plan, k);
  w.close();
}

} // namespace

const Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace coconet::codegen
