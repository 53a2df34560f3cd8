//===- ProgramChecker.h - checking one program (internal) -------*- C++ -*-===//
//
// Internal to sema/: the state of checking one program. Sema.cpp checks
// parameters and statements; ExprChecker.cpp checks expressions and calls.
// An expression checks to a Value: a literal not yet given a type, an
// existing stage, or an elementwise body under construction whose leaves
// are stages. Bodies become Elementwise stages when a statement ends or
// when a non-elementwise operation needs them as an operand.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SEMA_PROGRAMCHECKER_H
#define COCONET_SEMA_PROGRAMCHECKER_H

#include "ast/Ast.h"
#include "diag/Diagnostic.h"
#include "ir/Program.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <memory>
#include <optional>
#include <vector>

namespace coconet::sema {

/// A node of an elementwise body under construction (leaves are stages).
struct BodyNode {
  ir::ScalarOp op = ir::ScalarOp::Const;
  ir::DType dtype = ir::DType::F32;
  llvm::SmallVector<const BodyNode *, 3> args;
  ir::Stage *stage = nullptr; ///< Operand leaves.
  double constValue = 0;
  int64_t constInt = 0;
  ir::Shape shape; ///< The node's global shape (for dropout's check).
  llvm::SMRange range;
};

/// The result of checking an expression.
struct Value {
  enum class Kind { Error, Literal, Stage, Body };
  enum class LitKind { Int, Float, Bool };
  Kind kind = Kind::Error;
  LitKind lit = LitKind::Int;
  __int128 litInt = 0;
  double litFloat = 0;
  bool litBool = false;
  ir::Stage *stage = nullptr;
  bool fresh = false; ///< Stage created by the statement being checked.
  const BodyNode *body = nullptr;
  ir::TensorType type; ///< For Stage and Body.
  llvm::SMRange range;

  bool isError() const { return kind == Kind::Error; }
  bool isLiteral() const { return kind == Kind::Literal; }
  static Value error() { return Value(); }
};

class ProgramChecker;

/// Gives a literal the element type `dtype` (a constant body), or reports
/// that it does not fit.
Value typeLiteral(ProgramChecker &c, const Value &lit, ir::DType dtype);
/// Builds an elementwise node over already-typed operands, checking that
/// their shapes broadcast and their layouts join.
Value combine(ProgramChecker &c, ir::ScalarOp op, ir::DType dtype,
              llvm::ArrayRef<Value> args, llvm::SMRange range,
              llvm::StringRef opName);
/// `expand(x, table)`: x's value for each element's segment, a body leaf
/// of the table's length, segmented by it (x is checked by the caller).
Value expandLeaf(ProgramChecker &c, ir::Stage *x,
                 const ir::SegmentTableDecl &table, llvm::SMRange range);
/// The type a conversion hint suggests between two mismatched types.
ir::DType preferredType(ir::DType a, ir::DType b);
/// Typed operands must share an element type, which literals then take.
/// Returns nullopt after an error; an empty inner optional if all operands
/// are literals.
std::optional<std::optional<ir::DType>>
unifyDTypes(ProgramChecker &c, llvm::MutableArrayRef<Value> args,
            llvm::SMRange range, llvm::StringRef opName);

class ProgramChecker {
public:
  ProgramChecker(const ast::Program &ast, DiagnosticEngine &diags,
                 ir::Program &program, const llvm::StringSet<> &programNames)
      : ast(ast), diags(diags), program(program), programNames(programNames) {}

  /// Checks the whole program; false if an error was reported.
  bool run();

  // Expression checking (ExprChecker.cpp).
  Value checkExpr(const ast::Expr &expr);
  /// Turns a value into a stage named `name` (a body becomes an elementwise
  /// stage; a literal a scalar constant stage; an existing stage is copied
  /// only if `copyExisting`).
  ir::Stage *materialize(const Value &value, llvm::StringRef name,
                         bool copyExisting);
  /// The name for the next stage split out of the current statement.
  std::string nestedName();
  /// The body `root` as the program's scalar expression; its Operand
  /// leaves' stages are appended to `operands` in order of first read and
  /// numbered by their place there.
  const ir::ScalarExpr *lowerBody(const BodyNode *root,
                                  llvm::SmallVectorImpl<ir::Stage *> &operands);

  const ast::Program &ast;
  DiagnosticEngine &diags;
  ir::Program &program;
  /// Every program of the compilation (calls of them get a clear error).
  const llvm::StringSet<> &programNames;
  llvm::StringMap<ir::Stage *> names;
  llvm::StringMap<llvm::SMRange> nameRanges;
  llvm::StringSet<> poisoned;
  std::string statementName;
  /// Set by `(a, b) = topk(...)` or `alltoallv(...)` for the call it
  /// names, which consumes it and leaves its second result's stage in
  /// `secondResult`.
  bool tupleCall = false;
  ir::Stage *secondResult = nullptr;
  unsigned nestedCount = 0;
  std::vector<std::unique_ptr<BodyNode>> nodes;

private:
  Value checkName(const ast::Expr &expr);
  Value checkLiteral(const ast::Expr &expr);
  Value checkUnary(const ast::Expr &expr);
  Value checkBinary(const ast::Expr &expr);
  Value checkCall(const ast::Expr &expr);

  friend struct CallChecker;
  bool checkParams();
  /// A `segments[T]` parameter: a table, not a stage.
  bool checkSegmentTable(const ast::Param &param);
  /// Resolves `segmented(table)` of tensor parameters; gives each table the
  /// length of its tensors.
  bool checkSegmented(llvm::ArrayRef<std::pair<ir::Stage *, ast::Ident>> uses);
  bool checkStatements();
  /// `require(cond, "message");` (RequireChecker.cpp).
  bool checkRequire(const ast::Stmt &stmt);
  bool checkUpdate(const ast::Stmt &stmt, const ast::Expr &call);
  /// `(values, indices) = topk(...)`.
  bool checkTupleAssign(const ast::Stmt &stmt);
  /// `name: type = value;`, a tensor of the declared type whose every
  /// element is a literal or a replicated scalar.
  bool checkConstant(const ast::Stmt &stmt);
  /// The type a declaration spells (dtype, dimensions, layout) into
  /// `type`, as far as it is right; false after an error. Its size names
  /// become the program's (a constant may name one no parameter has, as a
  /// capacity).
  bool declaredType(const ast::Param &decl, ir::TensorType &type);
};

} // namespace coconet::sema

#endif // COCONET_SEMA_PROGRAMCHECKER_H
