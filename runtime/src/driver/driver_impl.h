//===- driver_impl.h - shared pieces of the driver helpers ------*- C++ -*-===//
//
// Private to the runtime: parsing numbers as the compiler's command line
// does (LLVM's getAsSignedInteger/getAsUnsignedInteger with radix 0), rank
// coordinates and local groups as the simulator computes them, and the
// assembled shape of a value.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SRC_DRIVER_DRIVER_IMPL_H
#define COCONET_RUNTIME_SRC_DRIVER_DRIVER_IMPL_H

#include "coconet/driver.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace coconet::rt::driver::detail {

/// `text` without leading and trailing blanks.
std::string_view trim(std::string_view text);

/// An unsigned integer, all of `text`, in `radix`; radix 0 reads decimal,
/// 0x hex, 0b binary, 0o or 0-prefixed octal. False on anything else or
/// overflow.
bool parseUnsigned(std::string_view text, uint64_t *out, unsigned radix = 0);
/// As parseUnsigned with an optional '-'; false outside int64's range.
bool parseSigned(std::string_view text, int64_t *out, unsigned radix = 0);
/// A decimal or hexadecimal floating-point number, "inf" or "nan", all of
/// `text`, correctly rounded (out-of-range values become infinities).
bool parseDouble(std::string_view text, double *out);

/// Python's repr of a shape tuple: "()", "(5,)", "(2, 3)".
std::string shapeTuple(const std::vector<int64_t> &shape);

/// The most bytes of a message a driver prints (then "...").
constexpr size_t kMaxMessageBytes = 512;
/// `text` as an error line may print it (what the user typed, a file's
/// name): a code point a terminal acts on or cannot show (C0 and C1
/// controls, DEL, bidirectional and zero-width format characters) written
/// <U+001B>, a byte that is not UTF-8 <FF>, as coconetc writes them; cut
/// to kMaxMessageBytes with "...".
std::string safeText(std::string_view text);

/// Checks that the layout, sizes and (if given) coordinates agree and are
/// in range; InvalidArgument naming `info.name` otherwise.
Status checkMesh(const TensorInfo &info, const std::vector<int64_t> &axisSizes,
                 const std::vector<int64_t> *coords);
/// The product of the axis sizes.
int64_t numRanks(const std::vector<int64_t> &axisSizes);
/// The coordinates of `rank`, row-major over the axes.
std::vector<int64_t> coordsOf(const std::vector<int64_t> &axisSizes,
                              int64_t rank);
/// The rank at `coords`.
int64_t rankOf(const std::vector<int64_t> &axisSizes,
               const std::vector<int64_t> &coords);
/// The row-major index of `coords` on the axes where `info` is local.
int64_t localGroup(const TensorInfo &info,
                   const std::vector<int64_t> &axisSizes,
                   const std::vector<int64_t> &coords);
bool isLocalAnywhere(const TensorInfo &info);
/// The global shape, with the number of ranks in front when the value is
/// local on some axis (the simulator's assembled form).
std::vector<int64_t> assembledShape(const TensorInfo &info,
                                    const std::vector<int64_t> &axisSizes);
/// The product of `shape`.
int64_t elementCount(const std::vector<int64_t> &shape);

} // namespace coconet::rt::driver::detail

#endif // COCONET_RUNTIME_SRC_DRIVER_DRIVER_IMPL_H
