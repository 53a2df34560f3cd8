//===- Program.cpp - the typed IR: stages and programs --------------------===//
//
// Ownership and lookup of stages, expressions, programs and schedules.
//
//===----------------------------------------------------------------------===//

#include "ir/Program.h"

namespace coconet::ir {

llvm::StringRef stageKindName(StageKind kind) {
  switch (kind) {
#define STAGE(Name, Printed)                                                   \
  case StageKind::Name:                                                        \
    return Printed;
#include "ir/StageKinds.def"
  }
  return "?";
}

llvm::StringRef reductionKindName(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return "sum";
  case ReductionKind::Max:
    return "max";
  case ReductionKind::Min:
    return "min";
  case ReductionKind::Norm:
    return "norm";
  }
  return "?";
}

bool isCommunication(StageKind kind) {
  switch (kind) {
  case StageKind::AllReduce:
  case StageKind::ReduceScatter:
  case StageKind::AllGather:
  case StageKind::Broadcast:
  case StageKind::Reduce:
  case StageKind::SendRecv:
    return true;
  case StageKind::Param:
  case StageKind::Elementwise:
  case StageKind::Reduction:
  case StageKind::MatMul:
  case StageKind::Transpose:
  case StageKind::LayerNorm:
  case StageKind::RmsNorm:
    return false;
  }
  return false;
}

llvm::StringRef scalarOpName(ScalarOp op) {
  switch (op) {
  case ScalarOp::Operand:
    return "operand";
  case ScalarOp::Const:
    return "const";
  case ScalarOp::Cast:
    return "cast";
  case ScalarOp::Neg:
    return "neg";
  case ScalarOp::Add:
    return "add";
  case ScalarOp::Sub:
    return "sub";
  case ScalarOp::Mul:
    return "mul";
  case ScalarOp::Div:
    return "div";
  case ScalarOp::Lt:
    return "lt";
  case ScalarOp::Le:
    return "le";
  case ScalarOp::Gt:
    return "gt";
  case ScalarOp::Ge:
    return "ge";
  case ScalarOp::Eq:
    return "eq";
  case ScalarOp::Ne:
    return "ne";
  case ScalarOp::Select:
    return "select";
  case ScalarOp::Sqrt:
    return "sqrt";
  case ScalarOp::Rsqrt:
    return "rsqrt";
  case ScalarOp::Exp:
    return "exp";
  case ScalarOp::Log:
    return "log";
  case ScalarOp::Abs:
    return "abs";
  case ScalarOp::Tanh:
    return "tanh";
  case ScalarOp::Erf:
    return "erf";
  case ScalarOp::Relu:
    return "relu";
  case ScalarOp::Gelu:
    return "gelu";
  case ScalarOp::Silu:
    return "silu";
  case ScalarOp::Pow:
    return "pow";
  case ScalarOp::Max:
    return "max";
  case ScalarOp::Min:
    return "min";
  case ScalarOp::Dropout:
    return "dropout";
  }
  return "?";
}

Stage *Program::addStage(StageKind kind, llvm::StringRef stageName,
                         TensorType type, llvm::ArrayRef<Stage *> ops,
                         llvm::SMRange range) {
  auto stage = std::make_unique<Stage>();
  stage->kind = kind;
  stage->id = stages.size();
  stage->name = stageName.str();
  stage->type = std::move(type);
  stage->operands.assign(ops.begin(), ops.end());
  stage->loc = range;
  Stage *raw = stage.get();
  stages.push_back(std::move(stage));
  if (kind == StageKind::Param) {
    raw->paramIndex = params.size();
    params.push_back(raw);
  }
  return raw;
}

const ScalarExpr *Program::addExpr(ScalarExpr expr) {
  exprs.push_back(std::make_unique<ScalarExpr>(std::move(expr)));
  return exprs.back().get();
}

Stage *Program::findStage(llvm::StringRef stageName) const {
  for (const auto &stage : stages)
    if (stage->name == stageName)
      return stage.get();
  return nullptr;
}

Stage *Program::findUpdateOf(const Stage *param) const {
  for (const auto &stage : stages)
    if (stage->updates == param)
      return stage.get();
  return nullptr;
}

void Program::renumber() {
  for (size_t i = 0; i < stages.size(); ++i)
    stages[i]->id = i;
}

Program *Module::findProgram(llvm::StringRef programName) const {
  for (const auto &p : programs)
    if (p->name == programName)
      return p.get();
  return nullptr;
}

const Schedule *Module::findSchedule(llvm::StringRef scheduleName) const {
  for (const auto &s : schedules)
    if (s.name == scheduleName)
      return &s;
  return nullptr;
}

} // namespace coconet::ir
