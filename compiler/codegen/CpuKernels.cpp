//===- CpuKernels.cpp - the CPU target's kernels and steps ----------------===//
//
// Kernels are functions with OpenMP loops over the elements (or rows, or
// output elements) of a block; every element is computed exactly as the
// simulator computes it, reductions accumulate in f64 in the simulator's
// order, so the CPU target agrees with the simulator bit for bit.
// Collectives and matmuls call the runtime (cpu/runtime.h).
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::codegen {

using namespace lower;

namespace {

constexpr Target kCpu = Target::Cpu;

std::string params(const Plan &plan, const Step &step) {
  std::string out = "const " + geometryType(step) + " cc_g";
  for (const KernelArg &a : kernelArgs(plan, step, kCpu))
    out += ", " + a.decl;
  return out;
}

void emitElementwise(CodeWriter &w, const Plan &plan, const Step &step,
                     const ElementwiseKernel &k) {
  w.open("void cc_" + step.name + "(" + params(plan, step) + ")");
  const UniformValues uniform = emitScalarInputs(w, plan, k, kCpu);
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_i = 0; cc_i < cc_g.n; ++cc_i)");
  emitElementBody(w, plan, step, k, kCpu, ElementForm::Scalar, uniform);
  w.close();
  w.close();
}

/// The accumulator of a reduction: f64 for floats, wrapping u64 for
/// integers (as the simulator's Accumulator).
void emitReduction(CodeWriter &w, const Plan &plan, const Step &step,
                   const ReductionKernel &r) {
  const Buffer &in = plan.buffers[r.input];
  const Buffer &out = plan.buffers[r.output];
  const bool isF = ir::isFloat(r.inType);
  const bool unsignedIn = r.inType == ir::DType::U64;
  const bool maxMin = r.kind == ir::ReductionKind::Max ||
                      r.kind == ir::ReductionKind::Min;
  const bool max = r.kind == ir::ReductionKind::Max;
  w.open("void cc_" + step.name + "(" + params(plan, step) + ")");
  w.line("const int64_t cc_n = cc_g.outer * cc_g.inner;");
  w.line("#pragma omp parallel for schedule(static) if (cc_n > 1)");
  w.open("for (int64_t cc_o = 0; cc_o < cc_n; ++cc_o)");
  w.line("const int64_t cc_outer = cc_o / cc_g.inner, cc_inner = cc_o % "
         "cc_g.inner;");
  std::string element = in.name + "[(cc_outer * cc_g.reduced + cc_k) * "
                                  "cc_g.inner + cc_inner]";
  std::string value = loadValue(in.dtype, kCpu, element);
  if (isF) {
    w.line("double cc_acc = 0;");
  } else {
    w.line("uint64_t cc_acc = 0;");
  }
  w.open("for (int64_t cc_k = 0; cc_k < cc_g.reduced; ++cc_k)");
  if (isF)
    w.line("const double cc_v = static_cast<double>(" + value + ");");
  else
    w.line("const uint64_t cc_v = static_cast<uint64_t>(" + value + ");");
  if (maxMin) {
    w.open("if (cc_k == 0)");
    w.line("cc_acc = cc_v;");
    w.line("continue;");
    w.close();
    if (isF)
      w.line(std::string("cc_acc = coconet::rt::") +
             (max ? "maxNumber" : "minNumber") + "(cc_acc, cc_v);");
    else if (unsignedIn)
      w.line(std::string("cc_acc = cc_v ") + (max ? ">" : "<") +
             " cc_acc ? cc_v : cc_acc;");
    else
      w.line(std::string("cc_acc = static_cast<int64_t>(cc_v) ") +
             (max ? ">" : "<") +
             " static_cast<int64_t>(cc_acc) ? cc_v : cc_acc;");
  } else if (r.kind == ir::ReductionKind::Sum) {
    w.line("cc_acc += cc_v;");
  } else if (isF) {
    w.line("cc_acc += cc_v * cc_v;");
  } else {
    w.line("cc_acc += static_cast<uint64_t>(static_cast<double>("
           "static_cast<int64_t>(cc_v)) * static_cast<double>("
           "static_cast<int64_t>(cc_v)));");
  }
  w.close();
  std::string result = r.kind == ir::ReductionKind::Norm
                           ? "std::sqrt(static_cast<double>(cc_acc))"
                           : "cc_acc";
  if (ir::isFloat(out.dtype))
    w.line(out.name + "[cc_o] = " +
           storeFromDouble(out.dtype, kCpu,
                           isF ? result : "static_cast<double>(" + result + ")") +
           ";");
  else
    w.line(out.name + "[cc_o] = static_cast<" + storageType(out.dtype, kCpu) +
           ">(" + result + ");");
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
  w.open("void cc_" + step.name + "(" + params(plan, step) + ")");
  std::string e = eps.kind == Buffer::Kind::ScalarParam
                      ? eps.name
                      : loadValue(eps.dtype, kCpu, eps.name + "[0]");
  w.line("const double cc_eps = static_cast<double>(" + e + ");");
  w.line("const double cc_h = static_cast<double>(cc_g.h);");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_row = 0; cc_row < cc_g.rows; ++cc_row)");
  auto xAt = [&](const std::string &i) {
    return "static_cast<double>(" + loadValue(x.dtype, kCpu, x.name + "[" + i + "]") +
           ")";
  };
  w.line("const int64_t cc_base = cc_row * cc_g.h;");
  w.line(k.layerNorm ? "double cc_mean = 0, cc_sq = 0;"
                     : "double cc_sq = 0;");
  if (k.layerNorm) {
    w.line("for (int64_t cc_j = 0; cc_j < cc_g.h; ++cc_j)");
    w.line("  cc_mean += " + xAt("cc_base + cc_j") + ";");
    w.line("cc_mean /= cc_h;");
  }
  w.open("for (int64_t cc_j = 0; cc_j < cc_g.h; ++cc_j)");
  w.line("const double cc_v = " + xAt("cc_base + cc_j") +
         (k.layerNorm ? " - cc_mean;" : ";"));
  w.line("cc_sq += cc_v * cc_v;");
  w.close();
  w.line("const double cc_scale = 1.0 / std::sqrt(cc_sq / cc_h + cc_eps);");
  w.open("for (int64_t cc_j = 0; cc_j < cc_g.h; ++cc_j)");
  w.line("const int64_t cc_i = cc_base + cc_j;");
  {
    llvm::SmallVector<bool, 4> used(domain.size(), false);
    usedBy(k.gamma, used);
    if (k.beta)
      usedBy(*k.beta, used);
    emitCoordinates(w, used, "cc_i", "cc_g");
  }
  std::string gi = inputIndex(nullptr, k.gamma, 0, domain, "cc_i", "cc_g");
  w.line("double cc_v = (" + xAt("cc_i") +
         (k.layerNorm ? " - cc_mean" : "") + ") * cc_scale * static_cast<double>(" +
         loadValue(gamma.dtype, kCpu, gamma.name + "[" + gi + "]") + ");");
  if (k.beta) {
    const Buffer &beta = plan.buffers[k.beta->buffer];
    std::string bi = inputIndex(nullptr, *k.beta, 1, domain, "cc_i", "cc_g");
    w.line("cc_v += static_cast<double>(" +
           loadValue(beta.dtype, kCpu, beta.name + "[" + bi + "]") + ");");
  }
  w.line(out.name + "[cc_i] = " + storeFromDouble(out.dtype, kCpu, "cc_v") +
         ";");
  w.close();
  w.close();
  w.close();
}

