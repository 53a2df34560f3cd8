//===- CudaKernels.cpp - the CUDA target's kernels and steps --------------===//
//
// Kernels use grid-stride loops with 64-bit, bounds-checked indices. An
// elementwise kernel whose tensors are all read at the loop's index comes
// in two instantiations: one moving 16 bytes per load and store of its
// widest element type (chosen at launch when every pointer is aligned),
// one element at a time otherwise. f16/bf16 are stored as __half /
// __nv_bfloat16 and computed in f32. Reductions and norms reduce each
// output's elements within one block, in f64, through a fixed tree, so a
// result does not depend on scheduling. Collectives are NCCL calls on the
// mesh axis's communicator (grouped when independent and adjacent),
// matmuls the runtime's cuBLAS call; nothing synchronises the host.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::codegen {

using namespace lower;

namespace {

constexpr Target kCuda = Target::Cuda;

std::string params(const Plan &plan, const Step &step) {
  std::string out = "const " + geometryType(step) + " cc_g";
  for (const KernelArg &a : kernelArgs(plan, step, kCuda)) {
    std::string decl = a.decl;
    // Read-only pointers do not alias anything the kernel writes.
    if (llvm::StringRef(decl).starts_with("const ") &&
        decl.find('*') != std::string::npos)
      decl.insert(decl.find('*') + 1, "__restrict__ ");
    out += ", " + decl;
  }
  return out;
}

/// The kernels' fixed helpers are the runtime's (coconet/cuda/kernels.h).
void emitPrelude(CodeWriter &w) {
  w.comment("kThreads, cc_grid, cc_vec, cc_aligned, cc_round_f16, cc_round_bf16,\n"
            "cc_store, cc_block_reduce: coconet/cuda/kernels.h.");
  w.line("using namespace coconet::rt::cuda::kernels;");
  w.line();
}

/// The vector width of a flat kernel: 16 bytes of its widest element.
int vectorWidth(const Plan &plan, const Step &step) {
  size_t widest = 1;
  for (unsigned b : step.reads)
    widest = std::max<size_t>(widest, ir::dtypeSize(plan.buffers[b].dtype));
  for (unsigned b : step.writes)
    widest = std::max<size_t>(widest, ir::dtypeSize(plan.buffers[b].dtype));
  return static_cast<int>(16 / widest);
}

void emitElementwise(CodeWriter &w, const Plan &plan, const Step &step,
                     const ElementwiseKernel &k) {
  const bool vector = k.flat;
  const int width = vector ? vectorWidth(plan, step) : 1;
  if (vector)
    w.line("template <bool kVector>");
  w.line("__global__ void __launch_bounds__(kThreads)");
  w.open("cc_" + step.name + "(" + params(plan, step) + ")");
  w.line("const int64_t cc_stride = static_cast<int64_t>(blockDim.x) * "
         "gridDim.x;");
  w.line("const int64_t cc_first = static_cast<int64_t>(blockIdx.x) * "
         "blockDim.x + threadIdx.x;");
  const UniformValues uniform = emitScalarInputs(w, plan, k, kCuda);
  w.line("int64_t cc_tail = 0;");
  if (vector) {
    std::string W = std::to_string(width);
    w.open("if constexpr (kVector)");
    w.line("constexpr int W = " + W + ";");
    w.line("const int64_t cc_vectors = cc_g.n / W;");
    w.open("for (int64_t cc_v = cc_first; cc_v < cc_vectors; cc_v += "
           "cc_stride)");
    for (unsigned i = 0; i < k.inputs.size(); ++i) {
      const KernelInput &in = k.inputs[i];
      if (in.isScalar())
        continue;
      const Buffer &b = plan.buffers[in.buffer];
      std::string t = storageType(b.dtype, kCuda);
      std::string base = in.shifted
                             ? "(" + b.name + " + cc_g.o" + std::to_string(i) +
                                   ")"
                             : b.name;
      w.line("const cc_vec<" + t + ", W> cc_l" + std::to_string(i) +
             " = reinterpret_cast<const cc_vec<" + t + ", W> *>(" + base +
             ")[cc_v];");
    }
    for (size_t m = 0; m < k.members.size(); ++m)
      if (k.members[m].output >= 0)
        w.line("cc_vec<" +
               storageType(plan.buffers[k.members[m].output].dtype, kCuda) +
               ", W> cc_s" + std::to_string(m) + ";");
    w.line("#pragma unroll");
    w.open("for (int cc_j = 0; cc_j < W; ++cc_j)");
    w.line("const int64_t cc_i = cc_v * W + cc_j;");
    w.line("(void)cc_i;");
    emitElementBody(w, plan, step, k, kCuda, ElementForm::VectorLane,
                    uniform);
    w.close();
    for (size_t m = 0; m < k.members.size(); ++m) {
      if (k.members[m].output < 0)
        continue;
      const Buffer &b = plan.buffers[k.members[m].output];
      w.line("reinterpret_cast<cc_vec<" + storageType(b.dtype, kCuda) +
             ", W> *>(" + b.name + ")[cc_v] = cc_s" + std::to_string(m) + ";");
    }
    w.close();
    w.line("cc_tail = cc_vectors * W;");
    w.close();
  }
  w.open("for (int64_t cc_i = cc_tail + cc_first; cc_i < cc_g.n; cc_i += "
         "cc_stride)");
  emitElementBody(w, plan, step, k, kCuda, ElementForm::Scalar, uniform);
  w.close();
  w.close();
}

/// Reduction: one block per output element (grid-stride over outputs).
void emitReduction(CodeWriter &w, const Plan &plan, const Step &step,
                   const ReductionKernel &r) {
  const Buffer &in = plan.buffers[r.input];
  const Buffer &out = plan.buffers[r.output];
  const bool isF = ir::isFloat(r.inType);
  const bool max = r.kind == ir::ReductionKind::Max;
  const bool maxMin = max || r.kind == ir::ReductionKind::Min;
  const std::string acc = isF ? "double" : "uint64_t";
  std::string identity, combine;
  if (isF) {
    identity = maxMin ? "static_cast<double>(NAN)" : "0.0";
    combine = maxMin ? std::string("coconet::rt::") +
                           (max ? "maxNumber(a, b)" : "minNumber(a, b)")
                     : "a + b";
  } else if (maxMin) {
    bool u = r.inType == ir::DType::U64;
    identity = u ? (max ? "UINT64_C(0)" : "~UINT64_C(0)")
                 : (max ? "static_cast<uint64_t>(INT64_MIN)"
                        : "static_cast<uint64_t>(INT64_MAX)");
    combine = u ? std::string("(a ") + (max ? ">" : "<") + " b ? a : b)"
                : std::string("(static_cast<int64_t>(a) ") + (max ? ">" : "<") +
                      " static_cast<int64_t>(b) ? a : b)";
  } else {
    identity = "UINT64_C(0)";
    combine = "a + b";
  }
  w.line("__global__ void __launch_bounds__(kThreads)");
  w.open("cc_" + step.name + "(" + params(plan, step) + ")");
  w.line("const int64_t cc_outputs = cc_g.outer * cc_g.inner;");
  w.open("for (int64_t cc_o = blockIdx.x; cc_o < cc_outputs; cc_o += "
         "gridDim.x)");
  w.line("const int64_t cc_outer = cc_o / cc_g.inner, cc_inner = cc_o % "
         "cc_g.inner;");
  w.line(acc + " cc_acc = " + identity + ";");
  w.open("for (int64_t cc_k = threadIdx.x; cc_k < cc_g.reduced; cc_k += "
         "kThreads)");
  std::string element = in.name + "[(cc_outer * cc_g.reduced + cc_k) * "
                                  "cc_g.inner + cc_inner]";
  std::string value = "static_cast<" + acc + ">(" +
                      loadValue(in.dtype, kCuda, element) + ")";
  w.line("const " + acc + " b = " + value + ";");
  w.line("const " + acc + " a = cc_acc;");
  bool squares = r.kind == ir::ReductionKind::Norm ||
                 r.kind == ir::ReductionKind::SumSquares;
  w.line("cc_acc = " +
         (squares ? std::string("a + b * b") : combine) + ";");
  w.close();
  w.line("cc_acc = cc_block_reduce(cc_acc, [](" + acc + " a, " + acc +
         " b) { return " + (squares ? std::string("a + b") : combine) + "; });");
  w.open("if (threadIdx.x == 0)");
  std::string result = r.kind == ir::ReductionKind::Norm ? "sqrt(cc_acc)"
                                                         : "cc_acc";
  if (ir::isFloat(out.dtype))
    w.line(out.name + "[cc_o] = " +
           storeFromDouble(out.dtype, kCuda,
                           isF ? result : "static_cast<double>(" + result + ")") +
           ";");
  else
    w.line(out.name + "[cc_o] = static_cast<" + storageType(out.dtype, kCuda) +
           ">(" + result + ");");
  w.close();
  w.close();
  w.close();
}

void emitNorm(CodeWriter &w, const Plan &plan, const Step &step,
              const NormKernel &k) {
  const Buffer &x = plan.buffers[k.x], &out = plan.buffers[k.output];
  const Buffer &gamma = plan.buffers[k.gamma.buffer];
  const Buffer &eps = plan.buffers[k.eps];
  Extents domain = k.rows;
  domain.push_back(k.row);
  auto xAt = [&](const std::string &i) {
    return "static_cast<double>(" +
           loadValue(x.dtype, kCuda, x.name + "[" + i + "]") + ")";
  };
  w.line("__global__ void __launch_bounds__(kThreads)");
  w.open("cc_" + step.name + "(" + params(plan, step) + ")");
  std::string e = eps.kind == Buffer::Kind::ScalarParam
                      ? eps.name
                      : loadValue(eps.dtype, kCuda, eps.name + "[0]");
  w.line("const double cc_eps = static_cast<double>(" + e + ");");
  w.line("const double cc_h = static_cast<double>(cc_g.h);");
  w.line("auto cc_add = [](double a, double b) { return a + b; };");
  w.open("for (int64_t cc_row = blockIdx.x; cc_row < cc_g.rows; cc_row += "
         "gridDim.x)");
  w.line("const int64_t cc_base = cc_row * cc_g.h;");
  w.line("double cc_mean = 0;");
  if (k.layerNorm) {
    w.line("for (int64_t cc_j = threadIdx.x; cc_j < cc_g.h; cc_j += "
           "kThreads)");
    w.line("  cc_mean += " + xAt("cc_base + cc_j") + ";");
    w.line("cc_mean = cc_block_reduce(cc_mean, cc_add) / cc_h;");
    w.line("__shared__ double cc_row_mean;");
    w.line("if (threadIdx.x == 0)");
    w.line("  cc_row_mean = cc_mean;");
    w.line("__syncthreads();");
    w.line("cc_mean = cc_row_mean;");
  }
  w.line("double cc_sq = 0;");
  w.open("for (int64_t cc_j = threadIdx.x; cc_j < cc_g.h; cc_j += kThreads)");
  w.line("const double cc_v = " + xAt("cc_base + cc_j") + " - cc_mean;");
  w.line("cc_sq += cc_v * cc_v;");
  w.close();
  w.line("cc_sq = cc_block_reduce(cc_sq, cc_add);");
  w.line("__shared__ double cc_row_scale;");
  w.line("if (threadIdx.x == 0)");
  w.line("  cc_row_scale = 1.0 / sqrt(cc_sq / cc_h + cc_eps);");
  w.line("__syncthreads();");
  w.line("const double cc_scale = cc_row_scale;");
  w.open("for (int64_t cc_j = threadIdx.x; cc_j < cc_g.h; cc_j += kThreads)");
  w.line("const int64_t cc_i = cc_base + cc_j;");
  {
    llvm::SmallVector<bool, 4> used(domain.size(), false);
    usedBy(k.gamma, used);
    if (k.beta)
      usedBy(*k.beta, used);
    emitCoordinates(w, used, "cc_i", "cc_g");
  }
  std::string gi = inputIndex(nullptr, k.gamma, 0, domain, "cc_i", "cc_g");
  w.line("double cc_v = (" + xAt("cc_i") + " - cc_mean) * cc_scale * "
         "static_cast<double>(" +
         loadValue(gamma.dtype, kCuda, gamma.name + "[" + gi + "]") + ");");
  if (k.beta) {
    const Buffer &beta = plan.buffers[k.beta->buffer];
    std::string bi = inputIndex(nullptr, *k.beta, 1, domain, "cc_i", "cc_g");
    w.line("cc_v += static_cast<double>(" +
           loadValue(beta.dtype, kCuda, beta.name + "[" + bi + "]") + ");");
  }
  w.line(out.name + "[cc_i] = " + storeFromDouble(out.dtype, kCuda, "cc_v") +
         ";");
  w.close();
  w.line("__syncthreads();");
  w.close();
  w.close();
}

/// A grid-stride loop over `count` writing `out[to] = in[from]` after the
/// index lines.
void emitCopyKernel(CodeWriter &w, const Plan &plan, const Step &step,
                    llvm::StringRef count,
                    llvm::ArrayRef<std::string> indexLines,
                    const std::string &assignment) {
  (void)plan;
  w.line("__global__ void __launch_bounds__(kThreads)");
  w.open("cc_" + step.name + "(" + params(plan, step) + ")");
  w.line("const int64_t cc_n = " + count.str() + ";");
  w.line("const int64_t cc_stride = static_cast<int64_t>(blockDim.x) * "
         "gridDim.x;");
  w.open("for (int64_t cc_i = static_cast<int64_t>(blockIdx.x) * blockDim.x "
         "+ threadIdx.x; cc_i < cc_n; cc_i += cc_stride)");
  for (const std::string &l : indexLines)
    w.line(l);
  w.line(assignment);
  w.close();
  w.close();
}

/// The count of items a kernel step's grid covers.
std::string gridItems(const Step &step, const std::string &g) {
  if (std::holds_alternative<ElementwiseKernel>(step.body))
    return g + ".n";
  if (std::holds_alternative<ReductionKernel>(step.body))
    return g + ".outer * " + g + ".inner";
  if (std::holds_alternative<NormKernel>(step.body))
    return g + ".rows";
  if (std::holds_alternative<TransposeKernel>(step.body))
    return g + ".batch * " + g + ".rows * " + g + ".cols";
  return g + ".outer * " + g + ".blocks * " + g + ".chunk";
}

} // namespace

