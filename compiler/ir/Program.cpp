//===- Program.cpp - the typed IR: stages and programs --------------------===//
//
// Ownership and lookup of stages, expressions, programs and schedules.
//
//===----------------------------------------------------------------------===//

#include "ir/Program.h"
#include "ir/AlgorithmTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cassert>

namespace coconet::ir {

llvm::StringRef stageKindName(StageKind kind) {
  switch (kind) {
#define STAGE(Name, Printed, Description)                                      \
  case StageKind::Name:                                                        \
    return Printed;
#include "ir/StageKinds.def"
  }
  return "?";
}

std::optional<StageKind> parseStageKind(llvm::StringRef name) {
#define STAGE(Name, Printed, Description)                                      \
  if (name == Printed)                                                         \
    return StageKind::Name;
#include "ir/StageKinds.def"
  return std::nullopt;
}

llvm::StringRef stageKindDescription(StageKind kind) {
  switch (kind) {
#define STAGE(Name, Printed, Description)                                      \
  case StageKind::Name:                                                        \
    return Description;
#include "ir/StageKinds.def"
  }
  return "a stage";
}

bool isCommunication(StageKind kind) {
  switch (kind) {
#define STAGE(Name, Printed, Description)                                      \
  case StageKind::Name:                                                        \
    return false;
#define COMMUNICATION_STAGE(Name, Printed, Description)                        \
  case StageKind::Name:                                                        \
    return true;
#include "ir/StageKinds.def"
  }
  return false;
}

bool algorithmImplements(CollectiveAlgorithm algorithm, StageKind kind) {
  if (!isCommunication(kind))
    return false;
  switch (algorithm) {
  case CollectiveAlgorithm::Auto:
  case CollectiveAlgorithm::Library:
    return true;
  case CollectiveAlgorithm::OneShot:
    return kind == StageKind::AllReduce || kind == StageKind::ReduceScatter ||
           kind == StageKind::AllGather || kind == StageKind::AllToAll ||
           kind == StageKind::AllToAllV;
  case CollectiveAlgorithm::TwoShot:
    return kind == StageKind::AllReduce;
  case CollectiveAlgorithm::Synthesized:
    return kind == StageKind::AllReduce || kind == StageKind::ReduceScatter ||
           kind == StageKind::AllGather || kind == StageKind::AllToAll;
  }
  return false;
}

llvm::StringRef scalarOpName(ScalarOp op) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    return Printed;
#include "ir/ScalarOps.def"
  }
  return "?";
}

unsigned scalarOpArity(ScalarOp op) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    return Arity;
#include "ir/ScalarOps.def"
  }
  return 0;
}

ScalarOpClass scalarOpClass(ScalarOp op) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    return ScalarOpClass::Class;
#include "ir/ScalarOps.def"
  }
  return ScalarOpClass::Leaf;
}

bool isFormula(ScalarOp op) {
  switch (op) {
#define SCALAR_OP(Name, Printed, Arity, Class)                                 \
  case ScalarOp::Name:                                                         \
    return false;
#define FORMULA_OP(Name, Printed, Fn)                                          \
  case ScalarOp::Name:                                                         \
    return true;
#include "ir/ScalarOps.def"
  }
  return false;
}

