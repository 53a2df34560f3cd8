//===- AstPrinter.cpp - a readable dump of the AST ------------------------===//
//
// printModule writes the tree in a stable, indented form for --emit=ast and
// for tests: one line per import, program, parameter, statement, schedule
// and directive, in source order, without source locations. Expressions are
// printed fully parenthesised with their kind spelt out, e.g.
//
//   program adam
//     param g: f16[N] local
//     stmt m1 = ((name beta1 * name m) + (float 0.1 * name g))
//     stmt gs = call allreduce(name sum, name g, axis=name tp)
//
// Also the small helpers declared in Ast.h: spelling() and Import::dotted().
//
//===----------------------------------------------------------------------===//

#include "ast/Ast.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <string>

namespace coconet::ast {

llvm::StringRef spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  }
  return "?";
}

std::string Import::dotted() const {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i != 0)
      out += '.';
    out += path[i].name;
  }
  return out;
}

namespace {

/// The shortest text that reads back as `value`.
std::string formatDouble(double value) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value);
  if (result.ec != std::errc())
    return "?";
  return std::string(buf, result.ptr);
}

void printLayout(const LayoutTerm &term, llvm::raw_ostream &os) {
  switch (term.kind) {
  case LayoutKind::Local:
    os << "local";
    break;
  case LayoutKind::Replicated:
    os << "replicated";
    break;
  case LayoutKind::Sliced:
    os << "sliced";
    break;
  }
  if (!term.sliceDim && term.axes.empty())
    return;
  os << '(';
  bool first = true;
  if (term.sliceDim) {
    os << *term.sliceDim;
    first = false;
  }
  for (const Ident &axis : term.axes) {
    if (!first)
      os << ", ";
    os << axis.name;
    first = false;
  }
  os << ')';
}

void printType(const TypeSpec &type, llvm::raw_ostream &os) {
  os << type.dtype.name;
  if (!type.isTensor)
    return;
  os << '[';
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i != 0)
      os << ", ";
    const DimExpr &dim = type.dims[i];
    for (size_t j = 0; j < dim.factors.size(); ++j) {
      if (j != 0)
        os << '*';
      const DimFactor &factor = dim.factors[j];
      if (factor.isLiteral)
        os << factor.value;
      else
        os << factor.name;
    }
  }
  os << ']';
  for (const LayoutTerm &term : type.layout) {
    os << ' ';
    printLayout(term, os);
  }
  for (const Ident &table : type.segmentedBy)
    os << " segmented(" << table.name << ')';
}

/// Recursive: the parser never builds expressions deeper than 256 levels.
void printExpr(const Expr &expr, llvm::raw_ostream &os) {
  switch (expr.kind) {
  case Expr::Kind::IntLit:
    os << "int " << expr.intValue;
    return;
  case Expr::Kind::FloatLit:
    os << "float " << formatDouble(expr.floatValue);
    return;
  case Expr::Kind::BoolLit:
    os << "bool " << (expr.boolValue ? "true" : "false");
    return;
  case Expr::Kind::Name:
    os << "name " << expr.text;
    return;
  case Expr::Kind::Call:
    os << "call " << expr.text << '(';
    for (size_t i = 0; i < expr.operands.size(); ++i) {
      if (i != 0)
        os << ", ";
      if (i < expr.argKeys.size() && !expr.argKeys[i].name.empty())
        os << expr.argKeys[i].name << '=';
      if (expr.operands[i])
        printExpr(*expr.operands[i], os);
      else
        os << "<null>";
    }
    os << ')';
    return;
  case Expr::Kind::Unary:
    os << '(' << (expr.unaryOp == UnaryOp::Neg ? "-" : "+");
    if (!expr.operands.empty() && expr.operands[0])
      printExpr(*expr.operands[0], os);
    else
      os << "<null>";
    os << ')';
    return;
  case Expr::Kind::Binary:
    os << '(';
    if (expr.operands.size() >= 1 && expr.operands[0])
      printExpr(*expr.operands[0], os);
    else
      os << "<null>";
    os << ' ' << spelling(expr.binaryOp) << ' ';
    if (expr.operands.size() >= 2 && expr.operands[1])
      printExpr(*expr.operands[1], os);
    else
      os << "<null>";
    os << ')';
    return;
  }
}

void printValues(const std::vector<ExprPtr> &values, llvm::raw_ostream &os) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != 0)
      os << ", ";
    if (values[i])
      printExpr(*values[i], os);
    else
      os << "<null>";
  }
}

void printIdents(llvm::ArrayRef<Ident> idents, llvm::raw_ostream &os) {
  for (size_t i = 0; i < idents.size(); ++i) {
    if (i != 0)
      os << ", ";
    os << idents[i].name;
  }
}

void printProgram(const Program &program, llvm::raw_ostream &os) {
  os << "program " << program.name.name << '\n';
  if (program.hasMesh) {
    os << "  mesh [";
    for (size_t i = 0; i < program.mesh.size(); ++i) {
      if (i != 0)
        os << ", ";
      os << program.mesh[i].name.name << ": " << program.mesh[i].size.name;
    }
    os << "]\n";
  }
  for (const Param &param : program.params) {
    os << "  param " << param.name.name << ": ";
    printType(param.type, os);
    os << '\n';
  }
  for (const Stmt &stmt : program.body) {
    os << "  stmt ";
    if (stmt.kind == Stmt::Kind::Require) {
      os << "require ";
      printValues(stmt.values, os);
      os << ", \"" << stmt.message.name << "\"\n";
      continue;
    }
    if (stmt.kind == Stmt::Kind::Return)
      os << "return ";
    else if (stmt.declType) {
      os << stmt.name.name << " : ";
      printType(*stmt.declType, os);
      os << " = ";
    } else if (stmt.moreNames.empty())
      os << stmt.name.name << " = ";
    else {
      os << "(" << stmt.name.name;
      for (const Ident &n : stmt.moreNames)
        os << ", " << n.name;
      os << ") = ";
    }
    printValues(stmt.values, os);
    os << '\n';
  }
}

void printSchedule(const Schedule &schedule, llvm::raw_ostream &os) {
  os << "schedule " << schedule.name.name << " for " << schedule.program.name
     << '\n';
  for (const Directive &directive : schedule.directives) {
    if (directive.kind == Directive::Kind::Apply) {
      os << "  apply " << directive.transform.name << '\n';
      continue;
    }
    os << "  directive ";
    if (!directive.results.empty()) {
      os << '(';
      printIdents(directive.results, os);
      os << ") = ";
    }
    os << directive.transform.name << '(';
    printIdents(directive.args, os);
    if (directive.file)
      os << (directive.args.empty() ? "" : ", ") << '"' << directive.file->name
         << '"';
    os << ')';
    if (directive.chunks)
      os << " chunks " << *directive.chunks;
    os << '\n';
  }
}

} // namespace

void printTypeSpec(const TypeSpec &type, llvm::raw_ostream &os) {
  printType(type, os);
}

void printModule(const Module &module, llvm::raw_ostream &os) {
  for (const Import &import : module.imports)
    os << "import " << import.dotted() << '\n';
  for (const Program &program : module.programs)
    printProgram(program, os);
  for (const Schedule &schedule : module.schedules)
    printSchedule(schedule, os);
}

} // namespace coconet::ast
