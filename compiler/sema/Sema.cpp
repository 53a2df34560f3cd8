//===- Sema.cpp - programs, parameters and statements ---------------------===//
//
// Checks each program's mesh, parameters and statements and builds its IR;
// hands schedules to ScheduleChecker. Errors poison the name a statement
// defines, so later statements using it stay quiet instead of cascading.
//
//===----------------------------------------------------------------------===//

#include "sema/Sema.h"
#include "sema/Builtins.h"
#include "sema/ProgramChecker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

namespace coconet::sema {

using ir::AxisLayout;
using ir::AxisState;

/// Checks schedules (ScheduleChecker.cpp).
bool checkSchedules(llvm::ArrayRef<const ast::Module *> modules,
                    ir::Module &module, DiagnosticEngine &diags);

static bool checkNewName(ProgramChecker &c, const ast::Ident &id,
                         llvm::StringRef what) {
  if (isBuiltinName(id.name)) {
    c.diags.report(id.range, DiagId::ReservedName, id.name, what);
    return false;
  }
  auto it = c.nameRanges.find(id.name);
  if (it != c.nameRanges.end()) {
    c.diags.report(id.range, DiagId::Redefinition, id.name)
        .note(it->second, DiagId::PreviousDefinition, id.name);
    return false;
  }
  return true;
}

static std::optional<ir::Layout>
checkLayout(ProgramChecker &c, const ast::Param &param, unsigned rank) {
  const ir::Mesh &mesh = c.program.mesh;
  ir::Layout layout(mesh.size());
  llvm::SmallVector<bool, 4> named(mesh.size(), false);
  const ast::LayoutTerm *catchAll = nullptr;
  bool ok = true;
  for (const ast::LayoutTerm &term : param.type.layout) {
    AxisLayout state;
    switch (term.kind) {
    case ast::LayoutKind::Local:
      state.state = AxisState::Local;
      break;
    case ast::LayoutKind::Replicated:
      state.state = AxisState::Replicated;
      break;
    case ast::LayoutKind::Sliced:
      state.state = AxisState::Sliced;
      state.dim = static_cast<int>(term.sliceDim.value_or(0));
      if (term.sliceDim.value_or(0) >= static_cast<int64_t>(rank)) {
        c.diags.report(term.range, DiagId::SliceDimOutOfRange, *term.sliceDim,
                       rank);
        ok = false;
        continue;
      }
      break;
    }
    if (term.axes.empty()) {
      if (catchAll) {
        c.diags.report(term.range, DiagId::LayoutAxisTwice, param.name.name,
                       "(all)");
        ok = false;
      }
      catchAll = &term;
      continue;
    }
    for (const ast::Ident &axis : term.axes) {
      auto index = mesh.findAxis(axis.name);
      if (!index) {
        std::string axes;
        for (const auto &a : mesh.axes)
          axes += (axes.empty() ? "'" : ", '") + a.name + "'";
        c.diags.report(axis.range, DiagId::UnknownMeshAxis, axis.name,
                       mesh.isImplicit
                           ? "the program has no mesh; its only axis is " + axes
                           : "the mesh has axes " + axes);
        ok = false;
        continue;
      }
      if (named[*index]) {
        c.diags.report(axis.range, DiagId::LayoutAxisTwice, param.name.name,
                       axis.name);
        ok = false;
        continue;
      }
      named[*index] = true;
      layout[*index] = state;
    }
  }
  if (catchAll) {
    AxisLayout state;
    state.state = catchAll->kind == ast::LayoutKind::Local ? AxisState::Local
                  : catchAll->kind == ast::LayoutKind::Sliced
                      ? AxisState::Sliced
                      : AxisState::Replicated;
    state.dim = static_cast<int>(catchAll->sliceDim.value_or(0));
    for (unsigned a = 0; a < mesh.size(); ++a)
      if (!named[a])
        layout[a] = state;
  }
  if (!ok)
    return std::nullopt;
  return layout;
}

bool ProgramChecker::declaredType(const ast::Param &decl,
                                  ir::TensorType &type) {
  bool ok = true;
  auto dtype = ir::parseDType(decl.type.dtype.name);
  if (!dtype) {
    diags.report(decl.type.dtype.range, DiagId::UnknownElementType,
                 decl.type.dtype.name);
    ok = false;
  } else {
    type.dtype = *dtype;
  }
  for (const ast::DimExpr &dimExpr : decl.type.dims) {
    ir::Dim dim = ir::Dim::constant(1);
    for (const ast::DimFactor &f : dimExpr.factors) {
      if (f.isLiteral) {
        if (f.value <= 0) {
          diags.report(f.range, DiagId::BadDimFactor, f.value);
          ok = false;
        }
        dim = dim * ir::Dim::constant(f.value);
        continue;
      }
      dim = dim * ir::Dim::symbol(f.name);
      if (!llvm::is_contained(program.sizeNames, f.name))
        program.sizeNames.push_back(f.name);
    }
    type.shape.push_back(dim);
  }
  // A scalar is replicated (the same on every rank) or local (each
  // rank's own, on the axes named); it has no dimension to slice.
  bool sliceless = true;
  if (!decl.type.isTensor)
    for (const ast::LayoutTerm &term : decl.type.layout)
      if (term.kind == ast::LayoutKind::Sliced) {
        diags.report(term.range, DiagId::ScalarSliced, decl.name.name);
        sliceless = ok = false;
      }
  auto layout =
      sliceless ? checkLayout(*this, decl, type.rank()) : std::nullopt;
  if (!layout)
    ok = false;
  else
    type.layout = *layout;
  return ok;
}

bool ProgramChecker::checkConstant(const ast::Stmt &stmt) {
  ast::Param decl;
  decl.name = stmt.name;
  decl.type = *stmt.declType;
  decl.range = stmt.range;
  bool ok = checkNewName(*this, stmt.name, "value");
  ir::TensorType type;
  if (!declaredType(decl, type))
    ok = false;
  if (!decl.type.segmentedBy.empty()) {
    diags.report(decl.type.segmentedBy[0].range, DiagId::ConstantValue,
                 stmt.name.name, "a constant is not segmented");
    ok = false;
  }
  // Every element is the value: a literal, or a replicated scalar.
  const ast::Expr &rhs = *stmt.values[0];
  Value v = checkExpr(rhs);
  if (v.isError() || !ok)
    return false;
  if (v.isLiteral()) {
    v = typeLiteral(*this, v, type.dtype);
    if (v.isError())
      return false;
  } else if (v.kind != Value::Kind::Stage || !v.type.isScalar() ||
             !v.type.layout.isReplicated() || v.type.dtype != type.dtype) {
    diags.report(rhs.range, DiagId::ConstantValue, stmt.name.name,
                 "its value must be a literal or a replicated " +
                     ir::dtypeName(type.dtype).str() + " scalar, not " +
                     v.type.str(program.mesh));
    return false;
  }
  v.type = type;
  ir::Stage *stage = materialize(v, stmt.name.name, /*copyExisting=*/true);
  if (!stage)
    return false;
  stage->loc = stmt.range;
  names[stmt.name.name] = stage;
  nameRanges[stmt.name.name] = stmt.name.range;
  return true;
}

bool ProgramChecker::checkParams() {
  bool ok = true;
  auto noteSize = [&](const std::string &s) {
    if (!llvm::is_contained(program.sizeNames, s))
      program.sizeNames.push_back(s);
  };
  for (const auto &axis : program.mesh.axes)
    noteSize(axis.size);
  // `segmented(t)` terms, resolved once every table is known.
  llvm::SmallVector<std::pair<ir::Stage *, ast::Ident>, 4> segmented;
  for (const ast::Param &param : ast.params) {
    if (param.type.dtype.name == "segments") {
      if (checkSegmentTable(param))
        nameRanges[param.name.name] = param.name.range;
      else
        ok = false;
      continue;
    }
    bool paramOk = checkNewName(*this, param.name, "parameter");
    ir::TensorType type;
    if (!declaredType(param, type))
      paramOk = false;
    nameRanges[param.name.name] = param.name.range;
    if (!paramOk) {
      poisoned.insert(param.name.name);
      ok = false;
      // Keep parameter indices stable: still create the parameter.
    }
    ir::Stage *stage = program.addStage(ir::StageKind::Param, param.name.name,
                                        type, {}, param.range);
    if (paramOk)
      names[param.name.name] = stage;
    for (size_t i = 0; i < param.type.segmentedBy.size(); ++i) {
      if (i == 1) {
        diags.report(param.type.segmentedBy[i].range, DiagId::SegmentedTwice,
                     param.name.name);
        ok = false;
      } else if (paramOk) {
        segmented.emplace_back(stage, param.type.segmentedBy[i]);
      }
    }
  }
  return checkSegmented(segmented) && ok;
}

bool ProgramChecker::checkSegmentTable(const ast::Param &param) {
  bool ok = checkNewName(*this, param.name, "segment table");
  const ast::TypeSpec &t = param.type;
  if (!t.isTensor || t.dims.size() != 1 || t.dims[0].factors.size() != 1 ||
      t.dims[0].factors[0].isLiteral || !t.layout.empty() ||
      !t.segmentedBy.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    ast::printTypeSpec(t, os);
    diags.report(t.range, DiagId::SegmentTableShape, text);
    return false;
  }
  if (!ok)
    return false;
  const std::string &count = t.dims[0].factors[0].name;
  if (!llvm::is_contained(program.sizeNames, count))
    program.sizeNames.push_back(count);
  ir::SegmentTableDecl table;
  table.name = param.name.name;
  table.count = ir::Dim::symbol(count);
  table.loc = param.range;
  program.tables.push_back(std::move(table));
  return true;
}

bool ProgramChecker::checkSegmented(
    llvm::ArrayRef<std::pair<ir::Stage *, ast::Ident>> uses) {
  bool ok = true;
  // The first tensor of each table, which gives the table its length.
  llvm::StringMap<const ir::Stage *> first;
  for (const auto &[stage, table] : uses) {
    const ir::SegmentTableDecl *decl = program.findTable(table.name);
    if (!decl) {
      diags.report(table.range, DiagId::SegmentedNotTable, table.name,
                   "'segmented(...)'");
      ok = false;
      continue;
    }
    if (stage->type.rank() != 1) {
      diags.report(table.range, DiagId::SegmentedRank, "'" + stage->name + "'",
                   ir::shapeStr(stage->type.shape));
      ok = false;
      continue;
    }
    auto [it, isFirst] = first.try_emplace(table.name, stage);
    auto *mutableDecl = const_cast<ir::SegmentTableDecl *>(decl);
    if (isFirst) {
      mutableDecl->length = stage->type.shape[0];
    } else if (decl->length != stage->type.shape[0]) {
      diags.report(table.range, DiagId::SegmentedLength, stage->name,
                   table.name, stage->type.shape[0].str(), it->second->name,
                   decl->length.str());
      ok = false;
      continue;
    }
    stage->type.segments = table.name;
  }
  for (const ir::SegmentTableDecl &t : program.tables) {
    if (!first.count(t.name)) {
      if (ok)
        diags.report(t.loc, DiagId::SegmentsUnused, t.name);
      ok = false;
    } else if (t.count == t.length) {
      diags.report(t.loc, DiagId::SegmentCountIsLength, t.name, t.count.str());
      ok = false;
    }
  }
  return ok;
}

bool ProgramChecker::checkUpdate(const ast::Stmt &stmt, const ast::Expr &call) {
  if (call.operands.size() != 2) {
    diags.report(call.range, DiagId::WrongArgCount, "update", "2 arguments",
                 call.operands.size());
    return false;
  }
  for (const ast::Ident &key : call.argKeys)
    if (!key.name.empty()) {
      diags.report(key.range, DiagId::UpdateKeywords);
      return false;
    }
  const ast::Expr &target = *call.operands[0];
  ir::Stage *param = nullptr;
  if (target.kind == ast::Expr::Kind::Name) {
    auto it = names.find(target.text);
    if (it != names.end())
      param = it->second;
    else if (poisoned.contains(target.text))
      return false;
  }
  if (!param || !param->isParam() || param->type.isScalar()) {
    auto diag = diags.report(
        target.range, DiagId::UpdateNotParam,
        target.kind == ast::Expr::Kind::Name ? target.text : "expression");
    if (param)
      diag.note(param->loc, DiagId::ValueDefinedHere, param->name);
    return false;
  }
  if (ir::Stage *previous = program.findUpdateOf(param)) {
    diags.report(target.range, DiagId::UpdateTwice, param->name)
        .note(previous->loc, DiagId::FirstUpdate, param->name);
    return false;
  }
  Value value = checkExpr(*call.operands[1]);
  if (value.isError())
    return false;
  if (value.isLiteral())
    value = typeLiteral(*this, value, param->type.dtype);
  if (value.isError())
    return false;
  if (value.type != param->type) {
    diags
        .report(call.operands[1]->range, DiagId::UpdateTypeMismatch,
                param->name, param->type.str(program.mesh),
                value.type.str(program.mesh))
        .note(param->loc, DiagId::ValueDefinedHere, param->name);
    return false;
  }
  // A stage computed by this statement becomes the update; a reference to
  // an earlier value is copied so the statement has a stage of its own.
  ir::Stage *stage = materialize(value, stmt.name.name, !value.fresh);
  if (!stage)
    return false;
  stage->name = stmt.name.name;
  stage->loc = stmt.range;
  stage->updates = param;
  names[stmt.name.name] = stage;
  return true;
}

bool ProgramChecker::checkTupleAssign(const ast::Stmt &stmt) {
  const ast::Expr &rhs = *stmt.values[0];
  llvm::SmallVector<const ast::Ident *, 2> idents{&stmt.name};
  for (const ast::Ident &n : stmt.moreNames)
    idents.push_back(&n);
  auto poison = [&] {
    for (const ast::Ident *id : idents)
      if (!names.count(id->name))
        poisoned.insert(id->name);
    return false;
  };
  if (rhs.kind != ast::Expr::Kind::Call ||
      (rhs.text != "topk" && rhs.text != "alltoallv")) {
    std::string what = rhs.kind == ast::Expr::Kind::Call
                           ? rhs.text
                           : std::string("the expression");
    diags.report(rhs.range, DiagId::TupleNeedsTopk, what);
    return poison();
  }
  if (idents.size() != 2) {
    diags.report(stmt.range, DiagId::TupleArity, rhs.text, idents.size());
    return poison();
  }
  bool namesOk = true;
  for (const ast::Ident *id : idents) {
    if (!checkNewName(*this, *id, "value")) {
      namesOk = false;
      continue;
    }
    nameRanges[id->name] = id->range;
  }
  tupleCall = true;
  secondResult = nullptr;
  Value v = checkExpr(rhs);
  tupleCall = false;
  if (v.isError() || !namesOk || !secondResult)
    return poison();
  ir::Stage *stages[] = {v.stage, secondResult};
  for (unsigned i = 0; i < 2; ++i) {
    stages[i]->name = idents[i]->name;
    stages[i]->loc = stmt.range;
    names[idents[i]->name] = stages[i];
  }
  return true;
}

bool ProgramChecker::checkStatements() {
  bool ok = true;
  llvm::SmallVector<ir::Stage *, 4> returned;
  // Results are known by name (the generated API, .npy files): each
  // returned value once, and never a parameter that is also updated.
  llvm::SmallVector<std::pair<ir::Stage *, llvm::SMRange>, 4> returnedAt;
  for (size_t i = 0; i < ast.body.size(); ++i) {
    const ast::Stmt &stmt = ast.body[i];
    nestedCount = 0;
    if (stmt.kind == ast::Stmt::Kind::Require) {
      if (!checkRequire(stmt))
        ok = false;
      continue;
    }
    if (stmt.kind == ast::Stmt::Kind::Return) {
      if (i + 1 != ast.body.size()) {
        diags.report(stmt.range, DiagId::ReturnNotLast);
        ok = false;
      }
      statementName = "return";
      for (const auto &e : stmt.values) {
        Value v = checkExpr(*e);
        if (v.isError()) {
          ok = false;
          continue;
        }
        ir::Stage *s = v.kind == Value::Kind::Stage
                           ? v.stage
                           : materialize(v, nestedName(), false);
        if (!s) {
          ok = false;
          continue;
        }
        auto first = llvm::find_if(returnedAt,
                                   [&](const auto &r) { return r.first == s; });
        if (first != returnedAt.end()) {
          diags.report(e->range, DiagId::ReturnedTwice, s->name)
              .note(first->second, DiagId::FirstReturnedHere, s->name);
          ok = false;
          continue;
        }
        returnedAt.push_back({s, e->range});
        returned.push_back(s);
      }
      continue;
    }
    statementName = stmt.name.name;
    if (!stmt.moreNames.empty() || stmt.declType) {
      if (!(stmt.declType ? checkConstant(stmt) : checkTupleAssign(stmt))) {
        ok = false;
        if (!names.count(stmt.name.name))
          poisoned.insert(stmt.name.name);
      }
      continue;
    }
    bool nameOk = checkNewName(*this, stmt.name, "value");
    const ast::Expr &rhs = *stmt.values[0];
    bool stmtOk;
    if (rhs.kind == ast::Expr::Kind::Call && rhs.text == "update") {
      stmtOk = nameOk && checkUpdate(stmt, rhs);
    } else {
      Value v = checkExpr(rhs);
      ir::Stage *stage = nullptr;
      if (!v.isError() && nameOk) {
        stage = materialize(v, stmt.name.name, !v.fresh);
        if (stage) {
          stage->name = stmt.name.name;
          stage->loc = stmt.range;
          names[stmt.name.name] = stage;
        }
      }
      stmtOk = stage != nullptr;
    }
    if (!nameOk) {
      // Keep a first definition; a reserved name is poisoned so its uses
      // stay quiet.
      if (!names.count(stmt.name.name))
        poisoned.insert(stmt.name.name);
      continue;
    }
    nameRanges[stmt.name.name] = stmt.name.range;
    if (!stmtOk) {
      poisoned.insert(stmt.name.name);
      ok = false;
    }
  }
  for (const auto &[s, range] : returnedAt)
    if (s->isParam())
      if (const ir::Stage *u = program.findUpdateOf(s)) {
        diags.report(range, DiagId::ReturnedUpdatedParam, s->name, u->name);
        ok = false;
      }
  if (!ok)
    return false;
  for (ir::Stage *param : program.getParams())
    if (ir::Stage *u = program.findUpdateOf(param))
      program.addResult(u);
  for (ir::Stage *r : returned)
    program.addResult(r, /*returned=*/true);
  if (program.getResults().empty()) {
    diags.report(ast.name.range, DiagId::EmptyProgram, ast.name.name);
    return false;
  }
  return true;
}

bool ProgramChecker::run() {
  program.name = ast.name.name;
  program.loc = ast.range;
  if (ast.hasMesh) {
    program.mesh.isImplicit = false;
    llvm::StringSet<> seen;
    bool ok = true;
    for (const ast::MeshAxis &axis : ast.mesh) {
      if (!seen.insert(axis.name.name).second) {
        diags.report(axis.name.range, DiagId::Redefinition, axis.name.name);
        ok = false;
      }
      program.mesh.axes.push_back({axis.name.name, axis.size.name});
    }
    if (!ok)
      return false;
  } else {
    program.mesh = ir::Mesh::world();
  }
  bool paramsOk = checkParams();
  bool bodyOk = checkStatements();
  program.renumber();
  return paramsOk && bodyOk;
}

std::unique_ptr<ir::Module>
checkModules(llvm::ArrayRef<const ast::Module *> modules,
             DiagnosticEngine &diags) {
  auto module = std::make_unique<ir::Module>();
  llvm::StringMap<llvm::SMRange> programRanges;
  llvm::StringSet<> allPrograms;
  for (const ast::Module *m : modules)
    for (const ast::Program &p : m->programs)
      allPrograms.insert(p.name.name);
  bool ok = true;
  for (const ast::Module *m : modules) {
    for (const ast::Program &p : m->programs) {
      auto it = programRanges.find(p.name.name);
      if (it != programRanges.end()) {
        diags.report(p.name.range, DiagId::Redefinition, p.name.name)
            .note(it->second, DiagId::PreviousDefinition, p.name.name);
        ok = false;
        continue;
      }
      programRanges[p.name.name] = p.name.range;
      auto program = std::make_unique<ir::Program>();
      ProgramChecker checker(p, diags, *program, allPrograms);
      if (!checker.run()) {
        ok = false;
        continue;
      }
      ir::narrowReductions(*program);
      if (std::string problem = ir::verifyProgram(*program); !problem.empty()) {
        // A compiler bug: say so plainly rather than go on with bad IR.
        llvm::errs() << "coconetc: internal compiler error: IR verifier: "
                     << problem << '\n';
        ok = false;
        continue;
      }
      module->programs.push_back(std::move(program));
    }
  }
  if (!checkSchedules(modules, *module, diags))
    ok = false;
  if (!ok || diags.hadError())
    return nullptr;
  return module;
}

std::unique_ptr<ir::Module> checkModule(const ast::Module &module,
                                        DiagnosticEngine &diags) {
  const ast::Module *one = &module;
  return checkModules(llvm::ArrayRef(one), diags);
}

} // namespace coconet::sema
