//===- KernelCommon.cpp - what kernels of both targets share --------------===//
//
// The arguments of a kernel step, the names of member values, and the body
// of one element of an elementwise kernel: load every input, compute the
// members in order, store the outputs (so an update can overwrite the
// parameter it reads at the same element).
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::codegen {

using namespace lower;

llvm::SmallVector<unsigned, 8> kernelArgBuffers(const Plan &plan,
                                                const Step &step) {
  llvm::SmallVector<unsigned, 8> buffers;
  for (unsigned b : step.reads)
    if (!llvm::is_contained(buffers, b))
      buffers.push_back(b);
  for (unsigned b : step.writes)
    if (!llvm::is_contained(buffers, b))
      buffers.push_back(b);
  llvm::SmallVector<unsigned, 4> scalars;
  if (auto *k = std::get_if<ElementwiseKernel>(&step.body)) {
    for (const KernelInput &in : k->inputs)
      if (plan.buffers[in.buffer].kind == Buffer::Kind::ScalarParam &&
          !llvm::is_contained(scalars, in.buffer))
        scalars.push_back(in.buffer);
  } else if (auto *n = std::get_if<NormKernel>(&step.body)) {
    if (plan.buffers[n->eps].kind == Buffer::Kind::ScalarParam)
      scalars.push_back(n->eps);
  }
  for (unsigned b : scalars)
    if (!llvm::is_contained(buffers, b))
      buffers.push_back(b);
  return buffers;
}

std::vector<KernelArg> kernelArgs(const Plan &plan, const Step &step,
                                  const Target &target) {
  std::vector<KernelArg> args;
  for (unsigned b : kernelArgBuffers(plan, step)) {
    const Buffer &buf = plan.buffers[b];
    if (buf.kind == Buffer::Kind::ScalarParam) {
      args.push_back({scalarParamType(buf.dtype) + " " + buf.name, buf.name});
      continue;
    }
    bool written = llvm::is_contained(step.writes, b);
    args.push_back({std::string(written ? "" : "const ") +
                        target.storageType(buf.dtype) + " *" + buf.name,
                    buf.name});
  }
  return args;
}

bool rowContiguous(const KernelInput &in, unsigned rank) {
  if (in.isScalar())
    return false;
  if (in.flat || in.shifted)
    return true;
  if (in.gather) // a row may read 0s where its position is out of range
    return false;
  const DimAccess &last = in.dims.back();
  return !last.zero && last.domainDim + 1 == rank;
}

bool rowInvariantGather(const KernelInput &in, unsigned rank) {
  if (!in.gather || rank == 0 || in.gather->dim + 1 == rank)
    return false;
  return llvm::none_of(in.gather->indexDims, [&](const DimAccess &a) {
    return !a.zero && a.domainDim + 1 == rank;
  });
}

void emitGatherPosition(CodeWriter &w, const Plan &plan, const KernelInput &in,
                        unsigned i, const Extents &domain,
                        const Target &target) {
  const Buffer &index = plan.buffers[in.gather->index];
  const std::string p = gatherVar(i), n = std::to_string(i);
  const std::string inside = "cc_v" + n;
  w.line("const int64_t " + p + "_at = static_cast<int64_t>(" +
         target.load(index.dtype, index.name + "[" +
                                      gatherPosition(in, i, domain, "cc_g") +
                                      "]") +
         ");");
  w.line("const bool " + inside + " = " + p + "_at >= 0 && " + p + "_at < " +
         "cc_g.a" + n + ";");
  w.line("const int64_t " + p + " = " + inside + " ? " + p + "_at : 0;");
}

bool isNarrow(ir::DType dtype) {
  return dtype == ir::DType::F16 || dtype == ir::DType::BF16;
}

std::string memberName(const Plan &plan, const Step &step,
                       const ElementwiseKernel::Member &member) {
  const std::string &name = member.identifier;
  bool clash = llvm::any_of(kernelArgBuffers(plan, step), [&](unsigned b) {
    return plan.buffers[b].name == name;
  });
  return clash ? name + "_value" : name;
}

void emitElementBody(CodeWriter &w, const Plan &plan, const Step &step,
                     const ElementwiseKernel &k, const Target &target,
                     ElementForm form, const UniformValues &uniform,
                     const BodyOverrides &overrides) {
  const std::string geom = "cc_g";
  const bool rowTile = form == ElementForm::RowTile;
  if (!rowTile) // a row tile's loop sets the coordinates
    emitCoordinates(w, usedCoordinates(k), "cc_i", geom);
  std::string global = k.needsGlobalIndex
                           ? globalIndexExpr(k.domain.size(), geom)
                           : std::string("0");
  const bool lanes = form == ElementForm::VectorLane;
  const bool tile = form == ElementForm::Tile || rowTile;
  std::vector<std::string> inputs;
  for (unsigned i = 0; i < k.inputs.size(); ++i) {
    const KernelInput &in = k.inputs[i];
    const Buffer &b = plan.buffers[in.buffer];
    std::string name = "cc_in" + std::to_string(i);
    // Scalars were loaded before the loop.
    if (in.isScalar()) {
      inputs.push_back(name);
      continue;
    }
    if (overrides.input == i) {
      w.line("const " + computeType(b.dtype) + " " + name + " = " +
             overrides.inputValue + ";");
      inputs.push_back(name);
      continue;
    }
    if (in.table) {
      // One value per segment: a tile's were filled before its loop (or,
      // in a tile within one segment, are its one value); an element finds
      // its segment from its chunk's (segment_walk.h).
      const std::string ends = plan.buffers[plan.tables[*in.table].buffer].name;
      const std::string value =
          tile && overrides.tableScalars ? "cc_u" + std::to_string(i)
          : tile                         ? "cc_l" + std::to_string(i) + "[cc_j]"
                 : target.load(b.dtype, b.name + "[coconet::rt::segmentAt(" +
                                            ends + ", " + ends + " + " + geom +
                                            ".t" + std::to_string(i) + ", " +
                                            geom + ".segoff + cc_i)]");
      w.line("const " + computeType(b.dtype) + " " + name + " = " + value +
             ";");
      inputs.push_back(name);
      continue;
    }
    if (in.gather) {
      // A fused gather: the data at the position the index holds, 0
      // outside the data's extent (as the gather's kernel reads). The load
      // is at the position or, outside, at 0, then a select: a load on
      // every lane, so the loop stays vectorisable.
      if (overrides.gathersHoisted && rowInvariantGather(in, k.domain.size())) {
        // The row (or the zero tile) was chosen before the row's loop.
        w.line("const " + computeType(b.dtype) + " " + name + " = " +
               target.load(b.dtype, "cc_row" + std::to_string(i) + "[cc_j]") +
               ";");
        inputs.push_back(name);
        continue;
      }
      emitGatherPosition(w, plan, in, i, k.domain, target);
      const std::string inside = "cc_v" + std::to_string(i);
      const std::string zero =
          ir::isFloat(b.dtype) ? "0.0f"
                               : "static_cast<" + plainType(b.dtype) + ">(0)";
      w.line("const " + computeType(b.dtype) + " " + name + "_at = " +
             target.load(b.dtype,
                         b.name + "[" +
                             inputIndex(&k, in, i, k.domain, "cc_i", geom) +
                             "]") +
             ";");
      w.line("const " + computeType(b.dtype) + " " + name + " = " + inside +
             " ? " + name + "_at : " + zero + ";");
      inputs.push_back(name);
      continue;
    }
    const bool fromTile =
        isNarrow(b.dtype) && (rowTile ? rowContiguous(in, k.domain.size())
                                      : tile && (in.flat || in.shifted));
    std::string element =
        lanes && (in.flat || in.shifted)
            ? "cc_l" + std::to_string(i) + ".v[cc_j]"
            : b.name + "[" + inputIndex(&k, in, i, k.domain, "cc_i", geom) +
                  "]";
    std::string value = b.kind == Buffer::Kind::ScalarParam ? b.name
                        : fromTile ? "cc_l" + std::to_string(i) + "[cc_j]"
                                   : target.load(b.dtype, element);
    w.line("const " + computeType(b.dtype) + " " + name + " = " + value + ";");
    inputs.push_back(name);
  }
  // Is member i stored as a float into its tile `cc_s<i>`, narrowed to its
  // f16/bf16 buffer after the tile?
  auto narrowedAfterTile = [&](size_t i) {
    const auto &m = k.members[i];
    return m.output && overrides.skipStore != i &&
           isNarrow(plan.buffers[*m.output].dtype) &&
           (tile || overrides.tileMember == i);
  };
  // The members whose one use is that store (no later member reads them):
  // the narrowing rounds them as the root's own rounding would, so it is
  // left out (a cast to bf16 before a store is then no work in the loop).
  llvm::SmallVector<bool, 8> storeRounds(k.members.size(), false);
  for (size_t i = 0; i < k.members.size(); ++i)
    storeRounds[i] = narrowedAfterTile(i);
  for (const auto &m : k.members)
    for (const Source &src : m.operands)
      if (src.kind == Source::Kind::Member)
        storeRounds[src.index] = false;
  unsigned temp = 0;
  std::vector<std::string> members;
  for (const auto &m : k.members) {
    std::vector<std::string> operands;
    for (const Source &src : m.operands)
      operands.push_back(src.kind == Source::Kind::Input ? inputs[src.index]
                                                         : members[src.index]);
    // A member whose whole body is uniform is its hoisted variable (a copy
    // of it here would be unused when only uniform members read it).
    if (std::string hoisted = uniform.values.lookup(m.body); !hoisted.empty()) {
      members.push_back(hoisted);
      continue;
    }
    std::string name = memberName(plan, step, m);
    emitBody(w, m.body, operands, global, name, target, temp, &uniform,
             storeRounds[members.size()]);
    members.push_back(name);
  }
  for (size_t i = 0; i < k.members.size(); ++i) {
    const auto &m = k.members[i];
    if (!m.output || overrides.skipStore == i)
      continue;
    const Buffer &b = plan.buffers[*m.output];
    if (overrides.tileMember == i && !isNarrow(b.dtype)) {
      w.line("cc_s" + std::to_string(i) +
             "[cc_j] = " + target.store(b.dtype, members[i]) + ";");
      continue;
    }
    if (narrowedAfterTile(i)) {
      // The narrowing after the tile rounds a value its body left
      // unrounded (storeRounds) and is exact on a rounded one.
      w.line("cc_s" + std::to_string(i) + "[cc_j] = " + members[i] + ";");
      continue;
    }
    std::string to =
        lanes ? "cc_s" + std::to_string(i) + ".v[cc_j]" : b.name + "[cc_i]";
    w.line(to + " = " + target.store(b.dtype, members[i]) + ";");
  }
}

UniformValues emitScalarInputs(CodeWriter &w, const Plan &plan,
                               const ElementwiseKernel &k,
                               const Target &target) {
  for (unsigned i = 0; i < k.inputs.size(); ++i) {
    const KernelInput &in = k.inputs[i];
    if (!in.isScalar())
      continue;
    const Buffer &b = plan.buffers[in.buffer];
    std::string value = b.kind == Buffer::Kind::ScalarParam
                            ? b.name
                            : target.load(b.dtype, b.name + "[0]");
    w.line("const " + computeType(b.dtype) + " cc_in" + std::to_string(i) +
           " = " + value + ";");
  }
  // The members' uniform subexpressions. A member whose whole body is
  // uniform is a uniform operand of the members that read it.
  UniformValues uniform;
  std::vector<std::string> members;
  for (const auto &m : k.members) {
    std::vector<std::string> operands;
    llvm::SmallVector<bool, 8> isUniform;
    for (const Source &src : m.operands) {
      const bool input = src.kind == Source::Kind::Input;
      operands.push_back(input ? "cc_in" + std::to_string(src.index)
                               : members[src.index]);
      isUniform.push_back(input ? k.inputs[src.index].isScalar()
                                : !members[src.index].empty());
    }
    members.push_back(
        emitUniformBody(w, m.body, operands, isUniform, target, uniform));
  }
  return uniform;
}

} // namespace coconet::codegen
