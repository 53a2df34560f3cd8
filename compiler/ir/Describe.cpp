//===- Describe.cpp - what a stage is, in words ---------------------------===//

#include "ir/Describe.h"
#include "ir/AlgorithmTable.h"

namespace coconet::ir {

std::string StageDescription::attributes() const {
  std::string out;
  for (const std::string &a : leading)
    out += (out.empty() ? "" : ", ") + a;
  for (const std::string &k : keywords)
    out += (out.empty() ? "" : ", ") + k;
  return out;
}

StageDescription describeStage(const Program &program, const Stage &stage) {
  StageDescription d;
  d.operation = stageKindName(stage.kind).str();
  auto overAxis = [&] {
    if (stage.axis < 0)
      d.axis = "all";
    else if (static_cast<unsigned>(stage.axis) < program.mesh.size())
      d.axis = program.mesh.axes[stage.axis].name;
    else
      d.axis = "?";
  };
  const std::string op = reduceOpName(stage.reduceOp).str();
  switch (stage.kind) {
  case StageKind::Param:
    d.operation = "param " + std::to_string(stage.paramIndex);
    d.sharded = stage.sharded;
    break;
  case StageKind::Reduction:
    d.operation = "reduction " + reductionKindName(stage.reduction).str();
    if (stage.dim >= 0)
      d.keywords.push_back("dim=" + std::to_string(stage.dim));
    if (!stage.segments.empty())
      d.keywords.push_back("by=" + stage.segments);
    break;
  case StageKind::TopK:
    if (stage.topkIndices)
      d.operation = "topk indices";
    d.keywords.push_back("k=" + std::to_string(stage.k));
    d.keywords.push_back("dim=" + std::to_string(stage.dim));
    break;
  case StageKind::CumSum:
  case StageKind::Gather:
  case StageKind::Scatter:
    d.keywords.push_back("dim=" + std::to_string(stage.dim));
    break;
  case StageKind::Transpose:
    // The last two are the default.
    if (stage.dim2 + 1 != static_cast<int>(stage.type.rank()) ||
        stage.dim + 1 != stage.dim2)
      d.keywords.push_back("dims=" + std::to_string(stage.dim) + "," +
                           std::to_string(stage.dim2));
    break;
  case StageKind::Reshape: {
    const bool flatten = stage.operands.size() == 1 &&
                         stage.type.rank() < stage.operands[0]->type.rank();
    d.operation = flatten ? "flatten" : "unflatten";
    d.keywords.push_back("dim=" + std::to_string(stage.dim));
    if (!flatten && static_cast<size_t>(stage.dim) + 1 < stage.type.rank())
      d.keywords.push_back("size=" + stage.type.shape[stage.dim + 1].str());
    break;
  }
  case StageKind::Elementwise:
  case StageKind::MatMul:
  case StageKind::GroupedMatMul:
  case StageKind::LayerNorm:
  case StageKind::RmsNorm:
    break;
  case StageKind::AllReduce:
    d.leading.push_back(op);
    overAxis();
    break;
  case StageKind::ReduceScatter:
    d.leading.push_back(op);
    d.keywords.push_back("dim=" + std::to_string(stage.dim));
    overAxis();
    break;
  case StageKind::AllGather:
    overAxis();
    break;
  case StageKind::Broadcast:
    d.keywords.push_back("root=" + std::to_string(stage.root));
    overAxis();
    break;
  case StageKind::Reduce:
    d.leading.push_back(op);
    d.keywords.push_back("root=" + std::to_string(stage.root));
    overAxis();
    break;
  case StageKind::SendRecv:
    d.keywords.push_back("offset=" + std::to_string(stage.offset));
    overAxis();
    break;
  case StageKind::AllToAll:
    d.keywords.push_back("dim=" + std::to_string(stage.dim));
    overAxis();
    break;
  case StageKind::AllToAllV:
    if (stage.countsResult)
      d.operation = "alltoallv counts";
    overAxis();
    break;
  }
  if (stage.table)
    d.keywords.push_back("algorithm=\"" + stage.table->file + "\"");
  else if (stage.algorithm != CollectiveAlgorithm::Auto)
    d.keywords.push_back("algorithm=" +
                         collectiveAlgorithmName(stage.algorithm).str());
  return d;
}

std::string operationText(const StageDescription &d) {
  std::string out = d.operation;
  std::string attributes = d.attributes();
  if (!attributes.empty())
    out += "(" + attributes + ")";
  if (!d.axis.empty())
    out += " over " + d.axis;
  return out;
}

std::string describeKind(const Stage &stage) {
  std::string text = stageKindDescription(stage.kind).str();
  if (stage.kind == StageKind::Reduction)
    text += " (" + reductionKindName(stage.reduction).str() + ")";
  if (stage.kind == StageKind::AllToAllV && stage.countsResult)
    text = "the counts an alltoallv's members received";
  return text;
}

} // namespace coconet::ir
