//===- Lower.cpp - scheduled IR to the kernel-level plan ------------------===//
//
// The table of contents of the lowering (after Halide's Lower.cpp):
//   1. parameters become buffers (tensors) or by-value arguments (scalars);
//   2. stages group into units: the elementwise members of one `fuse`
//      group form one kernel, every other stage is a unit of its own (the
//      collectives of a fused collective included: the seam); units run
//      in a topological order that follows program order where it can;
//   3. every value gets its memory: in registers inside its kernel, in
//      place in the parameter it updates, in the caller's output, or in
//      scratch (Buffers.cpp);
//   4. each unit becomes its steps (LowerSteps.cpp);
//   5. results that could not be written where they belong are copied;
//   6. the seams are recorded, adjacent independent collectives grouped,
//      size divisibility checks collected and scratch slots shared.
//
//===----------------------------------------------------------------------===//

#include "lower/LowerImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <queue>

namespace coconet::lower {

using ir::Stage;

namespace {

bool isKeyword(llvm::StringRef name) {
  static const char *const kKeywords[] = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case",
      "catch", "char", "class", "const", "constexpr", "continue", "default",
      "delete", "do", "double", "else", "enum", "explicit", "export", "extern",
      "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "not", "nullptr", "operator", "or",
      "private", "protected", "public", "register", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "template", "this", "throw",
      "true", "try", "typedef", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "while", "xor", "half", "main", "status",
      "stream", "sizes", "comm", "mesh", "step", "create",
      // Names generated code uses unqualified: namespaces, types, macros,
      // CUDA's built-in variables and the vector kernels' constants.
      "std", "coconet", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
      "uint16_t", "uint32_t", "uint64_t", "size_t", "uintptr_t", "NAN",
      "INFINITY", "INT32_C", "INT64_C", "UINT64_C", "blockIdx", "blockDim",
      "threadIdx", "gridDim", "kThreads", "kVector", "W"};
  return llvm::is_contained(kKeywords, name);
}

/// Groups the stages into units and orders them (see the file comment).
/// The units of one fused collective (its reducing collective, its kernel,
/// its allgather) run adjacent, in that order, so that one kernel can
/// replace their steps: the order is a topological order of the groups
/// (a fuse group is convex, so the groups form an acyclic graph), each
/// group expanded in place.
std::vector<llvm::SmallVector<const Stage *, 8>>
formUnits(const ir::Program &program) {
  std::vector<llvm::SmallVector<const Stage *, 8>> units;
  llvm::DenseMap<const Stage *, unsigned> unitOf;
  llvm::DenseMap<const ir::Kernel *, unsigned> unitOfKernel;
  // The group of each unit: a fused collective's units share one.
  std::vector<unsigned> groupOf;
  llvm::DenseMap<const ir::Kernel *, unsigned> groupOfKernel;
  unsigned numGroups = 0;
  auto groupFor = [&](const ir::Kernel *k) {
    if (!k || !k->isFusedCollective())
      return numGroups++;
    auto [it, fresh] = groupOfKernel.try_emplace(k, numGroups);
    if (fresh)
      ++numGroups;
    return it->second;
  };
  for (const auto &ptr : program.getStages()) {
    const Stage *s = ptr.get();
    if (s->isParam())
      continue;
    const ir::Kernel *k = program.kernelOf(s);
    if (k && !ir::isCommunication(s->kind)) {
      auto [it, fresh] = unitOfKernel.try_emplace(k, units.size());
      if (fresh) {
        units.emplace_back();
        groupOf.push_back(groupFor(k));
      }
      units[it->second].push_back(s);
      unitOf[s] = it->second;
      continue;
    }
    unitOf[s] = units.size();
    units.push_back({s});
    groupOf.push_back(groupFor(k));
  }
  // Each group's units in the order they run: a reducing collective, the
  // kernel, an allgather (the kernel reads the first, the last reads it).
  auto role = [&](unsigned u) {
    const Stage *s = units[u].front();
    if (s->kind == ir::StageKind::AllGather)
      return 2;
    return ir::isCommunication(s->kind) ? 0 : 1;
  };
  std::vector<llvm::SmallVector<unsigned, 3>> members(numGroups);
  for (unsigned u = 0; u < units.size(); ++u)
    members[groupOf[u]].push_back(u);
  for (auto &m : members)
    llvm::stable_sort(
        m, [&](unsigned a, unsigned b) { return role(a) < role(b); });
  // Kahn's algorithm over the groups, taking the ready group whose first
  // stage comes first.
  const unsigned n = numGroups;
  std::vector<unsigned> firstId(n, ~0u);
  for (unsigned u = 0; u < units.size(); ++u)
    firstId[groupOf[u]] =
        std::min<unsigned>(firstId[groupOf[u]], units[u].front()->id);
  std::vector<llvm::SmallVector<unsigned, 4>> successors(n);
  std::vector<unsigned> inDegree(n, 0);
  for (unsigned g = 0; g < n; ++g) {
    llvm::SmallVector<unsigned, 4> preds;
    for (unsigned u : members[g])
      for (const Stage *s : units[u])
        for (const Stage *o : s->operands)
          if (auto it = unitOf.find(o); it != unitOf.end()) {
            unsigned p = groupOf[it->second];
            if (p != g && !llvm::is_contained(preds, p))
              preds.push_back(p);
          }
    for (unsigned p : preds)
      successors[p].push_back(g);
    inDegree[g] = preds.size();
  }
  auto later = [&](unsigned a, unsigned b) { return firstId[a] > firstId[b]; };
  std::priority_queue<unsigned, std::vector<unsigned>, decltype(later)> ready(
      later);
  for (unsigned g = 0; g < n; ++g)
    if (inDegree[g] == 0)
      ready.push(g);
  std::vector<llvm::SmallVector<const Stage *, 8>> ordered;
  while (!ready.empty()) {
    unsigned g = ready.top();
    ready.pop();
    for (unsigned u : members[g])
      ordered.push_back(units[u]);
    for (unsigned s : successors[g])
      if (--inDegree[s] == 0)
        ready.push(s);
  }
  // Convex fuse groups keep the group graph acyclic (the fuse pass refuses
  // the others), so every unit is placed.
  return ordered;
}

/// Marks each collective step whose successor is an independent
/// collective: both are issued in one group.
void groupCollectives(Plan &plan) {
  for (size_t i = 0; i + 1 < plan.steps.size(); ++i) {
    Step &a = plan.steps[i];
    const Step &b = plan.steps[i + 1];
    if (!std::holds_alternative<CollectiveCall>(a.body) ||
        !std::holds_alternative<CollectiveCall>(b.body))
      continue;
    bool dependent = llvm::any_of(
        b.reads, [&](unsigned r) { return llvm::is_contained(a.writes, r); });
    // An algorithm file's run is steps of its own, with kernels between
    // them (cuda/algorithm.h): never inside another group.
    // An alltoallv waits for its counts before it moves rows: never
    // inside a group either.
    auto ownSteps_ = [](const CollectiveCall &c) {
      return c.table || c.kind == Collective::AllToAllV;
    };
    const bool ownSteps = ownSteps_(std::get<CollectiveCall>(a.body)) ||
                          ownSteps_(std::get<CollectiveCall>(b.body));
    a.groupWithNext = !dependent && !ownSteps;
  }
}

/// Sizes that must divide: every sliced extent, and the chunks of overlaps.
void collectSizeChecks(Plan &plan, const ir::Program &program) {
  auto add = [&](SizeCheck check) {
    // Everything divides by 1 (an overlap in one chunk along a dimension
    // nothing slices).
    if (check.axes.empty() && check.factor == 1 && !check.atLeast)
      return;
    for (const SizeCheck &c : plan.checks)
      if (c.global == check.global && c.axes == check.axes &&
          c.factor == check.factor && c.atLeast == check.atLeast)
        return;
    plan.checks.push_back(std::move(check));
  };
  for (const Buffer &b : plan.buffers)
    for (unsigned d = 0; d < b.shape.size(); ++d)
      if (!b.shape[d].axes.empty())
        add({b.shape[d].global, b.shape[d].axes, 1,
             "dimension " + std::to_string(d) + " of '" +
                 (b.value.empty() ? b.name : b.value) + "'"});
  // A topk needs k elements along its dimension.
  for (const auto &s : program.getStages())
    if (s->kind == ir::StageKind::TopK && !s->topkIndices) {
      const ir::Dim &along = s->operands[0]->type.shape[s->dim];
      if (!along.isConstant())
        add({along,
             {},
             1,
             "dimension " + std::to_string(s->dim) + " of '" +
                 s->operands[0]->name + "', the topk of " +
                 std::to_string(s->k) + " '" + s->name + "'",
             s->k});
    }
  // An alltoallv's counts: E / P to each member.
  for (const auto &s : program.getStages())
    if (s->kind == ir::StageKind::AllToAllV && s->countsResult)
      add({s->type.shape[1],
           {static_cast<unsigned>(s->axis)},
           1,
           "dimension 1 of '" + s->operands[0]->name +
               "', the counts of the alltoallv '" + s->name + "'"});
  for (const ir::Overlap &o : program.overlaps) {
    SizeCheck c;
    // Dropless: parts of the experts each member holds (E / P of the
    // alltoallv's counts [P, E]).
    if (const ir::Stage *v = o.alltoallv()) {
      c.global = v->operands[1]->type.shape[1];
      c.axes = {static_cast<unsigned>(v->axis)};
      c.factor = o.chunks;
      c.what = "dimension 1 of '" + v->operands[1]->name +
               "', the experts of the alltoallv '" + v->name +
               "', overlapped in " + std::to_string(o.chunks) + " parts";
      add(std::move(c));
      continue;
    }
    c.global = o.producer->type.shape[o.dim];
    c.axes = o.producer->type.layout.slicingAxes(o.dim);
    if (o.consumer->kind == ir::StageKind::ReduceScatter) {
      if (o.consumer->axis < 0) {
        c.axes.clear();
        for (unsigned a = 0; a < program.mesh.size(); ++a)
          c.axes.push_back(a);
      } else if (!llvm::is_contained(c.axes,
                                     static_cast<unsigned>(o.consumer->axis))) {
        c.axes.push_back(o.consumer->axis);
        llvm::sort(c.axes);
      }
    }
    c.factor = o.chunks;
    c.what = "dimension " + std::to_string(o.dim) + " of '" + o.producer->name +
             "', overlapped in " + std::to_string(o.chunks) + " chunks";
    add(std::move(c));
  }
}

} // namespace

