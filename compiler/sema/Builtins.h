//===- Builtins.h - the signatures of the built-in operations ---*- C++ -*-===//
//
// What a call of a built-in operation is: its family (which decides how
// CallChecker.cpp checks it) and its signature, from the tables of
// elementwise operations (ir/ScalarOps.def) and of the other builtins
// (sema/Builtins.def); and the names they reserve.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SEMA_BUILTINS_H
#define COCONET_SEMA_BUILTINS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace coconet::sema {

/// A signature: parameter names, how many are required.
struct Signature {
  llvm::SmallVector<llvm::StringRef, 5> params;
  unsigned required;
};

/// The operation families, which decide how a call is checked.
enum class Family {
  Cast,
  FloatMath,
  NumMath,
  Pow,
  MinMax, // two arguments: elementwise; one: reduction
  Select,
  Dropout,
  Reduction,
  MatMul,
  Transpose,
  Expand,
  LayerNorm,
  RmsNorm,
  Reshape,
  TopK,
  CumSum,
  Gather,
  Scatter,
  GroupedMatMul,
  AllToAllV,
  Collective,
  Update,
};

struct Builtin {
  Family family;
  Signature sig;
};

/// The builtin `name` called with `numArgs` arguments; `dimKeyword` says
/// whether one of them is `dim=` or `by=`, which make max/min reductions.
std::optional<Builtin> lookupBuiltin(llvm::StringRef name, size_t numArgs,
                                     bool dimKeyword);
/// "2 arguments", "1 to 2 arguments".
std::string argCount(const Signature &sig);

/// Names of the built-in operations (they cannot name values).
bool isBuiltinName(llvm::StringRef name);
/// All built-in names, for "did you mean" suggestions.
llvm::ArrayRef<llvm::StringRef> builtinNames();

} // namespace coconet::sema

#endif // COCONET_SEMA_BUILTINS_H
