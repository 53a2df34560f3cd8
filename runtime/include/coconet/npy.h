//===- npy.h - reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The interchange format of the simulator and the generated drivers:
// NumPy's .npy format, version 1.0 (2.0/3.0 headers are read too), C order
// only, little-endian.
//
// Element types: '<f2' (f16), '<f4' (f32), '<f8' (f64), '<i4', '<i8',
// '<u8', '|b1'. bfloat16 has no NumPy type: it is written as '<f4' holding
// the exact widened values, and reading '<f4' into a bf16 tensor rounds.
// The compiler's support/Npy.h wraps these functions. Host-only; C++17.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_NPY_H
#define COCONET_RUNTIME_NPY_H

#include "coconet/status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace coconet::rt {

/// The descr strings above.
enum class NpyType { F16, F32, F64, I32, I64, U64, Bool };

/// "<f2", "<f4", ...
const char *npyDescr(NpyType type);
/// Bytes of one element.
unsigned npyElementSize(NpyType type);
/// The element at `element` (little-endian) converted to double (exact for
/// every type but 64-bit integers beyond 2^53).
double npyElementAsDouble(NpyType type, const uint8_t *element);
/// The element at `element` of an integer or bool type, exactly (u64
/// values of 2^63 and above come back negative: the same 64 bits); a float
/// element truncated toward zero and saturated, NaN giving 0.
int64_t npyElementAsInt(NpyType type, const uint8_t *element);

/// A whole .npy file: type, shape and the raw little-endian element bytes.
struct NpyArray {
  NpyType type = NpyType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// The product of the extents (1 for a scalar).
  int64_t numElements() const;
  /// Element i converted to double (see npyElementAsDouble).
  double getAsDouble(int64_t i) const;
  /// Element i of an integer or bool array (see npyElementAsInt).
  int64_t getAsInt(int64_t i) const;
};

/// Parses a .npy file's bytes. Errors (InvalidArgument) name what is wrong:
/// "not a .npy file", "fortran_order is not supported", "unsupported dtype
/// '>f4'", "the header says 12 elements but the file holds 8".
Status parseNpy(std::string_view bytes, NpyArray *out);
/// Reads and parses a file: IoError "cannot read '<path>': <reason>", or
/// the parse error prefixed with "<path>: ".
Status readNpyFile(const std::string &path, NpyArray *out);

/// The bytes of a .npy file holding `bytes` bytes of `data` (exactly what
/// np.save writes: a version 1.0 header padded to 64 bytes, 2.0 when the
/// header is too long for 1.0). `bytes` must be the shape's element count
/// times the element size.
std::string serializeNpy(NpyType type, const std::vector<int64_t> &shape,
                         const void *data, size_t bytes);
std::string serializeNpy(const NpyArray &array);
/// Writes such a file: IoError "cannot write '<path>': <reason>";
/// InvalidArgument when the data does not match the shape.
Status writeNpyFile(const std::string &path, NpyType type,
                    const std::vector<int64_t> &shape, const void *data,
                    size_t bytes);
Status writeNpyFile(const std::string &path, const NpyArray &array);

} // namespace coconet::rt

#endif // COCONET_RUNTIME_NPY_H
