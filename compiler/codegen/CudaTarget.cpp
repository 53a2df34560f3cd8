//===- CudaTarget.cpp - the CUDA target: kernels, NCCL, cuBLAS ------------===//
//
// Kernels use grid-stride loops with 64-bit, bounds-checked indices. An
// elementwise kernel whose tensors are all read at the loop's index comes
// in two instantiations: one moving 16 bytes per load and store of its
// widest element type (chosen at launch when every pointer is aligned),
// one element at a time otherwise. f16/bf16 are stored as __half /
// __nv_bfloat16 and computed in f32; arithmetic uses the _rn intrinsics,
// which nvcc never contracts into FMAs. Reductions and norms reduce each
// output's elements within one block, in f64, through a fixed tree
// (cc_block_reduce, coconet/cuda/kernels.h), so a result does not depend
// on scheduling. Collectives are NCCL calls on the mesh axis's
// communicator (grouped when independent and adjacent), matmuls the
// runtime's cuBLAS call; nothing synchronises the host within a step.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::codegen {

using namespace lower;

namespace {

/// The vector width of a flat kernel: 16 bytes of its widest element read
/// or written in vectors (not a segment table, nor a value per segment,
/// which are read an element at a time).
int vectorWidth(const Plan &plan, const Step &step) {
  size_t widest = 1;
  const auto *k = std::get_if<ElementwiseKernel>(&step.body);
  for (unsigned b : step.reads) {
    if (plan.buffers[b].kind == Buffer::Kind::Table ||
        (k && llvm::any_of(k->inputs, [&](const KernelInput &in) {
           return in.table && in.buffer == b;
         })))
      continue;
    widest = std::max<size_t>(widest, ir::dtypeSize(plan.buffers[b].dtype));
  }
  for (unsigned b : step.writes)
    widest = std::max<size_t>(widest, ir::dtypeSize(plan.buffers[b].dtype));
  return static_cast<int>(16 / widest);
}

/// A flat elementwise kernel runs on vectors, then elements for the tail;
/// any other on elements.
constexpr ElementForm kVectorsThenTail[] = {ElementForm::VectorLane,
                                            ElementForm::Scalar};
constexpr ElementForm kElements[] = {ElementForm::Scalar};

TargetInfo cudaInfo() {
  TargetInfo i;
  i.displayName = "CUDA";
  i.sourceExtension = ".cu";
  i.runtimeNamespace = "coconet::rt::cuda";
  i.headerIncludes = "#include \"coconet/cuda/runtime.h\"\n"
                     "\n"
                     "#include <cuda_bf16.h>\n"
                     "#include <cuda_fp16.h>\n"
                     "#include <cuda_runtime.h>";
  i.sourceIncludes = "#include \"coconet/cuda/kernels.h\"";
  i.kernelPrelude = "// kThreads, cc_grid, cc_vec, cc_aligned, cc_round_f16, "
                    "cc_round_bf16,\n"
                    "// cc_store, cc_block_reduce: coconet/cuda/kernels.h.\n"
                    "using namespace coconet::rt::cuda::kernels;\n";
  i.readOnlyPointer = "__restrict__ ";
  i.flatBlocks = kVectorsThenTail;
  i.otherBlocks = kElements;
  i.elementwisePrologue =
      "const int64_t cc_stride = static_cast<int64_t>(blockDim.x) * "
      "gridDim.x;\n"
      "const int64_t cc_first = static_cast<int64_t>(blockIdx.x) * "
      "blockDim.x + threadIdx.x;";
  // A block per group, combined through a fixed tree.
  i.groupThreads = true;
  i.groupShared = "__shared__";
  i.groupLeader = "if (threadIdx.x == 0)";
  i.groupBarrier = "__syncthreads();";
  i.collectiveGroupBegin = "COCONET_NCCL_CHECK(ncclGroupStart());";
  i.collectiveGroupEnd = "COCONET_NCCL_CHECK(ncclGroupEnd());";
  i.stepPrologue = "// The stream the steps run on (an overlap's parts run on "
                   "a second one).\n"
                   "[[maybe_unused]] cudaStream_t cc_stream = cc_s.stream;";
  i.stepStreamArg = ", cc_stream";
  // The second stream and its events are the runtime's
  // (coconet/cuda/overlap.h); the code names what it does with them.
  i.overlapHeader = "coconet/cuda/overlap.h";
  i.overlapState = "coconet::rt::cuda::SideStream cc_side;";
  i.overlapCreate = "COCONET_RETURN_IF_ERROR(state->cc_side.create());";
  i.overlapPath = "std::string(\"a second stream\")";
  i.part = {"// On the second stream, after this part (and all before it), "
            "while the\n"
            "// main stream computes the next part.\n"
            "COCONET_RETURN_IF_ERROR(cc_s.cc_side.fork(cc_s.stream));",
            "{", "cudaStream_t cc_stream = cc_s.cc_side.stream();", "", "}"};
  i.dispatch.prepare = "state->cc_side.addArrivals";
  i.dispatch.before =
      "// Every part's alltoall on the second stream once what comes before "
      "is done;\n"
      "// the main stream computes each part once it has arrived.\n"
      "COCONET_RETURN_IF_ERROR(cc_s.cc_side.fork(cc_s.stream));";
  i.dispatch.open = "{";
  i.dispatch.arrived = "COCONET_RETURN_IF_ERROR(cc_s.cc_side.arrived(cc_c));";
  i.dispatch.await =
      "COCONET_RETURN_IF_ERROR(cc_s.cc_side.await(cc_s.stream, cc_c));";
  i.overlapEnd = "// The main stream goes on when every part is done.\n"
                 "COCONET_RETURN_IF_ERROR(cc_s.cc_side.join(cc_s.stream));";
  i.teamHeader = "coconet/cuda/team.h";
  i.algorithmHeader = "coconet/cuda/team_collectives.h";
  i.algorithmRunner = "coconet::rt::cuda::AlgorithmRunner";
  i.algorithmFileHeader = "coconet/cuda/algorithm.h";
  i.teamRank = "cc_t.rank";
  i.teamSize = "cc_t.size";
  i.teamBarrier = "cc_team_sync(cc_t);";
  i.teamMemory = "symmetric memory (every member's grid has the same blocks: "
                 "block b meets\nblock b of the others at the team's "
                 "barriers)";
  i.memorySpace = "device";
  i.scalarDoc = ".";
  i.classStepDoc = "///\n"
                   "/// operator() enqueues the whole step on the stream given "
                   "to create() and\n"
                   "/// never synchronises the host, so a step can be captured "
                   "in a CUDA graph.";
  i.stepDoc = "Enqueues one step.";
  i.createParams = ", cudaStream_t stream";
  i.stateInit = "state->stream = stream;";
  // The driver runs under MPI when built with COCONET_WITH_MPI (one GPU per
  // rank), on one rank otherwise.
  i.ifMpi = "#if defined(COCONET_WITH_MPI)";
  i.orElse = "#else";
  i.endIfMpi = "#endif";
  i.driverHeader = "coconet/cuda/driver.h";
  i.pythonHeader = "coconet/cuda/python.h";
  i.pythonStreamArg = ", static_cast<cudaStream_t>(cc_stream)";
  i.pythonTarget = "cuda";
  return i;
}

class CudaTarget final : public Target {
public:
  CudaTarget() : Target(cudaInfo()) {}

