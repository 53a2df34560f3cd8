//===- RequireChecker.cpp - require(cond, "message") ----------------------===//
//
// A requirement is a bool condition over the program's replicated scalar
// parameters and literals (docs/language.md, "Requirements"). It computes
// nothing in the program: sema checks the condition as any expression,
// refuses one that reads a value the program computes, a tensor or a local
// scalar (ranks could decide differently and wait for each other in a
// collective), and keeps it as an ir::Requirement whose leaves are the
// parameters it reads. Every host evaluates it before the step.
//
//===----------------------------------------------------------------------===//

#include "sema/ProgramChecker.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdio>

namespace coconet::sema {

namespace {

/// A refusal's message is one line of a terminal.
constexpr size_t kMaxMessageBytes = 200;

/// The source text of `range` with its runs of white space made one space.
std::string sourceText(llvm::SMRange range) {
  const char *begin = range.Start.getPointer();
  const char *end = range.End.getPointer();
  std::string out;
  if (!begin || !end || end < begin)
    return out;
  bool space = false;
  for (const char *p = begin; p != end; ++p) {
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += *p;
  }
  return out;
}

} // namespace

bool ProgramChecker::checkRequire(const ast::Stmt &stmt) {
  statementName = "require";
  const ast::Expr &cond = *stmt.values[0];
  bool ok = true;
  llvm::StringRef message = stmt.message.name;
  if (message.empty()) {
    diags.report(stmt.message.range, DiagId::RequireEmptyMessage);
    ok = false;
  } else if (message.size() > kMaxMessageBytes) {
    diags.report(stmt.message.range, DiagId::RequireMessageText,
                 "has " + std::to_string(message.size()) + " bytes; at most " +
                     std::to_string(kMaxMessageBytes));
    ok = false;
  } else if (size_t at = message.find_if([](char c) {
               return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
             });
             at != llvm::StringRef::npos) {
    char code[8];
    std::snprintf(
        code, sizeof code, "U+%04X",
        static_cast<unsigned>(static_cast<unsigned char>(message[at])));
    diags.report(stmt.message.range, DiagId::RequireMessageText,
                 std::string("holds the control character ") + code);
    ok = false;
  }
  Value v = checkExpr(cond);
  if (v.isError())
    return false;
  if (v.isLiteral()) {
    diags.report(cond.range, DiagId::RequireConstant);
    return false;
  }
  // The leaves: each must be a replicated scalar parameter.
  const BodyNode *root = v.body;
  if (v.kind == Value::Kind::Stage) {
    BodyNode leaf;
    leaf.op = ir::ScalarOp::Operand;
    leaf.dtype = v.type.dtype;
    leaf.stage = v.stage;
    leaf.range = v.range;
    nodes.push_back(std::make_unique<BodyNode>(std::move(leaf)));
    root = nodes.back().get();
  }
  bool readsParam = false;
  llvm::SmallPtrSet<const ir::Stage *, 4> reported;
  llvm::SmallVector<const BodyNode *, 16> work{root};
  while (!work.empty()) {
    const BodyNode *n = work.pop_back_val();
    work.append(n->args.begin(), n->args.end());
    if (n->op != ir::ScalarOp::Operand)
      continue;
    const ir::Stage *s = n->stage;
    readsParam = true;
    if ((s->isParam() && s->type.isScalar() &&
         !s->type.layout.isLocalAnywhere()) ||
        !reported.insert(s).second)
      continue; // a replicated scalar parameter, or reported already
    ok = false;
    if (!s->isParam())
      diags.report(n->range, DiagId::RequireReadsComputed, s->name);
    else if (!s->type.isScalar())
      diags.report(n->range, DiagId::RequireReadsTensor, s->name,
                   s->type.str(program.mesh));
    else
      diags.report(n->range, DiagId::RequireReadsLocal, s->name);
  }
  if (!readsParam) {
    diags.report(cond.range, DiagId::RequireConstant);
    ok = false;
  }
  if (!ok)
    return false;
  if (v.type.dtype != ir::DType::Bool || !v.type.isScalar()) {
    diags.report(cond.range, DiagId::RequireNotBool, v.type.str(program.mesh));
    return false;
  }

  ir::Requirement r;
  r.condition = lowerBody(root, r.params);
  r.text = sourceText(cond.range);
  r.message = stmt.message.name;
  r.loc = stmt.range;
  llvm::SourceMgr &sm = diags.getSourceMgr();
  if (unsigned buffer = sm.FindBufferContainingLoc(stmt.range.Start)) {
    r.where = llvm::sys::path::filename(
                  sm.getMemoryBuffer(buffer)->getBufferIdentifier())
                  .str() +
              ":" + std::to_string(sm.FindLineNumber(stmt.range.Start, buffer));
  }
  program.requirements.push_back(std::move(r));
  return true;
}

} // namespace coconet::sema
