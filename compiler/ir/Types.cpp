//===- Types.cpp - element types, shapes, layouts and meshes --------------===//
//
// Construction, comparison and printing of the IR's types.
//
//===----------------------------------------------------------------------===//

#include "ir/Types.h"

#include "coconet/numeric.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>

namespace coconet::ir {

namespace {
enum class DTypeKind { Float, Integer, Bool };
} // namespace

llvm::StringRef dtypeName(DType dtype) {
  switch (dtype) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  case DType::Name:                                                            \
    return Printed;
#include "coconet/dtypes.def"
  }
  return "?";
}

std::string allDTypeNames() {
  std::string names;
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  names += names.empty() ? Printed : ", " Printed;
#include "coconet/dtypes.def"
  return names;
}

std::optional<DType> parseDType(llvm::StringRef name) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  if (name == Printed)                                                         \
    return DType::Name;
#include "coconet/dtypes.def"
  return std::nullopt;
}

static DTypeKind kindOf(DType dtype) {
  switch (dtype) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  case DType::Name:                                                            \
    return DTypeKind::Kind;
#include "coconet/dtypes.def"
  }
  return DTypeKind::Bool;
}

bool isFloat(DType dtype) { return kindOf(dtype) == DTypeKind::Float; }

bool isInteger(DType dtype) { return kindOf(dtype) == DTypeKind::Integer; }

unsigned dtypeSize(DType dtype) {
  switch (dtype) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  case DType::Name:                                                            \
    return Bytes;
#include "coconet/dtypes.def"
  }
  return 1;
}

double roundTo(DType dtype, double value) {
  switch (dtype) {
  case DType::F16:
    return rt::roundToHalf(value);
  case DType::BF16:
    return rt::roundToBFloat16(value);
  case DType::F32:
    return static_cast<float>(value);
  case DType::F64:
  case DType::I32:
  case DType::I64:
  case DType::U64:
  case DType::Bool:
    break;
  }
  return value;
}

Dim Dim::constant(int64_t value) {
  Dim d;
  d.coeff = value;
  return d;
}

Dim Dim::symbol(llvm::StringRef name) {
  Dim d;
  d.syms.push_back(name.str());
  return d;
}

Dim Dim::operator*(const Dim &other) const {
  Dim d;
  d.coeff = coeff * other.coeff;
  d.syms = syms;
  d.syms.append(other.syms.begin(), other.syms.end());
  std::sort(d.syms.begin(), d.syms.end());
  return d;
}

std::optional<Dim> Dim::divideBy(int64_t divisor) const {
  if (divisor <= 0 || coeff % divisor != 0)
    return std::nullopt;
  Dim d = *this;
  d.coeff /= divisor;
  return d;
}

std::optional<Dim> Dim::divideBy(const Dim &divisor) const {
  std::optional<Dim> d = divideBy(divisor.coeff);
  if (!d)
    return std::nullopt;
  for (const std::string &s : divisor.syms) {
    auto it = llvm::find(d->syms, s);
    if (it == d->syms.end())
      return std::nullopt;
    d->syms.erase(it);
  }
  return d;
}

std::optional<int64_t> Dim::evaluate(const DimEnv &env) const {
  int64_t value = coeff;
  for (const std::string &s : syms) {
    auto it = env.find(s);
    if (it == env.end())
      return std::nullopt;
    if (__builtin_mul_overflow(value, it->second, &value))
      return std::nullopt;
  }
  return value;
}

std::string Dim::str() const {
  std::string out;
  if (coeff != 1 || syms.empty())
    out = std::to_string(coeff);
  for (const std::string &s : syms) {
    if (!out.empty())
      out += '*';
    out += s;
  }
  return out;
}

std::string shapeStr(llvm::ArrayRef<Dim> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += shape[i].str();
  }
  return out + "]";
}

Mesh Mesh::world() {
  Mesh m;
  m.axes.push_back({"world", "P"});
  m.isImplicit = true;
  return m;
}

std::optional<unsigned> Mesh::findAxis(llvm::StringRef name) const {
  for (unsigned i = 0; i < axes.size(); ++i)
    if (axes[i].name == name)
      return i;
  return std::nullopt;
}

bool Layout::isReplicated() const {
  return llvm::all_of(axes, [](const AxisLayout &a) {
    return a.state == AxisState::Replicated;
  });
}

bool Layout::isLocalAnywhere() const {
  return llvm::any_of(
      axes, [](const AxisLayout &a) { return a.state == AxisState::Local; });
}