std::string identifier(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  // Generated code names its own things cc_*; user names never do.
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) ||
      llvm::StringRef(out).starts_with("cc_"))
    out = "v_" + out;
  if (isKeyword(out))
    out += '_';
  return out;
}

namespace {

/// `base`, else the first of `base_1`, `base_2`, ... that no element of
/// `named` (buffers or steps) is called.
std::string firstFreeName(llvm::StringRef base,
                          const llvm::StringSet<> &named) {
  std::string name = base.str();
  for (unsigned i = 1; named.contains(name); ++i)
    name = base.str() + "_" + std::to_string(i);
  return name;
}

} // namespace

std::string Lowering::uniqueName(llvm::StringRef base) const {
  return firstFreeName(base, bufferNames);
}

unsigned Lowering::addBuffer(Buffer buffer) {
  buffer.name = uniqueName(buffer.name);
  bufferNames.insert(buffer.name);
  plan.buffers.push_back(std::move(buffer));
  return plan.buffers.size() - 1;
}

unsigned Lowering::addValueBuffer(Buffer::Kind kind, llvm::StringRef name,
                                  const ir::Stage &stage) {
  Buffer b;
  b.kind = kind;
  b.name = name.str();
  b.dtype = stage.type.dtype;
  b.shape = extentsOf(stage.type);
  b.value = stage.name;
  b.type = stage.type;
  return addBuffer(std::move(b));
}

