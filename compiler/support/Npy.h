//===- Npy.h - reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The interchange format of the simulator (and, later, of generated
// drivers): NumPy's .npy format, version 1.0 (2.0/3.0 headers are read
// too), C order only, little-endian.
//
// Element types: '<f2' (f16), '<f4' (f32), '<f8' (f64), '<i4', '<i8',
// '<u8', '|b1'. bfloat16 has no NumPy type: it is written as '<f4' holding
// the exact widened values, and reading '<f4' into a bf16 tensor rounds.
//
// These wrap the runtime's implementation (runtime/include/coconet/npy.h),
// which generated drivers use too; its messages become llvm::Errors.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SUPPORT_NPY_H
#define COCONET_SUPPORT_NPY_H

#include "coconet/values.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace coconet::support {

/// The descr strings above.
enum class NpyType { F16, F32, F64, I32, I64, U64, Bool };

/// "<f2", "<f4", ...
llvm::StringRef npyDescr(NpyType type);
unsigned npyElementSize(NpyType type);

/// A whole .npy file: type, shape and the raw little-endian element bytes.
struct NpyArray {
  NpyType type = NpyType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numElements() const;
  /// Element i converted to double (exact for every type but 64-bit ints
  /// beyond 2^53).
  double getAsDouble(int64_t i) const;
  /// Element i of an integer or bool array, exactly.
  int64_t getAsInt(int64_t i) const;
};

/// Parses a .npy file's bytes. Errors name what is wrong ("not a .npy
/// file", "fortran_order is not supported", "unsupported dtype '>f4'",
/// "the header says 12 elements but the file holds 8").
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes);
llvm::Expected<NpyArray> readNpyFile(llvm::StringRef path);

/// Whether a file of `type` can feed a parameter of `dtype` at all, and
/// element i as a value of `dtype` when it is exact in it (the rule of
/// coconet/values.h, which generated drivers apply too): an error naming
/// the element otherwise. `dtype` is the runtime's (rt::DType).
bool npyKindMatches(NpyType type, rt::DType dtype);
llvm::Expected<rt::ElementValue> npyElementValue(const NpyArray &array,
                                                 int64_t i, rt::DType dtype);

/// Serialises an array (version 1.0 header padded to 64 bytes).
std::string serializeNpy(const NpyArray &array);
llvm::Error writeNpyFile(llvm::StringRef path, const NpyArray &array);

} // namespace coconet::support

#endif // COCONET_SUPPORT_NPY_H