void emitCudaKernels(CodeWriter &w, const Plan &plan) {
  emitPrelude(w);
  for (const Step &step : plan.steps) {
    bool kernel = true;
    std::visit(
        [&](const auto &body) {
          using T = std::decay_t<decltype(body)>;
          if constexpr (std::is_same_v<T, ElementwiseKernel>) {
            emitElementwise(w, plan, step, body);
          } else if constexpr (std::is_same_v<T, ReductionKernel>) {
            emitReduction(w, plan, step, body);
          } else if constexpr (std::is_same_v<T, NormKernel>) {
            emitNorm(w, plan, step, body);
          } else if constexpr (std::is_same_v<T, TransposeKernel>) {
            const Buffer &in = plan.buffers[body.input];
            const Buffer &out = plan.buffers[body.output];
            emitCopyKernel(
                w, plan, step, "cc_g.batch * cc_g.rows * cc_g.cols",
                {"const int64_t cc_col = cc_i % cc_g.cols;",
                 "const int64_t cc_row = (cc_i / cc_g.cols) % cc_g.rows;",
                 "const int64_t cc_b = cc_i / (cc_g.cols * cc_g.rows);"},
                out.name + "[(cc_b * cc_g.cols + cc_col) * cc_g.rows + "
                           "cc_row] = " +
                    in.name + "[cc_i];");
          } else if constexpr (std::is_same_v<T, PackKernel>) {
            const Buffer &in = plan.buffers[body.input];
            const Buffer &out = plan.buffers[body.output];
            std::string from =
                "(cc_o * cc_g.blocks + cc_b) * cc_g.chunk + cc_c";
            std::string to = "(cc_b * cc_g.outer + cc_o) * cc_g.chunk + cc_c";
            if (body.unpack)
              std::swap(from, to);
            emitCopyKernel(
                w, plan, step, "cc_g.outer * cc_g.blocks * cc_g.chunk",
                {"const int64_t cc_c = cc_i % cc_g.chunk;",
                 "const int64_t cc_b = (cc_i / cc_g.chunk) % cc_g.blocks;",
                 "const int64_t cc_o = cc_i / (cc_g.chunk * cc_g.blocks);"},
                out.name + "[" + to + "] = " + in.name + "[" + from + "];");
          } else {
            kernel = false;
          }
        },
        step.body);
    if (kernel)
      w.line();
  }
}

