//===- Builtins.cpp - the signatures of the built-in operations -----------===//

#include "sema/Builtins.h"

#include "ir/ScalarExpr.h"

#include "llvm/ADT/STLExtras.h"

#include <vector>

namespace coconet::sema {

using ir::DType;
using ir::ScalarOp;

/// The family that checks calls of an elementwise operation.
static Family familyOf(ir::ScalarOpClass c) {
  switch (c) {
  case ir::ScalarOpClass::FloatMath:
    return Family::FloatMath;
  case ir::ScalarOpClass::NumMath:
    return Family::NumMath;
  case ir::ScalarOpClass::Pow:
    return Family::Pow;
  case ir::ScalarOpClass::MinMax:
    return Family::MinMax;
  case ir::ScalarOpClass::Select:
    return Family::Select;
  case ir::ScalarOpClass::Dropout:
    return Family::Dropout;
  case ir::ScalarOpClass::Leaf:
  case ir::ScalarOpClass::Cast:
  case ir::ScalarOpClass::Neg:
  case ir::ScalarOpClass::Arith:
  case ir::ScalarOpClass::Compare:
    break;
  }
  return Family::Cast; // not callable: lookupCallableScalarOp never gives it
}

/// The parameters of a call of an elementwise operation.
static Signature scalarSignature(ir::ScalarOp op) {
  switch (ir::scalarOpClass(op)) {
  case ir::ScalarOpClass::Select:
    return {{"cond", "x", "y"}, 3};
  case ir::ScalarOpClass::Dropout:
    return {{"x", "p", "seed"}, 3};
  case ir::ScalarOpClass::Leaf:
  case ir::ScalarOpClass::Cast:
  case ir::ScalarOpClass::Neg:
  case ir::ScalarOpClass::Arith:
  case ir::ScalarOpClass::Compare:
  case ir::ScalarOpClass::FloatMath:
  case ir::ScalarOpClass::NumMath:
  case ir::ScalarOpClass::Pow:
  case ir::ScalarOpClass::MinMax:
    break;
  }
  if (ir::scalarOpArity(op) == 1)
    return {{"x"}, 1};
  return {{"x", "y"}, 2};
}

std::optional<Builtin> lookupBuiltin(llvm::StringRef name, size_t numArgs,
                                     bool dimKeyword) {
  using F = Family;
  if (ir::parseDType(name) && name != "bool")
    return Builtin{F::Cast, {{"x"}, 1}};
  if (auto op = ir::lookupCallableScalarOp(name)) {
    if (ir::scalarOpClass(*op) == ir::ScalarOpClass::MinMax &&
        (numArgs < 2 || dimKeyword))
      return Builtin{F::Reduction, {{"x", "dim", "by"}, 1}};
    return Builtin{familyOf(ir::scalarOpClass(*op)), scalarSignature(*op)};
  }
  if (name == "sendrecv" && numArgs == 2)
    return Builtin{F::Collective, {{"x", "offset"}, 2}};
#define BUILTIN(Name, Fam, Required, ...)                                      \
  if (name == Name)                                                            \
    return Builtin{F::Fam, {{__VA_ARGS__}, Required}};
#include "sema/Builtins.def"
  return std::nullopt;
}

std::string argCount(const Signature &sig) {
  auto plural = [](unsigned n) {
    return std::to_string(n) + (n == 1 ? " argument" : " arguments");
  };
  if (sig.required == sig.params.size())
    return plural(sig.required);
  return std::to_string(sig.required) + " to " + plural(sig.params.size());
}

namespace {
/// Casts (element type names), the callable elementwise operations
/// (ir/ScalarOps.def) and the other builtins (sema/Builtins.def).
std::vector<llvm::StringRef> makeBuiltinNames() {
  std::vector<llvm::StringRef> names;
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I32,
                  DType::I64, DType::U64})
    names.push_back(ir::dtypeName(d));
  static const ScalarOp kOps[] = {
#define SCALAR_OP(Name, Printed, Arity, Class) ScalarOp::Name,
#include "ir/ScalarOps.def"
  };
  for (ScalarOp op : kOps)
    if (ir::lookupCallableScalarOp(ir::scalarOpName(op)))
      names.push_back(ir::scalarOpName(op));
#define BUILTIN(Name, Family, Required, ...) names.push_back(Name);
#include "sema/Builtins.def"
  return names;
}
} // namespace

bool isBuiltinName(llvm::StringRef name) {
  return llvm::is_contained(builtinNames(), name);
}

llvm::ArrayRef<llvm::StringRef> builtinNames() {
  static const std::vector<llvm::StringRef> names = makeBuiltinNames();
  return names;
}

} // namespace coconet::sema