bool Layout::isSlicedAnywhere() const {
  return llvm::any_of(
      axes, [](const AxisLayout &a) { return a.state == AxisState::Sliced; });
}

bool Layout::slicesDim(int dim) const {
  return llvm::any_of(axes, [&](const AxisLayout &a) {
    return a.state == AxisState::Sliced && a.dim == dim;
  });
}

llvm::SmallVector<unsigned, 2> Layout::slicingAxes(unsigned dim) const {
  llvm::SmallVector<unsigned, 2> out;
  for (unsigned a = 0; a < axes.size(); ++a)
    if (axes[a].state == AxisState::Sliced &&
        axes[a].dim == static_cast<int>(dim))
      out.push_back(a);
  return out;
}

static std::string axisTerm(const AxisLayout &a, llvm::StringRef axisNames) {
  switch (a.state) {
  case AxisState::Replicated:
    return axisNames.empty() ? "replicated"
                             : "replicated(" + axisNames.str() + ")";
  case AxisState::Local:
    return axisNames.empty() ? "local" : "local(" + axisNames.str() + ")";
  case AxisState::Sliced:
    return axisNames.empty() ? "sliced(" + std::to_string(a.dim) + ")"
                             : "sliced(" + std::to_string(a.dim) + ", " +
                                   axisNames.str() + ")";
  }
  return "?";
}

std::string Layout::str(const Mesh &mesh) const {
  if (axes.empty())
    return "replicated";
  // One term when every axis agrees; otherwise one term per axis, in mesh
  // order, so the text reads back as the same layout.
  if (llvm::all_of(axes, [&](const AxisLayout &a) { return a == axes[0]; }))
    return axisTerm(axes[0], "");
  std::string out;
  for (unsigned i = 0; i < axes.size(); ++i) {
    if (i)
      out += ' ';
    llvm::StringRef name =
        i < mesh.axes.size() ? llvm::StringRef(mesh.axes[i].name) : "?";
    out += axisTerm(axes[i], name);
  }
  return out;
}

std::string TensorType::str(const Mesh &mesh) const {
  std::string out = dtypeName(dtype).str();
  if (isScalar())
    return layout.isReplicated() ? out : out + " " + layout.str(mesh);
  out += shapeStr(shape) + " " + layout.str(mesh);
  if (isSegmented())
    out += " segmented(" + segments + ")";
  return out;
}

llvm::StringRef reduceOpName(ReduceOp op) {
  switch (op) {
#define REDUCE_OP(Name, Printed)                                               \
  case ReduceOp::Name:                                                         \
    return Printed;
#include "coconet/reduce_ops.def"
  }
  return "?";
}

llvm::StringRef reductionKindName(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return "sum";
  case ReductionKind::Max:
    return "max";
  case ReductionKind::Min:
    return "min";
  case ReductionKind::Norm:
    return "norm";
  case ReductionKind::SumSquares:
    return "sumsq";
  }
  return "?";
}

std::optional<ReduceOp> parseReduceOp(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ReduceOp>>(name)
#define REDUCE_OP(Name, Printed) .Case(Printed, ReduceOp::Name)
#include "coconet/reduce_ops.def"
      .Default(std::nullopt);
}

llvm::StringRef collectiveAlgorithmName(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
  case CollectiveAlgorithm::Auto:
    return "auto";
  case CollectiveAlgorithm::Library:
    return "library";
#define TEAM_ALGORITHM(Name, Printed)                                          \
  case CollectiveAlgorithm::Name:                                              \
    return Printed;
#include "ir/TeamAlgorithms.def"
  case CollectiveAlgorithm::Synthesized:
    return "synthesized";
  }
  return "?";
}

std::optional<CollectiveAlgorithm>
parseCollectiveAlgorithm(llvm::StringRef name) {
  for (CollectiveAlgorithm a : {
           CollectiveAlgorithm::Auto,
           CollectiveAlgorithm::Library,
#define TEAM_ALGORITHM(Name, Printed) CollectiveAlgorithm::Name,
#include "ir/TeamAlgorithms.def"
       })
    if (collectiveAlgorithmName(a) == name)
      return a;
  return std::nullopt;
}

bool isTeamAlgorithm(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
#define TEAM_ALGORITHM(Name, Printed) case CollectiveAlgorithm::Name:
#include "ir/TeamAlgorithms.def"
    return true;
  case CollectiveAlgorithm::Auto:
  case CollectiveAlgorithm::Library:
  case CollectiveAlgorithm::Synthesized:
    return false;
  }
  return false;
}

} // namespace coconet::ir