void emitTranspose(CodeWriter &w, const Plan &plan, const Step &step,
                   const TransposeKernel &t) {
  const Buffer &in = plan.buffers[t.input], &out = plan.buffers[t.output];
  w.open("void cc_" + step.name + "(" + params(plan, step) + ")");
  w.line("const int64_t cc_n = cc_g.batch * cc_g.rows * cc_g.cols;");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_i = 0; cc_i < cc_n; ++cc_i)");
  w.line("const int64_t cc_col = cc_i % cc_g.cols;");
  w.line("const int64_t cc_row = (cc_i / cc_g.cols) % cc_g.rows;");
  w.line("const int64_t cc_b = cc_i / (cc_g.cols * cc_g.rows);");
  w.line(out.name + "[(cc_b * cc_g.cols + cc_col) * cc_g.rows + cc_row] = " +
         in.name + "[cc_i];");
  w.close();
  w.close();
}

void emitPack(CodeWriter &w, const Plan &plan, const Step &step,
              const PackKernel &p) {
  const Buffer &in = plan.buffers[p.input], &out = plan.buffers[p.output];
  // [outer, blocks, chunk] <-> [blocks, outer, chunk]
  std::string from = "(cc_o * cc_g.blocks + cc_b) * cc_g.chunk + cc_c";
  std::string to = "(cc_b * cc_g.outer + cc_o) * cc_g.chunk + cc_c";
  if (p.unpack)
    std::swap(from, to);
  w.open("void cc_" + step.name + "(" + params(plan, step) + ")");
  w.line("const int64_t cc_n = cc_g.outer * cc_g.blocks * cc_g.chunk;");
  w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t cc_i = 0; cc_i < cc_n; ++cc_i)");
  w.line("const int64_t cc_c = cc_i % cc_g.chunk;");
  w.line("const int64_t cc_b = (cc_i / cc_g.chunk) % cc_g.blocks;");
  w.line("const int64_t cc_o = cc_i / (cc_g.chunk * cc_g.blocks);");
  w.line(out.name + "[" + to + "] = " + in.name + "[" + from + "];");
  w.close();
  w.close();
}

} // namespace

