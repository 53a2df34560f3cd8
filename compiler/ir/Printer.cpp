//===- Printer.cpp - the stable text form of the typed IR -----------------===//
//
// Prints programs for --emit=ir. Deterministic: stages in program order,
// numbered by id; no addresses. Elementwise bodies print as nested calls
// reading operand stages by id, e.g. `add(mul(%3, %2), 1)`.
//
//===----------------------------------------------------------------------===//

#include "ir/Describe.h"
#include "ir/Program.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace coconet::ir {

/// The shortest decimal text that reads back as the same double.
static std::string formatDouble(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string s = buf;
  // Keep float literals recognisable as floats.
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

/// Prints a body iteratively: a stack of (node, next child) frames;
/// `operand` prints an Operand leaf.
static void printExpr(const ScalarExpr *root,
                      llvm::function_ref<void(unsigned)> operand,
                      llvm::raw_ostream &os) {
  struct Frame {
    const ScalarExpr *expr;
    unsigned next;
  };
  llvm::SmallVector<Frame, 16> stack;
  stack.push_back({root, 0});
  while (!stack.empty()) {
    Frame &frame = stack.back();
    const ScalarExpr *e = frame.expr;
    if (frame.next == 0) {
      if (e->op == ScalarOp::Operand) {
        operand(e->operandIndex);
        stack.pop_back();
        continue;
      }
      if (e->op == ScalarOp::Const) {
        if (isFloat(e->dtype))
          os << formatDouble(e->constValue);
        else if (e->dtype == DType::Bool)
          os << (e->constInt ? "true" : "false");
        else if (e->dtype == DType::U64)
          os << static_cast<uint64_t>(e->constInt);
        else
          os << e->constInt;
        if (e->dtype != DType::F32 && e->dtype != DType::I32 &&
            e->dtype != DType::Bool)
          os << ':' << dtypeName(e->dtype);
        stack.pop_back();
        continue;
      }
      // A cast prints as its type's name, every other operation as its own.
      os << (e->op == ScalarOp::Cast ? dtypeName(e->dtype)
                                     : scalarOpName(e->op))
         << '(';
    }
    if (frame.next < e->args.size()) {
      if (frame.next)
        os << ", ";
      const ScalarExpr *child = e->args[frame.next++];
      stack.push_back({child, 0});
      continue;
    }
    os << ')';
    stack.pop_back();
  }
}

/// An elementwise stage's body, its leaves the stage's operands.
static void printBody(const Program &program, const Stage &stage,
                      llvm::raw_ostream &os) {
  printExpr(
      stage.body,
      [&](unsigned i) {
        if (i >= stage.operands.size())
          os << "%<bad operand " << i << '>';
        else if (readsBySegment(program, stage, i))
          os << "expand(%" << stage.operands[i]->id << ')';
        else
          os << '%' << stage.operands[i]->id;
      },
      os);
}

/// The right-hand side of a stage: operation, attributes and operands
/// (ir/Describe.h), or an elementwise stage's body.
static void printRhs(const Program &program, const Stage &stage,
                     llvm::raw_ostream &os) {
  if (stage.kind == StageKind::Elementwise) {
    os << "elementwise ";
    printBody(program, stage, os);
    return;
  }
  const StageDescription d = describeStage(program, stage);
  os << d.operation;
  if (stage.kind == StageKind::Param) {
    if (d.sharded)
      os << " sharded";
    return;
  }
  os << '(';
  bool first = true;
  auto item = [&](const std::string &text) {
    os << (first ? "" : ", ") << text;
    first = false;
  };
  for (const std::string &a : d.leading)
    item(a);
  for (const Stage *op : stage.operands)
    item("%" + std::to_string(op->id));
  for (const std::string &k : d.keywords)
    item(k);
  os << ')';
  if (!d.axis.empty())
    os << " over " << d.axis;
}

static void printStage(const Program &program, const Stage &stage,
                       llvm::raw_ostream &os) {
  os << "  %" << stage.id << ' ' << stage.name << " : "
     << stage.type.str(program.mesh) << " = ";
  printRhs(program, stage, os);
  if (stage.updates)
    os << " -> update %" << stage.updates->id;
  os << '\n';
}

void printProgram(const Program &program, llvm::raw_ostream &os) {
  os << "program " << program.name;
  if (!program.mesh.isImplicit || program.mesh.axes.size() != 1) {
    os << " mesh [";
    for (size_t i = 0; i < program.mesh.axes.size(); ++i) {
      if (i)
        os << ", ";
      os << program.mesh.axes[i].name << ": " << program.mesh.axes[i].size;
    }
    os << ']';
  }
  os << " {\n";
  for (const SegmentTableDecl &t : program.tables)
    os << "  table " << t.name << " : segments[" << t.count.str() << "] of "
       << t.length.str() << '\n';
  for (const auto &stage : program.getStages())
    printStage(program, *stage, os);
  for (const Requirement &r : program.requirements) {
    os << "  require ";
    printExpr(
        r.condition,
        [&](unsigned i) {
          if (i >= r.params.size())
            os << "%<bad operand " << i << '>';
          else
            os << '%' << r.params[i]->id;
        },
        os);
    os << " \"" << r.message << "\"\n";
  }
  os << "  results";
  for (size_t i = 0; i < program.getResults().size(); ++i) {
    const Stage *r = program.getResults()[i];
    os << (i ? ", " : " ") << '%' << r->id;
    if (r->updates && program.getResultName(i) == r->updates->name)
      os << " -> " << r->updates->name;
    else if (r->name != program.getResultName(i))
      os << " as " << program.getResultName(i);
  }
  os << '\n';
  for (size_t i = 0; i < program.kernels.size(); ++i) {
    const Kernel &k = program.kernels[i];
    os << "  kernel k" << i << " ("
       << (k.isFusedCollective() ? "fused collective" : "elementwise") << "):";
    for (const Stage *s : k.stages)
      os << " %" << s->id;
    os << '\n';
  }
  for (const Overlap &o : program.overlaps)
    os << "  overlap %" << o.producer->id << " with %" << o.consumer->id << ": "
       << o.chunks << " chunks along dim " << o.dim << '\n';
  for (const std::string &r : program.reassociations)
    os << "  reassociates: " << r << '\n';
  os << "}\n";
}

std::string stageSignature(const Program &program, const Stage &stage) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << stage.type.str(program.mesh) << " = ";
  printRhs(program, stage, os);
  return text;
}