std::optional<ScalarOp> lookupCallableScalarOp(llvm::StringRef name) {
  static const ScalarOp kAll[] = {
#define SCALAR_OP(Name, Printed, Arity, Class) ScalarOp::Name,
#include "ir/ScalarOps.def"
  };
  for (ScalarOp op : kAll) {
    switch (scalarOpClass(op)) {
    case ScalarOpClass::Leaf:
    case ScalarOpClass::Cast:
    case ScalarOpClass::Neg:
    case ScalarOpClass::Arith:
    case ScalarOpClass::Compare:
      continue;
    case ScalarOpClass::Select:
    case ScalarOpClass::FloatMath:
    case ScalarOpClass::NumMath:
    case ScalarOpClass::Pow:
    case ScalarOpClass::MinMax:
    case ScalarOpClass::Dropout:
      if (scalarOpName(op) == name)
        return op;
      continue;
    }
  }
  return std::nullopt;
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

Stage *Program::insertStage(unsigned index, StageKind kind,
                            llvm::StringRef stageName, TensorType type,
                            llvm::ArrayRef<Stage *> ops, llvm::SMRange range) {
  assert(kind != StageKind::Param && "parameters are created by sema");
  assert(index <= stages.size());
  auto stage = std::make_unique<Stage>();
  stage->kind = kind;
  stage->name = stageName.str();
  stage->type = std::move(type);
  stage->operands.assign(ops.begin(), ops.end());
  stage->loc = range;
  Stage *raw = stage.get();
  stages.insert(stages.begin() + index, std::move(stage));
  renumber();
  return raw;
}

void Program::eraseStage(Stage *stage) {
  assert(!stage->isParam() && "parameters are part of the interface");
  assert(getUsers(stage).empty() && !isResult(stage) &&
         "erasing a stage that is still used");
  for (Kernel &k : kernels)
    llvm::erase(k.stages, stage);
  llvm::erase_if(kernels, [](const Kernel &k) { return k.stages.empty(); });
  llvm::erase_if(overlaps, [&](const Overlap &o) {
    return o.producer == stage || o.consumer == stage;
  });
  auto it = llvm::find_if(stages, [&](const std::unique_ptr<Stage> &s) {
    return s.get() == stage;
  });
  assert(it != stages.end());
  stages.erase(it);
  renumber();
}

void Program::eraseStages(llvm::function_ref<bool(const Stage *)> dead) {
  for (Kernel &k : kernels)
    llvm::erase_if(k.stages, [&](Stage *s) { return dead(s); });
  llvm::erase_if(kernels, [](const Kernel &k) { return k.stages.empty(); });
  llvm::erase_if(overlaps, [&](const Overlap &o) {
    return dead(o.producer) || dead(o.consumer);
  });
  llvm::erase_if(stages, [&](const std::unique_ptr<Stage> &s) {
    if (!dead(s.get()))
      return false;
    assert(!s->isParam() && "parameters are part of the interface");
    assert(!isResult(s.get()) && "erasing a result");
    return true;
  });
  renumber();
#ifndef NDEBUG
  for (const auto &s : stages)
    for (const Stage *op : s->operands)
      assert(!dead(op) && "erasing a stage that is still used");
#endif
}

llvm::SmallVector<Stage *, 4> Program::getUsers(const Stage *stage) const {
  llvm::SmallVector<Stage *, 4> users;
  for (const auto &s : stages)
    if (llvm::is_contained(s->operands, stage))
      users.push_back(s.get());
  return users;
}

bool Program::isResult(const Stage *stage) const {
  return llvm::is_contained(results, stage);
}

void Program::replaceUses(Stage *from, Stage *to,
                          llvm::function_ref<bool(const Stage &)> filter) {
  for (const auto &s : stages) {
    if (s.get() == to || (filter && !filter(*s)))
      continue;
    for (Stage *&op : s->operands)
      if (op == from)
        op = to;
  }
}

void Program::replaceResult(Stage *from, Stage *to) {
  for (Stage *&r : results)
    if (r == from)
      r = to;
}

std::string Program::uniqueName(llvm::StringRef base) const {
  if (!findStage(base))
    return base.str();
  for (unsigned i = 1;; ++i) {
    std::string name = base.str() + "." + std::to_string(i);
    if (!findStage(name))
      return name;
  }
}

llvm::SmallVector<const ScalarExpr *, 16>
postOrder(const ScalarExpr *root,
          llvm::function_ref<bool(const ScalarExpr *)> known) {
  llvm::SmallVector<const ScalarExpr *, 16> order;
  llvm::SmallPtrSet<const ScalarExpr *, 16> done;
  // A stack of (node, operands pushed).
  llvm::SmallVector<std::pair<const ScalarExpr *, bool>, 16> stack{
      {root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.pop_back_val();
    if (done.count(e) || known(e))
      continue;
    if (!expanded) {
      stack.push_back({e, true});
      for (const ScalarExpr *a : e->args)
        if (!done.count(a))
          stack.push_back({a, false});
      continue;
    }
    done.insert(e);
    order.push_back(e);
  }
  return order;
}

std::unique_ptr<Program> Program::clone() const {
  auto copy = std::make_unique<Program>();
  copy->name = name;
  copy->mesh = mesh;
  copy->loc = loc;
  copy->sizeNames = sizeNames;
  copy->tables = tables;
  copy->reassociations = reassociations;
  copy->reassociatedCollectives = reassociatedCollectives;
  llvm::DenseMap<const Stage *, Stage *> stageMap;
  llvm::DenseMap<const ScalarExpr *, const ScalarExpr *> exprMap;
  // Bodies are trees whose nodes the program owns; copy them children
  // first.
  auto cloneExpr = [&](const ScalarExpr *root) {
    for (const ScalarExpr *e : postOrder(
             root, [&](const ScalarExpr *e) { return exprMap.count(e); })) {
      ScalarExpr node = *e;
      for (const ScalarExpr *&a : node.args)
        a = exprMap.lookup(a);
      exprMap[e] = copy->addExpr(std::move(node));
    }
    return exprMap.lookup(root);
  };
  for (const auto &s : stages) {
    auto stage = std::make_unique<Stage>(*s);
    for (Stage *&op : stage->operands)
      op = stageMap.lookup(op);
    if (stage->updates)
      stage->updates = stageMap.lookup(stage->updates);
    if (stage->body)
      stage->body = cloneExpr(stage->body);
    stageMap[s.get()] = stage.get();
    if (stage->isParam())
      copy->params.push_back(stage.get());
    copy->stages.push_back(std::move(stage));
  }
  for (Stage *r : results)
    copy->results.push_back(stageMap.lookup(r));
  copy->resultNames = resultNames;
  for (const Kernel &k : kernels) {
    Kernel c = k;
    for (Stage *&s : c.stages)
      s = stageMap.lookup(s);
    copy->kernels.push_back(std::move(c));
  }
  for (const Overlap &o : overlaps) {
    Overlap c = o;
    c.producer = stageMap.lookup(o.producer);
    c.consumer = stageMap.lookup(o.consumer);
    copy->overlaps.push_back(c);
  }
  for (const Requirement &r : requirements) {
    Requirement c = r;
    c.condition = cloneExpr(r.condition);
    for (Stage *&p : c.params)
      p = stageMap.lookup(p);
    copy->requirements.push_back(std::move(c));
  }
  return copy;
}

llvm::SmallVector<std::string, 3> requirementPieces(const Requirement &r) {
  llvm::SmallVector<std::string, 3> pieces;
  for (size_t i = 0; i < r.params.size(); ++i)
    pieces.push_back((i ? ", " : "") + r.params[i]->name + " = ");
  pieces.push_back((r.params.empty() ? "" : ": ") + r.message + " (require(" +
                   r.text + ") at " + r.where + ")");
  return pieces;
}

const SegmentTableDecl *Program::findTable(llvm::StringRef tableName) const {
  for (const SegmentTableDecl &t : tables)
    if (t.name == tableName)
      return &t;
  return nullptr;
}

bool readsBySegment(const Program &program, const Stage &stage,
                    unsigned index) {
  if (stage.kind != StageKind::Elementwise || !stage.type.isSegmented() ||
      index >= stage.operands.size())
    return false;
  const SegmentTableDecl *table = program.findTable(stage.type.segments);
  const Shape &shape = stage.operands[index]->type.shape;
  return table && shape.size() == 1 && shape[0] == table->count;
}

Kernel *Program::kernelOf(const Stage *stage) {
  for (Kernel &k : kernels)
    if (llvm::is_contained(k.stages, stage))
      return &k;
  return nullptr;
}

const Kernel *Program::kernelOf(const Stage *stage) const {
  return const_cast<Program *>(this)->kernelOf(stage);
}

bool Kernel::isFusedCollective() const {
  return llvm::any_of(stages,
                      [](const Stage *s) { return isCommunication(s->kind); });
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

namespace coconet::ir {

StageKind stageKindOf(AlgorithmCollective collective) {
  switch (collective) {
  case AlgorithmCollective::AllGather:
    return StageKind::AllGather;
  case AlgorithmCollective::AllToAll:
    return StageKind::AllToAll;
  case AlgorithmCollective::ReduceScatter:
    return StageKind::ReduceScatter;
  case AlgorithmCollective::AllReduce:
    return StageKind::AllReduce;
  }
  return StageKind::AllGather;
}

uint64_t AlgorithmTable::numChunks() const {
  const uint64_t rk = uint64_t{ranks} * chunksPerRank;
  return collective == AlgorithmCollective::AllToAll ? rk * ranks : rk;
}
uint64_t AlgorithmTable::inputChunks() const {
  const uint64_t rk = uint64_t{ranks} * chunksPerRank;
  return collective == AlgorithmCollective::AllGather ? chunksPerRank : rk;
}
uint64_t AlgorithmTable::numTransfers() const {
  uint64_t n = 0;
  for (const auto &step : steps)
    n += step.size();
  return n;
}

} // namespace coconet::ir