  // --- Values ------------------------------------------------------------

  std::string storageType(ir::DType dtype) const override {
    if (dtype == ir::DType::F16)
      return "__half";
    if (dtype == ir::DType::BF16)
      return "__nv_bfloat16";
    return plainType(dtype);
  }
  std::string load(ir::DType dtype, llvm::StringRef expr) const override {
    if (dtype == ir::DType::F16)
      return "__half2float(" + expr.str() + ")";
    if (dtype == ir::DType::BF16)
      return "__bfloat162float(" + expr.str() + ")";
    return expr.str();
  }
  std::string store(ir::DType dtype, llvm::StringRef expr) const override {
    if (dtype == ir::DType::F16)
      return "__float2half_rn(" + expr.str() + ")";
    if (dtype == ir::DType::BF16)
      return "__float2bfloat16_rn(" + expr.str() + ")";
    return expr.str();
  }
  std::string narrow(Narrowing how, ir::DType dtype,
                     llvm::StringRef expr) const override {
    const bool half = dtype == ir::DType::F16;
    switch (how) {
    case Narrowing::StoreFromDouble:
      return std::string(half ? "__double2half(" : "__double2bfloat16(") +
             expr.str() + ")";
    case Narrowing::RoundFloat:
      return std::string(half ? "cc_round_f16(" : "cc_round_bf16(") +
             expr.str() + ")";
    case Narrowing::FromDouble:
      return load(dtype, narrow(Narrowing::StoreFromDouble, dtype, expr));
    }
    return expr.str();
  }
  std::string arith(llvm::StringRef printed, llvm::StringRef, bool isDouble,
                    llvm::StringRef a, llvm::StringRef b) const override {
    return std::string("__") + (isDouble ? "d" : "f") + printed.str() + "_rn(" +
           a.str() + ", " + b.str() + ")";
  }
  std::string mathCall(llvm::StringRef fn, bool isDouble,
                       llvm::StringRef args) const override {
    return fn.str() + (isDouble ? "" : "f") + "(" + args.str() + ")";
  }
  std::string sqrtRounded(bool isDouble, llvm::StringRef x) const override {
    return std::string(isDouble ? "__dsqrt_rn(" : "__fsqrt_rn(") + x.str() +
           ")";
  }

