//===- Kernels.cpp - the kernels and steps of a plan, for any target ------===//
//
// One emitter per kind of kernel and step; each asks the Target (Target.h)
// for what the target spells its own way. Every element is computed as the
// simulator computes it. Norms (layernorm, rmsnorm) accumulate in f64: one
// group of threads per row, whose partial values combine in a fixed order
// (one thread per group on the CPU, so the simulator's order and bit for bit
// its results; a block and a fixed tree on a GPU). Reductions are the
// runtime's Reducer (coconet/reduce_order.h's order on both targets), and
// other steps that are not kernels (collectives, matmuls, copies, stored
// scalars) the target's calls.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::codegen {

using namespace lower;

namespace {

std::string params(const Target &t, const Plan &plan, const Step &step) {
  return kernelParams(t, plan, step, "");
}

void emitElementwise(CodeWriter &w, const Target &t, const Plan &plan,
                     const Step &step, const ElementwiseKernel &k,
                     bool ranged) {
  t.openKernel(w, "cc_" + step.name,
               kernelParams(t, plan, step,
                            ranged
                                ? "const int64_t cc_begin, const int64_t cc_end"
                                : ""),
               k.flat, /*team=*/false);
  emitLines(w, t.info.elementwisePrologue);
  const UniformValues uniform = emitScalarInputs(w, plan, k, t);
  emitElementwiseBlocks(w, t, plan, step, k, uniform, nullptr, ranged);
  w.close();
}

/// layernorm / rmsnorm: per row, the mean (layernorm only), the mean square
/// of the (centred) values, then every element scaled, in f64.
void emitNorm(CodeWriter &w, const Target &t, const Plan &plan,
              const Step &step, const NormKernel &k) {
  const Buffer &x = plan.buffers[k.x], &out = plan.buffers[k.output];
  const Buffer &gamma = plan.buffers[k.gamma.buffer];
  const Buffer &eps = plan.buffers[k.eps];
  Extents domain = k.rows;
  domain.push_back(k.row);
  auto xAt = [&](const std::string &i) {
    return "static_cast<double>(" + t.load(x.dtype, x.name + "[" + i + "]") +
           ")";
  };
  t.openKernel(w, "cc_" + step.name, params(t, plan, step), false,
               /*team=*/false);
  std::string e = eps.kind == Buffer::Kind::ScalarParam
                      ? eps.name
                      : t.load(eps.dtype, eps.name + "[0]");
  w.line("const double cc_eps = static_cast<double>(" + e + ");");
  w.line("const double cc_h = static_cast<double>(cc_g.h);");
  if (t.info.groupThreads)
    w.line("auto cc_add = [](double a, double b) { return a + b; };");
  t.openLoop(w, LoopKind::Groups, "cc_row", "cc_g.rows");
  w.line("const int64_t cc_base = cc_row * cc_g.h;");
  // rmsnorm centres nothing: no mean.
  const std::string centred = k.layerNorm ? " - cc_mean" : "";
  if (k.layerNorm) {
    w.line("double cc_mean = 0;");
    t.openLoop(w, LoopKind::GroupElements, "cc_j", "cc_g.h");
    w.line("cc_mean += " + xAt("cc_base + cc_j") + ";");
    w.close();
    w.line("cc_mean = " + t.groupCombine("cc_mean", "cc_add") + " / cc_h;");
    t.shareFromLeader(w, "double", "cc_row_mean", "cc_mean", "cc_mean");
  }
  w.line("double cc_sq = 0;");
  t.openLoop(w, LoopKind::GroupElements, "cc_j", "cc_g.h");
  w.line("const double cc_v = " + xAt("cc_base + cc_j") + centred + ";");
  w.line("cc_sq += cc_v * cc_v;");
  w.close();
  t.emitGroupCombine(w, "cc_sq", "cc_add");
  t.shareFromLeader(w, "double", "cc_row_scale",
                    "1.0 / " +
                        t.mathCall("sqrt", true, "cc_sq / cc_h + cc_eps"),
                    "const double cc_scale");
  t.openLoop(w, LoopKind::GroupElements, "cc_j", "cc_g.h");
  w.line("const int64_t cc_i = cc_base + cc_j;");
  {
    llvm::SmallVector<bool, 4> used(domain.size(), false);
    usedBy(k.gamma, used);
    if (k.beta)
      usedBy(*k.beta, used);
    emitCoordinates(w, used, "cc_i", "cc_g");
  }
  std::string gi = inputIndex(nullptr, k.gamma, 0, domain, "cc_i", "cc_g");
  w.line("double cc_v = (" + xAt("cc_i") + centred +
         ") * cc_scale * "
         "static_cast<double>(" +
         t.load(gamma.dtype, gamma.name + "[" + gi + "]") + ");");
  if (k.beta) {
    const Buffer &beta = plan.buffers[k.beta->buffer];
    std::string bi = inputIndex(nullptr, *k.beta, 1, domain, "cc_i", "cc_g");
    w.line("cc_v += static_cast<double>(" +
           t.load(beta.dtype, beta.name + "[" + bi + "]") + ");");
  }
  w.line(out.name + "[cc_i] = " + storeFromDouble(t, out.dtype, "cc_v") + ";");
  w.close();
  t.endGroup(w);
  w.close();
  w.close();
}

/// A loop over `count` items writing `assignment` after `indexLines`
/// (transpose, pack, unpack: kernels that only move data).
void emitCopyKernel(CodeWriter &w, const Target &t, const Plan &plan,
                    const Step &step, llvm::StringRef count,
                    llvm::ArrayRef<std::string> indexLines,
                    const std::string &assignment) {
  t.openKernel(w, "cc_" + step.name, params(t, plan, step), false,
               /*team=*/false);
  w.line("const int64_t cc_n = " + count.str() + ";");
  t.openLoop(w, LoopKind::Items, "cc_i", "cc_n");
  for (const std::string &l : indexLines)
    w.line(l);
  w.line(assignment);
  w.close();
  w.close();
}

void emitTranspose(CodeWriter &w, const Target &t, const Plan &plan,
                   const Step &step, const TransposeKernel &k) {
  const Buffer &in = plan.buffers[k.input], &out = plan.buffers[k.output];
  if (!k.lastTwo()) {
    // [batch, rows, middle, cols, inner] -> [batch, cols, middle, rows,
    // inner]: element cc_i of the input to its place in the output.
    emitCopyKernel(
        w, t, plan, step,
        "cc_g.batch * cc_g.rows * cc_g.middle * cc_g.cols * cc_g.inner",
        {"const int64_t cc_n = cc_i % cc_g.inner;",
         "const int64_t cc_col = (cc_i / cc_g.inner) % cc_g.cols;",
         "const int64_t cc_m = (cc_i / (cc_g.inner * cc_g.cols)) % "
         "cc_g.middle;",
         "const int64_t cc_row = (cc_i / (cc_g.inner * cc_g.cols * "
         "cc_g.middle)) % cc_g.rows;",
         "const int64_t cc_b = cc_i / (cc_g.inner * cc_g.cols * cc_g.middle "
         "* cc_g.rows);"},
        out.name +
            "[(((cc_b * cc_g.cols + cc_col) * cc_g.middle + cc_m) * "
            "cc_g.rows + cc_row) * cc_g.inner + cc_n] = " +
            in.name + "[cc_i];");
    return;
  }
  emitCopyKernel(w, t, plan, step, "cc_g.batch * cc_g.rows * cc_g.cols",
                 {"const int64_t cc_col = cc_i % cc_g.cols;",
                  "const int64_t cc_row = (cc_i / cc_g.cols) % cc_g.rows;",
                  "const int64_t cc_b = cc_i / (cc_g.cols * cc_g.rows);"},
                 out.name +
                     "[(cc_b * cc_g.cols + cc_col) * cc_g.rows + "
                     "cc_row] = " +
                     in.name + "[cc_i];");
}

/// [outer, blocks, chunk] <-> [blocks, outer, chunk]
void emitPack(CodeWriter &w, const Target &t, const Plan &plan,
              const Step &step, const PackKernel &p) {
  const Buffer &in = plan.buffers[p.input], &out = plan.buffers[p.output];
  if (t.info.packRows) {
    // Row cc_i of the output, a chunk from its place in the input.
    std::string from = "(cc_o * cc_g.blocks + cc_b) * cc_g.chunk";
    std::string to = "(cc_b * cc_g.outer + cc_o) * cc_g.chunk";
    std::string row = "const int64_t cc_b = cc_i / cc_g.outer, cc_o = cc_i % "
                      "cc_g.outer;";
    if (p.unpack) {
      std::swap(from, to);
      row = "const int64_t cc_o = cc_i / cc_g.blocks, cc_b = cc_i % "
            "cc_g.blocks;";
    }
    emitCopyKernel(w, t, plan, step, "cc_g.outer * cc_g.blocks", {row},
                   "std::memcpy(" + out.name + " + " + to + ", " + in.name +
                       " + " + from +
                       ", static_cast<size_t>(cc_g.chunk) * "
                       "sizeof(" +
                       t.storageType(out.dtype) + "));");
    return;
  }
  std::string from = "(cc_o * cc_g.blocks + cc_b) * cc_g.chunk + cc_c";
  std::string to = "(cc_b * cc_g.outer + cc_o) * cc_g.chunk + cc_c";
  if (p.unpack)
    std::swap(from, to);
  emitCopyKernel(w, t, plan, step, "cc_g.outer * cc_g.blocks * cc_g.chunk",
                 {"const int64_t cc_c = cc_i % cc_g.chunk;",
                  "const int64_t cc_b = (cc_i / cc_g.chunk) % cc_g.blocks;",
                  "const int64_t cc_o = cc_i / (cc_g.chunk * cc_g.blocks);"},
                 out.name + "[" + to + "] = " + in.name + "[" + from + "];");
}

} // namespace

