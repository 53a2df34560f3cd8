//===- Types.h - element types, shapes, layouts and meshes ------*- C++ -*-===//
//
// The type of every IR value is a TensorType: an element type, a symbolic
// shape and a layout. A scalar is a tensor of rank 0. Shapes are *global*:
// a tensor sliced along dimension d over a mesh axis of size P has global
// size n along d and each rank holds the block of n/P elements at offset
// coordinate * n/P.
//
// A layout says, for each axis of the program's mesh, how the value relates
// across the ranks of that axis:
//   replicated  every rank of the axis holds the same full tensor;
//   local       every rank holds a full-size tensor with its own values;
//   sliced(d)   rank i of the axis holds the i-th block along dimension d.
// A program without a mesh has one axis, `world`.
//
// A 1-D tensor may also be *segmented* by a segment table of the program
// (`segmented(layers)`): its N elements are T consecutive segments whose
// lengths the table gives at run time (a model's parameters in one flat
// buffer). Segmentation is of the global index: slicing cuts the flat
// buffer regardless of segment boundaries.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_IR_TYPES_H
#define COCONET_IR_TYPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace coconet::ir {

/// Element types. Arithmetic on f16 and bf16 is done in f32 and rounded to
/// the element type (round to nearest even) whenever a value of that type is
/// produced.
/// The element types: the runtime's table (coconet/dtypes.def), so that
/// ir::DType and rt::DType have the same values.
enum class DType {
#define DTYPE(Name, Printed, Bytes, Kind) Name,
#include "coconet/dtypes.def"
};

llvm::StringRef dtypeName(DType dtype);
std::optional<DType> parseDType(llvm::StringRef name);
/// Every element type's name, in the table's order, joined by ", ".
std::string allDTypeNames();
bool isFloat(DType dtype);
bool isInteger(DType dtype);
/// Bytes of one element in memory.
unsigned dtypeSize(DType dtype);
/// Rounds `value` to the nearest value of a float `dtype` (to nearest even,
/// once); the identity for f64 and the integer types. The one rounding of
/// the simulator, the scalar evaluator and code generation's constants.
double roundTo(DType dtype, double value);

/// The values of the size names of a program, e.g. {N: 1024}.
using DimEnv = std::map<std::string, int64_t, std::less<>>;

/// A symbolic size: a positive coefficient times a product of size names,
/// kept sorted so that equal sizes compare equal (`4*H` == `H*4`).
class Dim {
public:
  Dim() = default;
  static Dim constant(int64_t value);
  static Dim symbol(llvm::StringRef name);

  int64_t coefficient() const { return coeff; }
  llvm::ArrayRef<std::string> symbols() const { return syms; }
  bool isConstant() const { return syms.empty(); }

  Dim operator*(const Dim &other) const;
  /// Divides by a constant when the coefficient allows it.
  std::optional<Dim> divideBy(int64_t divisor) const;
  /// Divides by a size when this one is a multiple of it (its coefficient
  /// divides and its names are among these).
  std::optional<Dim> divideBy(const Dim &divisor) const;
  bool operator==(const Dim &other) const {
    return coeff == other.coeff && syms == other.syms;
  }
  bool operator!=(const Dim &other) const { return !(*this == other); }

  /// The value under `env`; nullopt if a name is unbound or it overflows.
  std::optional<int64_t> evaluate(const DimEnv &env) const;
  /// "4*H", "N", "1024".
  std::string str() const;

private:
  int64_t coeff = 1;
  llvm::SmallVector<std::string, 2> syms;
};

using Shape = llvm::SmallVector<Dim, 4>;

/// "[N, 4*H]", or "[]" for a scalar.
std::string shapeStr(llvm::ArrayRef<Dim> shape);

/// How a value relates across the ranks of one mesh axis.
enum class AxisState : uint8_t { Replicated, Local, Sliced };

struct AxisLayout {
  AxisState state = AxisState::Replicated;
  int dim = 0; ///< The sliced dimension, for Sliced.
  bool operator==(const AxisLayout &o) const {
    return state == o.state && (state != AxisState::Sliced || dim == o.dim);
  }
  bool operator!=(const AxisLayout &o) const { return !(*this == o); }
};