static llvm::StringRef directiveName(Schedule::Directive::Kind kind) {
  switch (kind) {
  case Schedule::Directive::Kind::Split:
    return "split";
  case Schedule::Directive::Kind::Hierarchical:
    return "hierarchical";
  case Schedule::Directive::Kind::Reorder:
    return "reorder";
  case Schedule::Directive::Kind::Shard:
    return "shard";
  case Schedule::Directive::Kind::Fuse:
    return "fuse";
  case Schedule::Directive::Kind::Overlap:
    return "overlap";
  case Schedule::Directive::Kind::Algorithm:
    return "algorithm";
  case Schedule::Directive::Kind::Apply:
    return "apply";
  }
  return "?";
}

void printSchedule(const Schedule &schedule, llvm::raw_ostream &os) {
  os << "schedule " << schedule.name << " for " << schedule.program << " {\n";
  for (const auto &d : schedule.directives) {
    os << "  ";
    if (d.kind == Schedule::Directive::Kind::Apply) {
      os << "apply " << (d.args.empty() ? "?" : d.args[0]) << '\n';
      continue;
    }
    if (!d.results.empty()) {
      os << '(';
      for (size_t i = 0; i < d.results.size(); ++i)
        os << (i ? ", " : "") << d.results[i];
      os << ") = ";
    }
    os << directiveName(d.kind) << '(';
    for (size_t i = 0; i < d.args.size(); ++i)
      os << (i ? ", " : "") << d.args[i];
    os << ')';
    if (d.kind == Schedule::Directive::Kind::Overlap)
      os << " chunks " << d.chunks;
    os << '\n';
  }
  os << "}\n";
}

} // namespace coconet::ir