std::string kernelParams(const Target &t, const Plan &plan, const Step &step,
                         llvm::StringRef extra) {
  std::string out = "const " + geometryType(step) + " cc_g";
  if (!extra.empty())
    out += ", " + extra.str();
  for (const KernelArg &a : kernelArgs(plan, step, t)) {
    std::string decl = a.decl;
    // No two pointers of a kernel alias (Target.h).
    if (decl.find('*') != std::string::npos)
      decl.insert(decl.find('*') + 1,
                  llvm::StringRef(decl).starts_with("const ")
                      ? t.info.readOnlyPointer.str()
                      : t.info.writtenPointer.str());
    out += ", " + decl;
  }
  return out;
}

CollectiveOperands collectiveOperands(const Plan &plan, const CollectiveCall &c,
                                      llvm::StringRef g) {
  CollectiveOperands ops;
  ops.in = bufferName(plan, c.input);
  ops.out = bufferName(plan, c.output);
  ops.count = g.str() + ".count";
  ops.outCount = g.str() + ".out_count";
  ops.root = std::to_string(c.root);
  if (c.kind == Collective::AllToAll)
    ops.blockCount = g.str() + ".block_count";
  if (c.kind == Collective::AllToAllV) {
    ops.counts = bufferName(plan, c.counts);
    ops.rowsIn = g.str() + ".rows_in";
    ops.rowsOut = g.str() + ".rows_out";
    ops.row = g.str() + ".row";
    ops.groups = g.str() + ".groups";
    ops.state = g.str() + "_alltoallv";
  }
  return ops;
}