void emitCudaStep(CodeWriter &w, const Plan &plan, unsigned index) {
  const Step &step = plan.steps[index];
  const std::string g = "cc_s." + geometryMember(step);
  auto name = [&](unsigned b) { return bufferName(plan, b); };
  const bool groupStart =
      step.groupWithNext && (index == 0 || !plan.steps[index - 1].groupWithNext);
  const bool groupEnd = !step.groupWithNext && index > 0 &&
                        plan.steps[index - 1].groupWithNext;
  if (groupStart)
    w.line("COCONET_NCCL_CHECK(ncclGroupStart());");
  std::visit(
      [&](const auto &body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, MatMulCall>) {
          const Buffer &c = plan.buffers[body.c];
          w.line("COCONET_RETURN_IF_ERROR(coconet::rt::cuda::matmul(cc_s.blas, "
                 "cc_s.stream, " +
                 runtimeDType(c.dtype) + ",");
          w.line("    " + g + ".batch, " + g + ".m, " + g + ".n, " + g +
                 ".k, " + name(body.a) + ", " + g + ".m * " + g + ".k, " +
                 name(body.b) + ", " +
                 (body.batchedB ? g + ".k * " + g + ".n" : std::string("0")) +
                 ", " + name(body.c) + ", " + g + ".m * " + g + ".n));");
        } else if constexpr (std::is_same_v<T, CollectiveCall>) {
          const CollectiveCall &s = body;
          const std::string in = name(body.input), out = name(body.output);
          const std::string type =
              "coconet::rt::cuda::ncclType(" + runtimeDType(s.dtype) + ")";
          const std::string op =
              "coconet::rt::cuda::ncclOp(" + runtimeReduceOp(s.op) + ")";
          const std::string comm =
              "cc_s.mesh->axisComm(" + std::to_string(s.axis) + ")";
          const std::string bytes =
              "static_cast<size_t>(" + g + ".out_count) * sizeof(" +
              storageType(s.dtype, kCuda) + ")";
          switch (s.kind) {
          case Collective::AllReduce:
            w.line("COCONET_NCCL_CHECK(ncclAllReduce(" + in + ", " + out +
                   ", " + g + ".count, " + type + ", " + op + ", " + comm +
                   ", cc_s.stream));");
            break;
          case Collective::ReduceScatter:
            w.line("COCONET_NCCL_CHECK(ncclReduceScatter(" + in + ", " + out +
                   ", " + g + ".out_count, " + type + ", " + op + ", " + comm +
                   ", cc_s.stream));");
            break;
          case Collective::AllGather:
            w.line("COCONET_NCCL_CHECK(ncclAllGather(" + in + ", " + out +
                   ", " + g + ".count, " + type + ", " + comm +
                   ", cc_s.stream));");
            break;
          case Collective::Broadcast:
            w.line("COCONET_NCCL_CHECK(ncclBroadcast(" + in + ", " + out +
                   ", " + g + ".count, " + type + ", " +
                   std::to_string(s.root) + ", " + comm + ", cc_s.stream));");
            break;
          case Collective::Reduce:
            w.comment("Ranks other than the root get zeros.");
            w.line("COCONET_CUDA_CHECK(cudaMemsetAsync(" + out + ", 0, " +
                   bytes + ", cc_s.stream));");
            w.line("COCONET_NCCL_CHECK(ncclReduce(" + in + ", " + out + ", " +
                   g + ".count, " + type + ", " + op + ", " +
                   std::to_string(s.root) + ", " + comm + ", cc_s.stream));");
            break;
          case Collective::SendRecv: {
            std::string me = s.axis < 0 ? "cc_s.mesh->rank()"
                                        : "cc_s.mesh->coord(" +
                                              std::to_string(s.axis) + ")";
            std::string size = s.axis < 0 ? "cc_s.mesh->size()"
                                          : "cc_s.mesh->axisSize(" +
                                                std::to_string(s.axis) + ")";
            std::string off = std::to_string(s.offset);
            w.line("{");
            w.indent();
            w.line("const int64_t cc_to = " + me + " + (" + off +
                   "), cc_from = " + me + " - (" + off + ");");
            w.line("const bool cc_send = cc_to >= 0 && cc_to < " + size +
                   ", cc_recv = cc_from >= 0 && cc_from < " + size + ";");
            w.comment("A rank with no one to receive from gets zeros.");
            w.line("if (!cc_recv)");
            w.line("  COCONET_CUDA_CHECK(cudaMemsetAsync(" + out + ", 0, " +
                   bytes + ", cc_s.stream));");
            w.line("COCONET_NCCL_CHECK(ncclGroupStart());");
            w.line("if (cc_send)");
            w.line("  COCONET_NCCL_CHECK(ncclSend(" + in + ", " + g +
                   ".count, " + type + ", static_cast<int>(cc_to), " + comm +
                   ", cc_s.stream));");
            w.line("if (cc_recv)");
            w.line("  COCONET_NCCL_CHECK(ncclRecv(" + out + ", " + g +
                   ".count, " + type + ", static_cast<int>(cc_from), " + comm +
                   ", cc_s.stream));");
            w.line("COCONET_NCCL_CHECK(ncclGroupEnd());");
            w.close();
            break;
          }
          }
        } else if constexpr (std::is_same_v<T, CopyCall>) {
          const Buffer &out = plan.buffers[body.output];
          w.line("COCONET_CUDA_CHECK(cudaMemcpyAsync(" + name(body.output) +
                 ", " + name(body.input) + ", static_cast<size_t>(" + g +
                 ".count) * sizeof(" + storageType(out.dtype, kCuda) +
                 "), cudaMemcpyDeviceToDevice, cc_s.stream));");
        } else if constexpr (std::is_same_v<T, StoreScalarCall>) {
          const Buffer &out = plan.buffers[body.output];
          w.line("cc_store<<<1, 1, 0, cc_s.stream>>>(" + name(body.output) +
                 ", " + storeValue(out.dtype, kCuda, name(body.input)) + ");");
          w.line("COCONET_CUDA_CHECK(cudaGetLastError());");
        } else {
          std::string args = g;
          for (const KernelArg &a : kernelArgs(plan, step, kCuda))
            args += ", " + a.value;
          std::string launch = "<<<cc_grid(" + gridItems(step, g) +
                               "), kThreads, 0, cc_s.stream>>>(" + args + ");";
          auto *k = std::get_if<ElementwiseKernel>(&step.body);
          if (k && k->flat) {
            // The vector instantiation when every tensor is aligned.
            std::string aligned;
            const int width = vectorWidth(plan, step);
            auto check = [&](const Buffer &buf, const std::string &ptr) {
              aligned += " &&\n    cc_aligned(" + ptr + ", " +
                         std::to_string(width * ir::dtypeSize(buf.dtype)) +
                         ")";
            };
            for (unsigned i = 0; i < k->inputs.size(); ++i) {
              const KernelInput &in = k->inputs[i];
              const Buffer &buf = plan.buffers[in.buffer];
              if (!in.isScalar())
                check(buf, in.shifted ? buf.name + " + " + g + ".o" +
                                            std::to_string(i)
                                      : buf.name);
            }
            for (const auto &m : k->members)
              if (m.output >= 0)
                check(plan.buffers[m.output], bufferName(plan, m.output));
            const std::string flag = "cc_" + step.name + "_vector";
            w.line("const bool " + flag + " = " + g + ".n >= " +
                   std::to_string(width) + aligned + ";");
            w.line("if (" + flag + ")");
            w.line("  cc_" + step.name + "<true>" + launch);
            w.line("else");
            w.line("  cc_" + step.name + "<false>" + launch);
          } else {
            w.line("cc_" + step.name + launch);
          }
          w.line("COCONET_CUDA_CHECK(cudaGetLastError());");
        }
      },
      step.body);
  if (groupEnd)
    w.line("COCONET_NCCL_CHECK(ncclGroupEnd());");
}

} // namespace coconet::codegen
