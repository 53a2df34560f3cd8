//===- Ast.h - the syntax tree of a .coco file ------------------*- C++ -*-===//
//
// The abstract syntax tree built by parse/AstBuilder from ANTLR's parse tree.
// It is a faithful, untyped picture of the source: every node keeps its
// source range so sema can point at it. Names of operations are not resolved
// here; sema does that.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_AST_AST_H
#define COCONET_AST_AST_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::ast {

/// A name with the place it was written.
struct Ident {
  std::string name;
  llvm::SMRange range;
};

/// One factor of a dimension: an integer literal or a size name.
struct DimFactor {
  bool isLiteral = false;
  int64_t value = 0; ///< The literal, when isLiteral.
  std::string name;  ///< The size name, otherwise.
  llvm::SMRange range;
};

/// A dimension: a product of factors, e.g. `4*H`.
struct DimExpr {
  llvm::SmallVector<DimFactor, 2> factors;
  llvm::SMRange range;
};

enum class LayoutKind { Local, Replicated, Sliced };

/// One term of a layout, e.g. `sliced(0, tp)` or `replicated`.
struct LayoutTerm {
  LayoutKind kind = LayoutKind::Replicated;
  std::optional<int64_t> sliceDim;  ///< Only for sliced; absent means 0.
  llvm::SmallVector<Ident, 2> axes; ///< Empty: every axis not named elsewhere.
  llvm::SMRange range;
};

/// `f32`, or `f16[N, 4*H] sliced(0)`, or `f32[N] segmented(layers)`.
struct TypeSpec {
  Ident dtype;
  bool isTensor = false; ///< False for a scalar (no brackets).
  llvm::SmallVector<DimExpr, 4> dims;
  llvm::SmallVector<LayoutTerm, 2> layout;
  /// The tables of `segmented(table)` terms, in order (sema allows one).
  llvm::SmallVector<Ident, 1> segmentedBy;
  llvm::SMRange range;
};

struct Param {
  Ident name;
  TypeSpec type;
  llvm::SMRange range;
};

/// `pp: P` in `mesh [pp: P, tp: T]`.
struct MeshAxis {
  Ident name;
  Ident size;
};

enum class UnaryOp { Neg, Plus };
enum class BinaryOp { Add, Sub, Mul, Div, Lt, Le, Gt, Ge, Eq, Ne };

/// The spelling of an operator, e.g. "+" or "<=".
llvm::StringRef spelling(BinaryOp op);

/// An expression. One node type with a kind keeps the tree easy to walk
/// iteratively; the fields used by each kind are listed on the kind.
struct Expr {
  enum class Kind {
    IntLit,   ///< intValue (text keeps the spelling)
    FloatLit, ///< floatValue
    BoolLit,  ///< boolValue
    Name,     ///< text
    Call,     ///< text = callee, calleeRange, operands = arguments, argKeys
    Unary,    ///< unaryOp, operands[0]
    Binary,   ///< binaryOp, operands[0..1]
  };

  Kind kind = Kind::IntLit;
  llvm::SMRange range;
  std::string text;
  uint64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  UnaryOp unaryOp = UnaryOp::Neg;
  BinaryOp binaryOp = BinaryOp::Add;
  llvm::SMRange calleeRange;
  std::vector<std::unique_ptr<Expr>> operands;
  /// For calls, one entry per operand: the keyword, empty when positional.
  std::vector<Ident> argKeys;
};

using ExprPtr = std::unique_ptr<Expr>;

/// `name = expr;`, `return a, b;` or `require(cond, "message");`.
struct Stmt {
  enum class Kind { Assign, Return, Require };
  Kind kind = Kind::Assign;
  Ident name; ///< Assign only.
  /// Assign of several names, `(values, indices) = topk(...)`: the names
  /// after the first (`name`).
  std::vector<Ident> moreNames;
  /// A constant, `slots: i32[P, E*C] sliced(0) = -1;`: its declared type.
  std::unique_ptr<TypeSpec> declType;
  /// One for Assign and Require (the condition); the results for Return.
  std::vector<ExprPtr> values;
  /// Require: the message between the quotes, and the literal's range.
  Ident message;
  llvm::SMRange range;
};

struct Program {
  Ident name;
  bool hasMesh = false;
  llvm::SmallVector<MeshAxis, 2> mesh;
  llvm::SMRange meshRange;
  std::vector<Param> params;
  std::vector<Stmt> body;
  llvm::SMRange range;
};

/// One line of a schedule: `split(gs);`, `(rs, ag) = split(gs);`,
/// `overlap(y, rs) chunks 8;` or `apply other;`.
struct Directive {
  enum class Kind { Transform, Apply };
  Kind kind = Kind::Transform;
  Ident transform; ///< The transformation, or the schedule for Apply.
  llvm::SmallVector<Ident, 2> results;
  llvm::SmallVector<Ident, 4> args;
  /// A string after the stages (`algorithm(s, "ndv2.alg")`): its text
  /// between the quotes and the range of the whole literal.
  std::optional<Ident> file;
  std::optional<int64_t> chunks;
  llvm::SMRange chunksRange;
  llvm::SMRange range;
};

struct Schedule {
  Ident name;
  Ident program;
  std::vector<Directive> directives;
  llvm::SMRange range;
};

/// `import optim.adam;`
struct Import {
  llvm::SmallVector<Ident, 2> path;
  llvm::SMRange range;
  /// "optim.adam"
  std::string dotted() const;
};

/// One source file.
struct Module {
  unsigned bufferId = 0;
  std::vector<Import> imports;
  std::vector<Program> programs;
  std::vector<Schedule> schedules;
};

/// Prints the tree in an indented, stable form (for --emit=ast and tests).
void printModule(const Module &module, llvm::raw_ostream &os);
/// A type as the source writes it: `f32[N] sliced(0) segmented(layers)`.
void printTypeSpec(const TypeSpec &type, llvm::raw_ostream &os);

} // namespace coconet::ast

#endif // COCONET_AST_AST_H