/// A process mesh: named axes whose sizes are size names bound at run time.
struct Mesh {
  struct Axis {
    std::string name;
    std::string size; ///< The size name, e.g. "T"; "P" for the world axis.
  };
  llvm::SmallVector<Axis, 2> axes;
  bool isImplicit = true; ///< No `mesh` declared: one axis called world.

  static Mesh world();
  std::optional<unsigned> findAxis(llvm::StringRef name) const;
  unsigned size() const { return axes.size(); }
};

/// One AxisLayout per mesh axis.
class Layout {
public:
  Layout() = default;
  explicit Layout(unsigned numAxes, AxisLayout all = {}) : axes(numAxes, all) {}
  static Layout replicated(unsigned numAxes) { return Layout(numAxes); }
  static Layout local(unsigned numAxes) {
    return Layout(numAxes, {AxisState::Local, 0});
  }

  unsigned size() const { return axes.size(); }
  const AxisLayout &operator[](unsigned i) const { return axes[i]; }
  AxisLayout &operator[](unsigned i) { return axes[i]; }
  llvm::ArrayRef<AxisLayout> getAxes() const { return axes; }

  bool isReplicated() const;
  bool isLocalAnywhere() const;
  bool isSlicedAnywhere() const;
  /// Is dimension `dim` sliced over some axis?
  bool slicesDim(int dim) const;
  /// The mesh axes that slice dimension `dim`, in mesh order.
  llvm::SmallVector<unsigned, 2> slicingAxes(unsigned dim) const;

  bool operator==(const Layout &o) const { return axes == o.axes; }
  bool operator!=(const Layout &o) const { return !(*this == o); }

  /// Source syntax: "replicated", "sliced(0)", "local(pp) sliced(0, tp)".
  std::string str(const Mesh &mesh) const;

private:
  llvm::SmallVector<AxisLayout, 2> axes;
};

/// The type of an IR value.
struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  Layout layout;
  /// The segment table of a segmented 1-D tensor; empty if none.
  std::string segments;

  bool isScalar() const { return shape.empty(); }
  unsigned rank() const { return shape.size(); }
  bool isSegmented() const { return !segments.empty(); }
  bool operator==(const TensorType &o) const {
    return dtype == o.dtype && shape == o.shape && layout == o.layout &&
           segments == o.segments;
  }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
  /// "f16[N] sliced(0)", "f32[N] replicated segmented(layers)" or "f32".
  std::string str(const Mesh &mesh) const;
};

/// Reduction operators of collectives: the runtime's table
/// (coconet/reduce_ops.def), so that ir::ReduceOp and rt::ReduceOp have the
/// same values.
enum class ReduceOp {
#define REDUCE_OP(Name, Printed) Name,
#include "coconet/reduce_ops.def"
};
llvm::StringRef reduceOpName(ReduceOp op);
std::optional<ReduceOp> parseReduceOp(llvm::StringRef name);

/// How a collective moves its data (`algorithm(s, NAME)` in a schedule).
/// Every algorithm combines members in ascending order, so none changes a
/// value. Auto: the target's default (the communication library's).
/// Synthesized: the algorithm in a file the schedule names
/// (ir/AlgorithmTable.h); never parsed from a name.
enum class CollectiveAlgorithm {
  Auto,
  Library,
#define TEAM_ALGORITHM(Name, Printed) Name,
#include "ir/TeamAlgorithms.def"
  Synthesized
};
llvm::StringRef collectiveAlgorithmName(CollectiveAlgorithm algorithm);
/// One of the team's algorithms (coconet/team_algorithms.def): it runs on
/// the members' shared or symmetric memory.
bool isTeamAlgorithm(CollectiveAlgorithm algorithm);
std::optional<CollectiveAlgorithm>
parseCollectiveAlgorithm(llvm::StringRef name);

/// Kinds of Reduction stages. SumSquares (the sum of x*x, no square root)
/// is not in the language: schedules create it for the per-rank partial
/// values of a norm.
enum class ReductionKind { Sum, Max, Min, Norm, SumSquares };
llvm::StringRef reductionKindName(ReductionKind kind);

} // namespace coconet::ir

#endif // COCONET_IR_TYPES_H