unsigned Lowering::addStep(Step step) {
  // Stage names that differ only in characters a C identifier cannot hold
  // ("x.1", "x_1") give steps the same name.
  step.name = firstFreeName(step.name, stepNames);
  stepNames.insert(step.name);
  if (!std::holds_alternative<CollectiveCall>(step.body) &&
      !std::holds_alternative<MatMulCall>(step.body) &&
      !std::holds_alternative<CopyCall>(step.body) &&
      !std::holds_alternative<StoreScalarCall>(step.body))
    ++kernels;
  plan.steps.push_back(std::move(step));
  return plan.steps.size() - 1;
}

void Lowering::unsupported(const ir::Stage &stage, const llvm::Twine &what) {
  diags.report(stage.loc, DiagId::InternalLowerError, stage.name, what.str());
  failed = true;
}

std::unique_ptr<Plan> lowerProgram(const ir::Program &program,
                                   llvm::StringRef scheduleName,
                                   DiagnosticEngine &diags,
                                   const LowerOptions &options) {
  auto plan = std::make_unique<Plan>();
  plan->programName = program.name;
  plan->mesh = program.mesh;
  plan->sizeNames = program.sizeNames;
  plan->schedule = scheduleName.str();
  plan->name = identifier(scheduleName.empty()
                              ? program.name
                              : program.name + "_" + scheduleName.str());
  Lowering l(program, diags, *plan);
  for (const auto &s : program.getStages())
    for (const Stage *o : s->operands)
      if (auto &u = l.users[o]; u.empty() || u.back() != s.get())
        u.push_back(s.get()); // once, if `s` reads `o` twice
  for (const Stage *p : program.getParams())
    if (program.findUpdateOf(p))
      ++l.numUpdates;

  // 0. Segment tables: create() fills their kernel tables.
  for (const ir::SegmentTableDecl &t : program.tables) {
    Buffer b;
    b.kind = Buffer::Kind::Table;
    b.name = "cc_table_" + identifier(t.name);
    b.dtype = ir::DType::I64;
    b.value = t.name;
    b.type.dtype = ir::DType::I64;
    b.type.shape = {t.count};
    b.type.layout = ir::Layout::replicated(program.mesh.size());
    b.table = plan->tables.size();
    plan->tables.push_back(
        {t.name, t.count.symbols().front(), t.length, l.addBuffer(b)});
  }

  // 1. Parameters, in declaration order.
  for (const Stage *p : program.getParams()) {
    unsigned id = l.addValueBuffer(
        p->type.isScalar() ? Buffer::Kind::ScalarParam : Buffer::Kind::Param,
        identifier(p->name), *p);
    plan->buffers[id].paramIndex = p->paramIndex;
    plan->buffers[id].sharded = p->sharded;
    l.bufferOf[p] = id;
    plan->params.push_back({p->name, p->paramIndex, p->type, id});
  }
  for (const ir::Requirement &r : program.requirements) {
    Plan::Requirement q;
    q.condition = r.condition;
    for (const Stage *p : r.params)
      q.buffers.push_back(l.bufferOf.lookup(p));
    q.pieces = ir::requirementPieces(r);
    q.text = r.text;
    q.message = r.message;
    plan->requirements.push_back(std::move(q));
  }

  // 2. Units, in the order they run.
  auto units = formUnits(program);

  // 3. Where every value lives.
  assignValueBuffers(l, units);

  // 4. Steps; the steps of each fused collective's units (adjacent).
  llvm::DenseMap<const ir::Kernel *, std::pair<unsigned, unsigned>> stepsOf;
  for (const auto &unit : units) {
    const unsigned begin = plan->steps.size();
    if (isKernelUnit(unit))
      lowerElementwise(l, unit);
    else
      lowerStage(l, *unit.front());
    const ir::Kernel *k = program.kernelOf(unit.front());
    if (!k || !k->isFusedCollective())
      continue;
    auto [it, fresh] = stepsOf.try_emplace(k, begin, begin);
    it->second.second = plan->steps.size();
  }

  // 5. Results not yet where they belong.
  addResultCopies(l);
  if (l.failed)
    return nullptr;

  // 6. Seams, groups, checks and slots.
  const auto &stepOf = l.stepOf;
  for (const ir::Kernel &k : program.kernels) {
    if (!k.isFusedCollective())
      continue;
    FusedCollective f;
    f.loc = k.loc;
    auto [begin, end] = stepsOf.lookup(&k);
    for (unsigned i = begin; i < end; ++i)
      f.steps.push_back(i);
    plan->fusedCollectives.push_back(std::move(f));
  }
  for (const ir::Overlap &o : program.overlaps) {
    OverlapGroup g;
    g.producer = stepOf.lookup(o.producer);
    g.consumer = stepOf.lookup(o.consumer);
    g.chunks = o.chunks;
    g.dim = o.dim;
    g.loc = o.loc;
    plan->overlaps.push_back(std::move(g));
  }
  groupCollectives(*plan);
  collectSizeChecks(*plan, program);
  aliasLoneCollectives(*plan);
  // In this order: each reads what the one before decided.
  planFusedCollectives(*plan, options.sequential);
  for (unsigned a = 0; a < plan->mesh.size(); ++a)
    if (llvm::any_of(plan->fusedCollectives, [&](const FusedCollective &f) {
          return f.fused() && f.axis == static_cast<int>(a);
        }))
      plan->teamAxes.push_back(a);
  planOverlaps(*plan, options.sequential);
  planFusedKernels(*plan);
  assignSlots(*plan);
  return plan;
}

} // namespace coconet::lower