void emitCpuKernels(CodeWriter &w, const Plan &plan) {
  for (const Step &step : plan.steps) {
    bool kernel = true;
    std::visit(
        [&](const auto &body) {
          using T = std::decay_t<decltype(body)>;
          if constexpr (std::is_same_v<T, ElementwiseKernel>)
            emitElementwise(w, plan, step, body);
          else if constexpr (std::is_same_v<T, ReductionKernel>)
            emitReduction(w, plan, step, body);
          else if constexpr (std::is_same_v<T, NormKernel>)
            emitNorm(w, plan, step, body);
          else if constexpr (std::is_same_v<T, TransposeKernel>)
            emitTranspose(w, plan, step, body);
          else if constexpr (std::is_same_v<T, PackKernel>)
            emitPack(w, plan, step, body);
          else
            kernel = false;
        },
        step.body);
    if (kernel)
      w.line();
  }
}

void emitCpuStep(CodeWriter &w, const Plan &plan, unsigned index) {
  const Step &step = plan.steps[index];
  const std::string g = "cc_s." + geometryMember(step);
  auto name = [&](unsigned b) { return bufferName(plan, b); };
  std::visit(
      [&](const auto &body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, MatMulCall>) {
          const Buffer &c = plan.buffers[body.c];
          w.line("coconet::rt::cpu::matmul(" + runtimeDType(c.dtype) + ", " +
                 g + ".batch, " + g + ".m, " + g + ".n, " + g + ".k,");
          w.line("    " + name(body.a) + ", " + g + ".m * " + g + ".k, " +
                 name(body.b) + ", " +
                 (body.batchedB ? g + ".k * " + g + ".n" : std::string("0")) +
                 ", " + name(body.c) + ", " + g + ".m * " + g + ".n);");
        } else if constexpr (std::is_same_v<T, CollectiveCall>) {
          const std::string in = name(body.input), out = name(body.output);
          const std::string dtype = runtimeDType(body.dtype);
          const std::string axis = std::to_string(body.axis);
          const std::string op = runtimeReduceOp(body.op);
          std::string call;
          switch (body.kind) {
          case Collective::AllReduce:
            call = "allReduce(" + in + ", " + out + ", " + g + ".count, " +
                   dtype + ", " + op + ", " + axis + ")";
            break;
          case Collective::ReduceScatter:
            call = "reduceScatter(" + in + ", " + out + ", " + g +
                   ".out_count, " + dtype + ", " + op + ", " + axis + ")";
            break;
          case Collective::AllGather:
            call = "allGather(" + in + ", " + out + ", " + g + ".count, " +
                   dtype + ", " + axis + ")";
            break;
          case Collective::Broadcast:
            call = "broadcast(" + in + ", " + out + ", " + g + ".count, " +
                   dtype + ", " + std::to_string(body.root) + ", " + axis + ")";
            break;
          case Collective::Reduce:
            call = "reduce(" + in + ", " + out + ", " + g + ".count, " + dtype +
                   ", " + op + ", " + std::to_string(body.root) + ", " + axis +
                   ")";
            break;
          case Collective::SendRecv:
            call = "sendRecv(" + in + ", " + out + ", " + g + ".count, " +
                   dtype + ", " + std::to_string(body.offset) + ", " + axis +
                   ")";
            break;
          }
          w.line("COCONET_RETURN_IF_ERROR(cc_s.mesh->" + call + ");");
        } else if constexpr (std::is_same_v<T, CopyCall>) {
          const Buffer &out = plan.buffers[body.output];
          w.line("std::memcpy(" + name(body.output) + ", " + name(body.input) +
                 ", static_cast<size_t>(" + g + ".count) * sizeof(" +
                 storageType(out.dtype, kCpu) + "));");
        } else if constexpr (std::is_same_v<T, StoreScalarCall>) {
          const Buffer &out = plan.buffers[body.output];
          w.line(name(body.output) + "[0] = " +
                 storeValue(out.dtype, kCpu, name(body.input)) + ";");
        } else {
          std::string args = g;
          for (const KernelArg &a : kernelArgs(plan, step, kCpu))
            args += ", " + a.value;
          w.line("cc_" + step.name + "(" + args + ");");
        }
      },
      step.body);
}

} // namespace coconet::codegen
