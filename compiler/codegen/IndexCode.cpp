//===- IndexCode.cpp - the kernels of topk, cumsum, gather and scatter ----===//
//
// One work item per line along the indexed dimension (topk, cumsum,
// scatter) or per element of the result (gather), on both targets: a
// line's elements are walked in ascending order, as the simulator walks
// them (sim/IndexOps.cpp), so ties, running sums and colliding writes come
// out the same. Every block is [outer, along, inner] (lower/Plan.h's
// IndexKernel): element (o, a, i) is at (o * along + a) * inner + i.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

namespace coconet::codegen {

using namespace lower;

namespace {

/// `value` is ranked before `other` in topk's order: greater, a NaN above
/// every number (x != x is the NaN test, without the math library).
std::string rankedBefore(ir::DType dtype, llvm::StringRef value,
                         llvm::StringRef other) {
  if (!ir::isFloat(dtype))
    return "(" + value.str() + " > " + other.str() + ")";
  const std::string a = value.str(), b = other.str();
  return "(" + b + " == " + b + " && (" + a + " != " + a + " || " + a + " > " +
         b + "))";
}

/// The position an index element holds, as an int64_t.
std::string position(const Target &t, const Buffer &index, llvm::StringRef at) {
  return "static_cast<int64_t>(" +
         t.load(index.dtype, index.name + "[" + at.str() + "]") + ")";
}

/// The index element of line (cc_o, cc_t) and inner element cc_i.
std::string indexAt(const IndexKernel &k) {
  return "(cc_o * cc_g.taken + cc_t) * " +
         std::string(k.indexInner ? "cc_g.inner + cc_i" : "1");
}

/// The line cc_l of a kernel with one work item per line.
void openLines(CodeWriter &w, const Target &t) {
  t.openLoop(w, LoopKind::Items, "cc_l", "cc_g.outer * cc_g.inner");
  w.line("const int64_t cc_o = cc_l / cc_g.inner, cc_i = cc_l % cc_g.inner;");
}

void emitTopK(CodeWriter &w, const Target &t, const Plan &plan,
              const IndexKernel &k) {
  const Buffer &x = plan.buffers[k.data], &out = plan.buffers[k.output];
  // k: the result's extent along the dimension, a number.
  const std::string key = computeType(k.dtype),
                    n = std::to_string(k.taken.global.coefficient());
  openLines(w, t);
  w.line("const int64_t cc_in = cc_o * cc_g.along * cc_g.inner + cc_i;");
  w.line("// The best so far, best first; an equal value stays behind.");
  w.line(key + " cc_v[" + n + "] = {};");
  w.line("int64_t cc_j[" + n + "] = {};");
  w.line("int64_t cc_n = 0;");
  w.open("for (int64_t cc_a = 0; cc_a < cc_g.along; ++cc_a)");
  w.line("const " + key + " cc_x = " +
         t.load(x.dtype, x.name + "[cc_in + cc_a * cc_g.inner]") + ";");
  w.line("int64_t cc_p = cc_n;");
  w.line("while (cc_p > 0 && " +
         rankedBefore(k.dtype, "cc_x", "cc_v[cc_p - 1]") + ")");
  w.line("  --cc_p;");
  w.line("if (cc_p >= " + n + ")");
  w.line("  continue;");
  w.open("for (int64_t cc_q = cc_n < " + n + " ? cc_n : " + n +
         " - 1; cc_q > cc_p; --cc_q)");
  w.line("cc_v[cc_q] = cc_v[cc_q - 1];");
  w.line("cc_j[cc_q] = cc_j[cc_q - 1];");
  w.close();
  w.line("cc_v[cc_p] = cc_x;");
  w.line("cc_j[cc_p] = cc_a;");
  w.line("cc_n += cc_n < " + n + " ? 1 : 0;");
  w.close();
  w.line("const int64_t cc_out = cc_o * " + n + " * cc_g.inner + cc_i;");
  w.open("for (int64_t cc_q = 0; cc_q < " + n + "; ++cc_q)");
  if (k.op == IndexKernel::Op::TopKIndices)
    w.line(out.name + "[cc_out + cc_q * cc_g.inner] = static_cast<int32_t>(" +
           "cc_j[cc_q]);");
  else
    w.line(out.name + "[cc_out + cc_q * cc_g.inner] = " +
           t.store(out.dtype, "cc_v[cc_q]") + ";");
  w.close();
  w.close();
}

/// Floats in f64, each element rounded once; integers wrap at 64 bits.
void emitCumSum(CodeWriter &w, const Target &t, const Plan &plan,
                const IndexKernel &k) {
  const Buffer &x = plan.buffers[k.data], &out = plan.buffers[k.output];
  const bool isFloat = ir::isFloat(k.dtype);
  openLines(w, t);
  w.line("const int64_t cc_base = cc_o * cc_g.along * cc_g.inner + cc_i;");
  w.line(std::string(isFloat ? "double" : "uint64_t") + " cc_sum = 0;");
  w.open("for (int64_t cc_a = 0; cc_a < cc_g.along; ++cc_a)");
  w.line("const int64_t cc_at = cc_base + cc_a * cc_g.inner;");
  const std::string v = t.load(x.dtype, x.name + "[cc_at]");
  if (isFloat) {
    w.line("cc_sum += static_cast<double>(" + v + ");");
    w.line(out.name + "[cc_at] = " + storeFromDouble(t, out.dtype, "cc_sum") +
           ";");
  } else {
    w.line("cc_sum += static_cast<uint64_t>(" + v + ");");
    w.line(out.name + "[cc_at] = static_cast<" + plainType(out.dtype) +
           ">(cc_sum);");
  }
  w.close();
  w.close();
}

/// Out of range: 0. Where one position serves a whole row (the index ends
/// at the dimension) and the target copies rows (the CPU), one item a row:
/// a memcpy of the data's row, or zeros (all bits 0 is 0 in every type).
void emitGather(CodeWriter &w, const Target &t, const Plan &plan,
                const IndexKernel &k) {
  const Buffer &x = plan.buffers[k.data], &index = plan.buffers[k.index];
  const Buffer &out = plan.buffers[k.output];
  if (t.info.packRows && !k.indexInner) {
    t.openLoop(w, LoopKind::Items, "cc_l", "cc_g.outer * cc_g.taken");
    w.line("const int64_t cc_o = cc_l / cc_g.taken;");
    w.line("const int64_t cc_j = " + position(t, index, "cc_l") + ";");
    const std::string bytes = "static_cast<size_t>(cc_g.inner) * sizeof(" +
                              t.storageType(out.dtype) + ")";
    w.line("if (cc_j >= 0 && cc_j < cc_g.along)");
    w.line("  std::memcpy(" + out.name + " + cc_l * cc_g.inner, " + x.name +
           " + (cc_o * cc_g.along + cc_j) * cc_g.inner, " + bytes + ");");
    w.line("else");
    w.line("  std::memset(" + out.name + " + cc_l * cc_g.inner, 0, " + bytes +
           ");");
    w.close();
    return;
  }
  t.openLoop(w, LoopKind::Items, "cc_e",
             "cc_g.outer * cc_g.taken * cc_g.inner");
  w.line("const int64_t cc_i = cc_e % cc_g.inner;");
  w.line("const int64_t cc_t = (cc_e / cc_g.inner) % cc_g.taken;");
  w.line("const int64_t cc_o = cc_e / (cc_g.inner * cc_g.taken);");
  w.line("const int64_t cc_j = " + position(t, index, indexAt(k)) + ";");
  const std::string zero = ir::isFloat(out.dtype)
                               ? t.store(out.dtype, "0.0f")
                               : "static_cast<" + plainType(out.dtype) + ">(0)";
  w.line(out.name + "[cc_e] = cc_j >= 0 && cc_j < cc_g.along ? " + x.name +
         "[(cc_o * cc_g.along + cc_j) * cc_g.inner + cc_i] : " + zero + ";");
  w.close();
}

/// The line's copy of `into`, then the source's writes in ascending order
/// (the last write to an element stays); out of range: dropped.
void emitScatter(CodeWriter &w, const Target &t, const Plan &plan,
                 const IndexKernel &k) {
  const Buffer &into = plan.buffers[k.data], &index = plan.buffers[k.index];
  const Buffer &x = plan.buffers[k.source], &out = plan.buffers[k.output];
  openLines(w, t);
  w.line("const int64_t cc_base = cc_o * cc_g.along * cc_g.inner + cc_i;");
  if (k.data != k.output) {
    w.open("for (int64_t cc_a = 0; cc_a < cc_g.along; ++cc_a)");
    w.line(out.name + "[cc_base + cc_a * cc_g.inner] = " + into.name +
           "[cc_base + cc_a * cc_g.inner];");
    w.close();
  }
  w.open("for (int64_t cc_t = 0; cc_t < cc_g.taken; ++cc_t)");
  w.line("const int64_t cc_j = " + position(t, index, indexAt(k)) + ";");
  w.line("if (cc_j >= 0 && cc_j < cc_g.along)");
  w.line("  " + out.name + "[cc_base + cc_j * cc_g.inner] = " + x.name +
         "[(cc_o * cc_g.taken + cc_t) * cc_g.inner + cc_i];");
  w.close();
  w.close();
}

} // namespace

void emitIndexKernel(CodeWriter &w, const Target &t, const Plan &plan,
                     const Step &step, const IndexKernel &k) {
  t.openKernel(w, "cc_" + step.name, kernelParams(t, plan, step, ""), false,
               /*team=*/false);
  switch (k.op) {
  case IndexKernel::Op::TopKValues:
  case IndexKernel::Op::TopKIndices:
    emitTopK(w, t, plan, k);
    break;
  case IndexKernel::Op::CumSum:
    emitCumSum(w, t, plan, k);
    break;
  case IndexKernel::Op::Gather:
    emitGather(w, t, plan, k);
    break;
  case IndexKernel::Op::Scatter:
    emitScatter(w, t, plan, k);
    break;
  }
  w.close();
}

} // namespace coconet::codegen