MatMulOperands matMulOperands(const Plan &plan, const MatMulCall &mm,
                              llvm::StringRef gRef) {
  const std::string g = gRef.str();
  MatMulOperands ops;
  ops.batch = g + ".batch";
  ops.m = g + ".m";
  ops.n = g + ".n";
  ops.k = g + ".k";
  ops.a = bufferName(plan, mm.a);
  ops.strideA = g + ".m * " + g + ".k";
  ops.b = bufferName(plan, mm.b);
  ops.strideB = mm.batchedB ? g + ".k * " + g + ".n" : std::string("0");
  ops.c = bufferName(plan, mm.c);
  ops.strideC = g + ".m * " + g + ".n";
  if (mm.counts) {
    ops.counts = bufferName(plan, *mm.counts);
    ops.groups = g + ".groups";
    ops.localGroups = g + ".local_groups";
    ops.hostCounts = g + "_counts";
  }
  return ops;
}

std::string kernelItems(const Step &step, llvm::StringRef gRef) {
  const std::string g = gRef.str();
  if (std::holds_alternative<ElementwiseKernel>(step.body))
    return g + ".n";
  if (auto *r = std::get_if<ReductionKernel>(&step.body))
    return r->table ? g + ".segments" : g + ".outer * " + g + ".inner";
  if (std::holds_alternative<NormKernel>(step.body))
    return g + ".rows";
  if (auto *t = std::get_if<TransposeKernel>(&step.body))
    return g + ".batch * " + g + ".rows * " + g + ".cols" +
           (t->lastTwo() ? "" : " * " + g + ".middle * " + g + ".inner");
  if (auto *k = std::get_if<IndexKernel>(&step.body))
    return k->op == IndexKernel::Op::Gather
               ? g + ".outer * " + g + ".taken * " + g + ".inner"
               : g + ".outer * " + g + ".inner";
  return g + ".outer * " + g + ".blocks * " + g + ".chunk";
}