  // --- Kernels -----------------------------------------------------------

  void openKernel(CodeWriter &w, llvm::StringRef name, llvm::StringRef params,
                  bool flat, bool team) const override {
    // A flat elementwise kernel is instantiated for vectors and elements.
    if (flat)
      w.line("template <bool kVector>");
    // A team's grid is kTeamBlocksPerSM blocks a multiprocessor, all
    // resident: the bounds hold the registers to what that needs.
    w.line(team ? "__global__ void __launch_bounds__(kThreads, "
                  "kTeamBlocksPerSM)"
                : "__global__ void __launch_bounds__(kThreads)");
    w.open(name + "(" + params + ")");
  }
  void openLoop(CodeWriter &w, LoopKind kind, llvm::StringRef var,
                llvm::StringRef count) const override {
    switch (kind) {
    case LoopKind::Items:
      w.line("const int64_t cc_stride = static_cast<int64_t>(blockDim.x) * "
             "gridDim.x;");
      w.open("for (int64_t " + var +
             " = static_cast<int64_t>(blockIdx.x) * "
             "blockDim.x + threadIdx.x; " +
             var + " < " + count + "; " + var + " += cc_stride)");
      return;
    case LoopKind::Groups:
      // One block per group.
      w.open("for (int64_t " + var + " = blockIdx.x; " + var + " < " + count +
             "; " + var + " += gridDim.x)");
      return;
    case LoopKind::GroupElements:
      w.open("for (int64_t " + var + " = threadIdx.x; " + var + " < " + count +
             "; " + var + " += kThreads)");
      return;
    }
  }
  void openBlocks(CodeWriter &w, ElementForm form,
                  const BlockContext &c) const override;
  void closeBlocks(CodeWriter &w, ElementForm form,
                   const BlockContext &) const override {
    w.close();
    if (form != ElementForm::VectorLane)
      return;
    // The scalar loop takes the tail.
    w.line("cc_tail = cc_vectors * W;");
    w.close();
  }
  void emitBlockOp(CodeWriter &w, ElementForm form, const BlockContext &c,
                   const lower::BlockOp &op) const override;
  std::string groupCombine(llvm::StringRef value,
                           llvm::StringRef combine) const override {
    return "cc_block_reduce(" + value.str() + ", " + combine.str() + ")";
  }

  // --- Steps ---------------------------------------------------------------

  void emitCollective(CodeWriter &w, const Plan &plan, const CollectiveCall &s,
                      const CollectiveOperands &ops) const override;
  void emitMatMul(CodeWriter &w, const Plan &plan, const MatMulCall &mm,
                  const MatMulOperands &o) const override {
    if (!o.counts.empty()) {
      // The counts to the host (the stream waits), then cuBLAS per group.
      // (Of an overlap's part: part 0 takes the counts to the host.)
      w.line(std::string("COCONET_RETURN_IF_ERROR(coconet::rt::cuda::") +
             (o.part.empty() ? "groupedMatmul(" : "groupedMatmulPart(") +
             "cc_s.blas, cc_s.stream, " +
             runtimeDType(plan.buffers[mm.c].dtype) + ",");
      w.line("    " + o.m + ", " + o.n + ", " + o.k + ", " + o.a + ", " + o.b +
             ", " + o.groups + ", " + o.localGroups + ", " + o.counts + ",");
      w.line("    " + o.hostCounts + ".data(), " + o.c +
             (o.part.empty() ? "" : ", " + o.part + ", " + o.parts) + "));");
      return;
    }
    // cuBLAS works on the stream its handle was given: the main one.
    w.line("COCONET_RETURN_IF_ERROR(coconet::rt::cuda::matmul(cc_s.blas, "
           "cc_s.stream, " +
           runtimeDType(plan.buffers[mm.c].dtype) + ",");
    w.line("    " + o.batch + ", " + o.m + ", " + o.n + ", " + o.k + ", " +
           o.a + ", " + o.strideA + ", " + o.b + ", " + o.strideB + ", " + o.c +
           ", " + o.strideC + "));");
  }
  void emitCopy(CodeWriter &w, llvm::StringRef to, llvm::StringRef from,
                llvm::StringRef count, ir::DType dtype) const override {
    w.line("COCONET_CUDA_CHECK(cudaMemcpyAsync(" + to + ", " + from +
           ", static_cast<size_t>(" + count + ") * sizeof(" +
           storageType(dtype) + "), cudaMemcpyDeviceToDevice, cc_stream));");
  }
  void emitStoreScalar(CodeWriter &w, llvm::StringRef to,
                       llvm::StringRef value) const override {
    w.line("COCONET_CUDA_CHECK(cc_store_async(" + to + ", " + value +
           ", cc_stream));");
  }
  void emitLaunch(CodeWriter &w, const Plan &plan, const Step &step,
                  llvm::StringRef g, llvm::StringRef args,
                  const KernelRange &range) const override;

  // --- Fused collectives ----------------------------------------------------

  std::string fusedTeamParams(const Plan &plan,
                              const FusedKernel &k) const override {
    std::string team = "const cc_team cc_t";
    if (k.reducing)
      team += ", const " + storageType(plan.buffers[k.reducing->input].dtype) +
              " *cc_from";
    if (k.gather)
      team +=
          ", " + storageType(plan.buffers[k.gather->output].dtype) + " *cc_to";
    return team;
  }
  std::string fusedTeamArgs(const Plan &plan, const FusedKernel &k,
                            llvm::StringRef team) const override {
    std::string out = team.str() + "->device()";
    if (k.reducing)
      out += ", " + bufferName(plan, k.reducing->input);
    if (k.gather)
      out += ", " + bufferName(plan, k.gather->output);
    return out;
  }
  void emitFusedLaunch(CodeWriter &w, const Plan &plan, const FusedKernel &k,
                       llvm::StringRef g, llvm::StringRef args,
                       const KernelRange &range) const override;
  void emitTeamBufferState(CodeWriter &, const Plan &,
                           const Buffer &) const override {}
  void emitTeamBufferBind(CodeWriter &, const Plan &, const Buffer &,
                          llvm::StringRef) const override {}

  // --- The program object ----------------------------------------------------