void emitKernels(CodeWriter &w, const Target &t, const Plan &plan) {
  emitLines(w, t.info.kernelPrelude);
  for (unsigned index = 0; index < plan.steps.size(); ++index) {
    const Step &step = plan.steps[index];
    if (skippedStep(plan, index))
      continue;
    bool kernel = true;
    std::visit(
        [&](const auto &body) {
          using T = std::decay_t<decltype(body)>;
          if constexpr (std::is_same_v<T, ElementwiseKernel>)
            emitElementwise(w, t, plan, step, body, rangedStep(plan, index));
          else if constexpr (std::is_same_v<T, NormKernel>)
            emitNorm(w, t, plan, step, body);
          else if constexpr (std::is_same_v<T, TransposeKernel>)
            emitTranspose(w, t, plan, step, body);
          else if constexpr (std::is_same_v<T, IndexKernel>)
            emitIndexKernel(w, t, plan, step, body);
          else if constexpr (std::is_same_v<T, PackKernel>)
            emitPack(w, t, plan, step, body);
          else
            kernel = false;
        },
        step.body);
    if (kernel)
      w.line();
  }
  for (const FusedKernel &k : fusedKernels(plan)) {
    emitFusedKernel(w, t, plan, k);
    w.line();
  }
}

void emitStep(CodeWriter &w, const Target &t, const Plan &plan,
              unsigned index) {
  const Step &step = plan.steps[index];
  const std::string g = "cc_s." + geometryMember(step);
  auto name = [&](unsigned b) { return bufferName(plan, b); };
  const bool groupStart = step.groupWithNext &&
                          (index == 0 || !plan.steps[index - 1].groupWithNext);
  const bool groupEnd =
      !step.groupWithNext && index > 0 && plan.steps[index - 1].groupWithNext;
  if (groupStart)
    emitLines(w, t.info.collectiveGroupBegin);
  std::visit(
      [&](const auto &body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, MatMulCall>) {
          t.emitMatMul(w, plan, body, matMulOperands(plan, body, g));
        } else if constexpr (std::is_same_v<T, CollectiveCall>) {
          t.emitCollective(w, plan, body, collectiveOperands(plan, body, g));
        } else if constexpr (std::is_same_v<T, CopyCall>) {
          t.emitCopy(w, name(body.output), name(body.input), g + ".count",
                     plan.buffers[body.output].dtype);
        } else if constexpr (std::is_same_v<T, ReductionKernel>) {
          // The runtime's Reducer of the step (made by create()).
          const Buffer &out = plan.buffers[body.output];
          w.line("COCONET_RETURN_IF_ERROR(cc_s." + reducerMember(step) +
                 ".run(" + runtimeReductionKind(body.kind) + ", " +
                 runtimeDType(body.inType) + ", " + name(body.input) + ", " +
                 runtimeDType(out.dtype) + ", " + name(body.output) +
                 t.info.stepStreamArg.str() + "));");
        } else if constexpr (std::is_same_v<T, StoreScalarCall>) {
          const Buffer &out = plan.buffers[body.output];
          t.emitStoreScalar(w, name(body.output),
                            t.store(out.dtype, name(body.input)));
        } else {
          KernelRange whole;
          if (rangedStep(plan, index))
            whole = {"0", g + ".n", ""};
          std::string args = g;
          if (!whole.whole())
            args += ", " + whole.lo + ", " + whole.hi;
          for (const KernelArg &a : kernelArgs(plan, step, t))
            args += ", " + a.value;
          t.emitLaunch(w, plan, step, g, args, whole);
        }
      },
      step.body);
  if (groupEnd)
    emitLines(w, t.info.collectiveGroupEnd);
}

} // namespace coconet::codegen