  void emitStateMembers(CodeWriter &w, const Plan &plan) const override {
    w.line("cudaStream_t stream = nullptr;");
    if (hasMatMul(plan))
      w.line("cublasHandle_t blas = nullptr;");
    if (!teamAlgorithmAxes(plan).empty()) {
      w.comment("The one- and two-shot collectives the schedule chose: a "
                "team per axis\n(NCCL's collectives where none can be made).");
      w.line("std::unique_ptr<coconet::rt::cuda::TeamCollectives> "
             "algorithms;");
    }
    for (const Step &s : plan.steps) {
      if (const auto *c = std::get_if<CollectiveCall>(&s.body);
          c && c->kind == Collective::AllToAllV)
        w.line("coconet::rt::cuda::AllToAllV " + geometryMember(s) +
               "_alltoallv;");
      if (const auto *m = std::get_if<MatMulCall>(&s.body); m && m->counts)
        w.line("std::vector<int32_t> " + geometryMember(s) + "_counts;");
    }
  }
  void emitCreateLibraries(CodeWriter &w, const Plan &plan) const override {
    if (hasMatMul(plan)) {
      w.line("COCONET_CUBLAS_CHECK(cublasCreate(&state->blas));");
      w.line("COCONET_CUBLAS_CHECK(cublasSetStream(state->blas, stream));");
    }
    // Dropless routing: each alltoallv's room for every member's counts,
    // and each grouped matmul's counts on the host.
    for (const Step &s : plan.steps) {
      if (const auto *c = std::get_if<CollectiveCall>(&s.body);
          c && c->kind == Collective::AllToAllV)
        emitCreateCall(
            w, plan,
            "state->" + geometryMember(s) + "_alltoallv.create(*state->mesh, " +
                std::to_string(c->axis) + ", " +
                printExtent(c->groups, plan.mesh, names::createSize) +
                ", allocator)",
            "the " + s.summary);
      if (const auto *m = std::get_if<MatMulCall>(&s.body); m && m->counts)
        w.line("state->" + geometryMember(s) + "_counts.resize(" +
               printExtent(m->groups, plan.mesh, names::createSize) + ");");
    }
    const auto axes = teamAlgorithmAxes(plan);
    if (axes.empty())
      return;
    std::string list;
    for (int a : axes)
      list += (list.empty() ? "" : ", ") + std::to_string(a);
    emitCreateCall(w, plan,
                   "coconet::rt::cuda::TeamCollectives::create(*state->mesh, "
                   "{" +
                       list + "}, 0, &state->algorithms)",
                   "the teams of the one- and two-shot collectives");
  }
  void emitDestroyLibraries(CodeWriter &w, const Plan &plan) const override {
    if (!hasMatMul(plan))
      return;
    w.line("if (cc_state->blas)");
    w.line("  cublasDestroy(cc_state->blas);");
  }
};

using lower::BlockOp;
using lower::BlockValue;

/// The vector instantiation's loop: `W` elements per load and store, then
/// the scalar loop takes the tail (the elements from cc_tail); a kernel
/// that is not flat has only the scalar loop.
void CudaTarget::openBlocks(CodeWriter &w, ElementForm form,
                            const BlockContext &c) const {
  const bool ranged = c.ranged;
  if (form == ElementForm::VectorLane || !c.k.flat) {
    // A part's range stands for the geometry's count (a host compiler's
    // -Wextra sees the unused parameter: the CUDA emulation's g++).
    if (ranged && !c.fused)
      w.line("(void)cc_g; // a part's range stands for the whole count");
    w.line(std::string("int64_t cc_tail = ") + (ranged ? "cc_begin" : "0") +
           ";");
  }
  if (form == ElementForm::VectorLane) {
    w.open("if constexpr (kVector)");
    w.line("constexpr int W = " + std::to_string(vectorWidth(c.plan, c.step)) +
           ";");
    // A range's start is a multiple of W (its launch checks).
    w.line(std::string("const int64_t cc_vectors = ") +
           (ranged ? "cc_end" : "cc_g.n") + " / W;");
    w.open(std::string("for (int64_t cc_v = ") +
           (ranged ? "cc_begin / W + " : "") +
           "cc_first; cc_v < cc_vectors; cc_v += cc_stride)");
    return;
  }
  w.open("for (int64_t cc_i = cc_tail + cc_first; cc_i < " +
         std::string(ranged ? "cc_end" : "cc_g.n") + "; cc_i += cc_stride)");
}

void CudaTarget::emitBlockOp(CodeWriter &w, ElementForm form,
                             const BlockContext &c, const BlockOp &op) const {
  const Plan &plan = c.plan;
  const ElementwiseKernel &k = c.k;
  const FusedKernel *f = c.fused;
  const bool vector = form == ElementForm::VectorLane;
  // The reduced value: the reduced input's vector `cc_l<i>` (or
  // `cc_reduced` when no member reads it), the element `cc_red`.
  const std::string reduced = !vector ? std::string("cc_red")
                              : f && f->reducedInput
                                  ? "cc_l" + std::to_string(*f->reducedInput)
                                  : std::string("cc_reduced");
  auto vec = [&](unsigned buffer) {
    return "cc_vec<" + storageType(plan.buffers[buffer].dtype) + ", W>";
  };
  auto value = [&](BlockValue v, unsigned buffer) -> std::string {
    if (v.kind == BlockValue::Kind::Reduced)
      return reduced;
    if (vector)
      return "cc_s" + std::to_string(v.index);
    return store(plan.buffers[buffer].dtype,
                 memberName(plan, c.step, k.members[v.index]));
  };
  // A block of `buffer` at `base`.
  auto at = [&](unsigned buffer, const std::string &base) {
    return vector
               ? "reinterpret_cast<" + vec(buffer) + " *>(" + base + ")[cc_v]"
               : base + "[cc_i]";
  };
  switch (op.kind) {
  case BlockOp::Kind::TeamReduce:
    // One aligned load from every member, combined lane by lane.
    if (vector)
      w.line("const " + vec(op.buffer) + " " + reduced +
             " = cc_team_reduce_vec<" + runtimeReduceOp(f->reducing->op) +
             ", W>(cc_t, cc_from + cc_from_at, cc_v);");
    else
      w.line("const " + storageType(plan.buffers[op.buffer].dtype) +
             " cc_red = cc_team_reduce<" + runtimeReduceOp(f->reducing->op) +
             ">(cc_t, cc_from + cc_from_at, cc_i);");
    return;
  case BlockOp::Kind::Load: {
    // The element loop reads the scalar form's inputs where they are.
    const unsigned i = op.value.index;
    if (!vector || (f && f->reducedInput == i) || k.inputs[i].table)
      return; // a value per segment is read per element
    const KernelInput &in = k.inputs[i];
    const Buffer &b = plan.buffers[in.buffer];
    const std::string base =
        in.shifted ? "(" + b.name + " + cc_g.o" + std::to_string(i) + ")"
                   : b.name;
    const std::string t = storageType(b.dtype);
    w.line("const cc_vec<" + t + ", W> cc_l" + std::to_string(i) +
           " = reinterpret_cast<const cc_vec<" + t + ", W> *>(" + base +
           ")[cc_v];");
    return;
  }
  case BlockOp::Kind::Compute: {
    if (!vector) {
      // Members are stored by the element body, but the one only stored
      // into the peers; the reduced input is the combined value.
      BodyOverrides o;
      for (unsigned m = 0; m < k.members.size(); ++m)
        if (k.members[m].output &&
            !c.body.stored({BlockValue::Kind::Member, m}))
          o.skipStore = m;
      if (f && f->reducedInput) {
        o.input = f->reducedInput;
        o.inputValue = load(plan.buffers[f->reducing->output].dtype, "cc_red");
      }
      emitElementBody(w, plan, c.step, k, *this, form, c.uniform, o);
      return;
    }
    for (unsigned m = 0; m < k.members.size(); ++m)
      if (k.members[m].output)
        w.line(vec(*k.members[m].output) + " cc_s" + std::to_string(m) + ";");
    w.line("#pragma unroll");
    w.open("for (int cc_j = 0; cc_j < W; ++cc_j)");
    w.line("const int64_t cc_i = cc_v * W + cc_j;");
    w.line("(void)cc_i;");
    emitElementBody(w, plan, c.step, k, *this, form, c.uniform);
    w.close();
    return;
  }
  case BlockOp::Kind::Store:
    // The scalar form's members were stored by the element body.
    if (vector || op.value.kind == BlockValue::Kind::Reduced)
      w.line(at(op.buffer, bufferName(plan, op.buffer)) + " = " +
             value(op.value, op.buffer) + ";");
    return;
  case BlockOp::Kind::StoreToPeers:
    w.line(at(op.buffer, "cc_peer(cc_t, cc_q, cc_to + cc_to_at)") + " = " +
           value(op.value, op.buffer) + ";");
    return;
  }
}

void CudaTarget::emitCollective(CodeWriter &w, const Plan &,
                                const CollectiveCall &s,
                                const CollectiveOperands &ops) const {
  const std::string &in = ops.in, &out = ops.out;
  const std::string type =
      "coconet::rt::cuda::ncclType(" + runtimeDType(s.dtype) + ")";
  const std::string op =
      "coconet::rt::cuda::ncclOp(" + runtimeReduceOp(s.op) + ")";
  const std::string comm =
      "cc_s.mesh->axisComm(" + std::to_string(s.axis) + ")";
  const std::string bytes = "static_cast<size_t>(" + ops.outCount +
                            ") * sizeof(" + storageType(s.dtype) + ")";
  // An algorithm file's table: its runner, made by create()
  // (codegen/AlgorithmCode.cpp).
  if (s.table) {
    w.line("COCONET_RETURN_IF_ERROR(cc_s." + s.tableName + "_runner->run(" +
           in + ", " + out + ", cc_stream));");
    return;
  }
  // A schedule's one- or two-shot algorithm: the team's kernels.
  if (ir::isTeamAlgorithm(s.algorithm)) {
    const std::string algorithm =
        "coconet::rt::cuda::TeamCollectives::Algorithm::" +
        teamAlgorithmEnumerator(s.algorithm);
    const std::string dtype = runtimeDType(s.dtype);
    const std::string axis = std::to_string(s.axis);
    std::string call;
    switch (s.kind) {
    case Collective::AllReduce:
      call = "allReduce(" + in + ", " + out + ", " + ops.count + ", " + dtype +
             ", " + runtimeReduceOp(s.op) + ", " + axis + ", " + algorithm;
      break;
    case Collective::ReduceScatter:
      call = "reduceScatter(" + in + ", " + out + ", " + ops.outCount + ", " +
             dtype + ", " + runtimeReduceOp(s.op) + ", " + axis + ", " +
             algorithm;
      break;
    case Collective::AllGather:
      call = "allGather(" + in + ", " + out + ", " + ops.count + ", " + dtype +
             ", " + axis + ", " + algorithm;
      break;
    case Collective::AllToAll:
      call = "allToAll(" + in + ", " + out + ", " + ops.blockCount + ", " +
             dtype + ", " + axis + ", " + algorithm;
      break;
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:
      break; // the algorithm pass refuses these
    case Collective::AllToAllV:
      break; // a one-shot alltoallv is the CPU target's; here NCCL's
    }
    if (!call.empty()) {
      w.line("COCONET_RETURN_IF_ERROR(cc_s.algorithms->" + call +
             ", cc_stream));");
      return;
    }
  }
  switch (s.kind) {
  case Collective::AllReduce:
    w.line("COCONET_NCCL_CHECK(ncclAllReduce(" + in + ", " + out + ", " +
           ops.count + ", " + type + ", " + op + ", " + comm +
           ", cc_stream));");
    break;
  case Collective::ReduceScatter:
    w.line("COCONET_NCCL_CHECK(ncclReduceScatter(" + in + ", " + out + ", " +
           ops.outCount + ", " + type + ", " + op + ", " + comm +
           ", cc_stream));");
    break;
  case Collective::AllGather:
    w.line("COCONET_NCCL_CHECK(ncclAllGather(" + in + ", " + out + ", " +
           ops.count + ", " + type + ", " + comm + ", cc_stream));");
    break;
  case Collective::AllToAll:
    if (ops.blockStride.empty()) {
      w.line("COCONET_NCCL_CHECK(ncclAlltoAll(" + in + ", " + out + ", " +
             ops.blockCount + ", " + type + ", " + comm + ", cc_stream));");
      break;
    }
    // Blocks apart (an overlap's part of every block): a send and a receive
    // per member, in one group.
    w.line("COCONET_NCCL_CHECK(ncclGroupStart());");
    w.open("for (int64_t cc_r = 0; cc_r < cc_s.mesh->axisSize(" +
           std::to_string(s.axis) + "); ++cc_r)");
    w.line("COCONET_NCCL_CHECK(ncclSend(" + in + " + cc_r * " +
           ops.blockStride + ", " + ops.blockCount + ", " + type +
           ", static_cast<int>(cc_r), " + comm + ", cc_stream));");
    w.line("COCONET_NCCL_CHECK(ncclRecv(" + out + " + cc_r * " +
           ops.blockStride + ", " + ops.blockCount + ", " + type +
           ", static_cast<int>(cc_r), " + comm + ", cc_stream));");
    w.close();
    w.line("COCONET_NCCL_CHECK(ncclGroupEnd());");
    break;
  case Collective::AllToAllV:
    // Every member's counts to the host (the stream waits for them), then
    // the rows: a send and a receive per member, in one group.
    // (Of an overlap's part: part 0 takes the counts to the host.)
    w.line("COCONET_RETURN_IF_ERROR(" + ops.state +
           (ops.part.empty() ? ".run(" : ".runPart(") + in + ", " + ops.rowsIn +
           ", " + ops.counts + ", " + out + ", " + ops.rowsOut + ",");
    w.line("    nullptr, " + ops.row + ", " + runtimeDType(s.dtype) +
           (ops.part.empty() ? "" : ", " + ops.part + ", " + ops.parts) +
           ", cc_stream));");
    break;
  case Collective::Broadcast:
    w.line("COCONET_NCCL_CHECK(ncclBroadcast(" + in + ", " + out + ", " +
           ops.count + ", " + type + ", " + ops.root + ", " + comm +
           ", cc_stream));");
    break;
  case Collective::Reduce:
    w.comment("Ranks other than the root get zeros.");
    w.line("COCONET_CUDA_CHECK(cudaMemsetAsync(" + out + ", 0, " + bytes +
           ", cc_stream));");
    w.line("COCONET_NCCL_CHECK(ncclReduce(" + in + ", " + out + ", " +
           ops.count + ", " + type + ", " + op + ", " + ops.root + ", " + comm +
           ", cc_stream));");
    break;
  case Collective::SendRecv: {
    std::string me = s.axis < 0
                         ? "cc_s.mesh->rank()"
                         : "cc_s.mesh->coord(" + std::to_string(s.axis) + ")";
    std::string size =
        s.axis < 0 ? "cc_s.mesh->size()"
                   : "cc_s.mesh->axisSize(" + std::to_string(s.axis) + ")";
    std::string off = std::to_string(s.offset);
    w.line("{");
    w.indent();
    w.line("const int64_t cc_to = " + me + " + (" + off + "), cc_from = " + me +
           " - (" + off + ");");
    w.line("const bool cc_send = cc_to >= 0 && cc_to < " + size +
           ", cc_recv = cc_from >= 0 && cc_from < " + size + ";");
    w.comment("A rank with no one to receive from gets zeros.");
    w.line("if (!cc_recv)");
    w.line("  COCONET_CUDA_CHECK(cudaMemsetAsync(" + out + ", 0, " + bytes +
           ", cc_stream));");
    w.line("COCONET_NCCL_CHECK(ncclGroupStart());");
    w.line("if (cc_send)");
    w.line("  COCONET_NCCL_CHECK(ncclSend(" + in + ", " + ops.count + ", " +
           type + ", static_cast<int>(cc_to), " + comm + ", cc_stream));");
    w.line("if (cc_recv)");
    w.line("  COCONET_NCCL_CHECK(ncclRecv(" + out + ", " + ops.count + ", " +
           type + ", static_cast<int>(cc_from), " + comm + ", cc_stream));");
    w.line("COCONET_NCCL_CHECK(ncclGroupEnd());");
    w.close();
    break;
  }
  }
}

void CudaTarget::emitLaunch(CodeWriter &w, const Plan &plan, const Step &step,
                            llvm::StringRef gRef, llvm::StringRef args,
                            const KernelRange &range) const {
  const std::string g = gRef.str();
  const std::string items =
      range.whole() ? kernelItems(step, g) : range.hi + " - " + range.lo;
  // COCONET_CUDA_CHECK(cc_launch(KERNEL, grid, block, 0, stream, args...));
  auto launch = [&](const std::string &kernel) {
    return "COCONET_CUDA_CHECK(cc_launch(" + kernel + ", cc_grid(" + items +
           "), kThreads, 0, cc_stream, " + args.str() + "));";
  };
  auto *k = std::get_if<ElementwiseKernel>(&step.body);
  if (k && k->flat) {
    // The vector instantiation when every tensor is aligned.
    std::string aligned;
    const int width = vectorWidth(plan, step);
    auto check = [&](const Buffer &buf, const std::string &ptr) {
      aligned += " &&\n    cc_aligned(" + ptr + ", " +
                 std::to_string(width * ir::dtypeSize(buf.dtype)) + ")";
    };
    for (unsigned i = 0; i < k->inputs.size(); ++i) {
      const KernelInput &in = k->inputs[i];
      const Buffer &buf = plan.buffers[in.buffer];
      if (!in.isScalar())
        check(buf, in.shifted ? buf.name + " + " + g + ".o" + std::to_string(i)
                              : buf.name);
    }
    for (const auto &m : k->members)
      if (m.output)
        check(plan.buffers[*m.output], bufferName(plan, *m.output));
    // A range's vectors start at its first element.
    if (!range.whole())
      aligned +=
          " &&\n    (" + range.lo + ") % " + std::to_string(width) + " == 0";
    const std::string flag = "cc_" + step.name + "_vector";
    w.line("const bool " + flag + " = " + items +
           " >= " + std::to_string(width) + aligned + ";");
    w.line("if (" + flag + ")");
    w.line("  " + launch("cc_" + step.name + "<true>"));
    w.line("else");
    w.line("  " + launch("cc_" + step.name + "<false>"));
  } else {
    w.line(launch("cc_" + step.name));
  }
}

void CudaTarget::emitFusedLaunch(CodeWriter &w, const Plan &plan,
                                 const FusedKernel &f, llvm::StringRef gRef,
                                 llvm::StringRef args,
                                 const KernelRange &range) const {
  const std::string g = gRef.str();
  const ElementwiseKernel &k = f.kernel();
  const std::string team = "cc_s." + f.team;
  const std::string items =
      range.whole() ? g + ".n" : range.hi + " - " + range.lo;
  // The same grid on every member: the team's blocks, fewer for a small
  // block (the element count is the same on every member).
  w.line("const unsigned cc_blocks = std::min<unsigned>(cc_grid(" + items +
         "), static_cast<unsigned>(" + team + "->blocks()));");
  auto launch = [&](const std::string &kernel) {
    return "COCONET_CUDA_CHECK(cc_launch(" + kernel +
           ", cc_blocks, kThreads, 0, cc_stream, " + args.str() + "));";
  };
  if (!k.flat) {
    w.line(launch(f.name));
    return;
  }
  // The vector instantiation when every tensor is aligned, this member's
  // blocks of the symmetric ones included (every member's memory is at
  // the same offsets).
  std::string aligned;
  const int width = vectorWidth(plan, f.step);
  auto check = [&](ir::DType dtype, const std::string &ptr) {
    aligned += " &&\n    cc_aligned(" + ptr + ", " +
               std::to_string(width * ir::dtypeSize(dtype)) + ")";
  };
  for (unsigned i = 0; i < k.inputs.size(); ++i) {
    const KernelInput &in = k.inputs[i];
    const Buffer &buf = plan.buffers[in.buffer];
    if (in.isScalar())
      continue;
    if (f.reducedInput == i) {
      const Buffer &from = plan.buffers[f.reducing->input];
      std::string at = f.reducing->kind == Collective::ReduceScatter
                           ? " + " + team + "->rank() * " + g + ".n"
                           : std::string();
      if (!range.whole())
        at = " + (" + range.fromAt + ")";
      check(from.dtype, from.name + at);
      if (f.gatherReduced) {
        const Buffer &to = plan.buffers[f.gather->output];
        check(to.dtype, to.name + " + " + team + "->rank() * " + g + ".n");
      }
      continue;
    }
    check(buf.dtype, in.shifted
                         ? buf.name + " + " + g + ".o" + std::to_string(i)
                         : buf.name);
  }
  if (f.storeReduced)
    check(plan.buffers[f.reducing->output].dtype,
          bufferName(plan, f.reducing->output));
  for (size_t m = 0; m < k.members.size(); ++m) {
    const std::optional<unsigned> out = k.members[m].output;
    if (!out)
      continue;
    if (f.gatheredMember == m) {
      const Buffer &to = plan.buffers[f.gather->output];
      check(to.dtype, to.name + " + " + team + "->rank() * " + g + ".n");
      if (!f.storeGatheredLocally)
        continue;
    }
    check(plan.buffers[*out].dtype, bufferName(plan, *out));
  }
  if (!range.whole())
    aligned +=
        " &&\n    (" + range.lo + ") % " + std::to_string(width) + " == 0";
  const std::string flag = f.name + "_vector";
  w.line("const bool " + flag + " = " + items + " >= " + std::to_string(width) +
         aligned + ";");
  w.line("if (" + flag + ")");
  w.line("  " + launch(f.name + "<true>"));
  w.line("else");
  w.line("  " + launch(f.name + "<false>"));
}

} // namespace

const Target &cudaTarget() {
  static const CudaTarget target;
  return target;
}

} // namespace coconet::codegen
