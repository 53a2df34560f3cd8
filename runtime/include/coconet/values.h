//===- values.h - the values a user gives a parameter ----------*- C++ -*-===//
//
// One rule, shared by `coconetc sim` and the generated drivers, for turning
// what a user gives (`--set NAME=TEXT`, the elements of `--input NAME=FILE`)
// into a parameter's elements; docs/cli.md states it:
//
//  - --set: the text is a number of the parameter's kind (a decimal or
//    hexadecimal float for a float type, an integer for an integer type,
//    true/false/1/0 for bool), rounded to nearest in a float type. Refused
//    when it does not fit: a finite number that overflows the type
//    (`1e999`, `1e6` for an f16) or a non-zero one that rounds to zero
//    (`1e-9` for an f16), an integer outside the type's range. Infinities
//    and NaN are given by name (`inf`, `-inf`, `nan`).
//  - --input: a file's elements are converted to the parameter's type only
//    when every one is exact in it (an f16 file for an f32 parameter, an
//    f64 file of f32 values, i64 values that fit an i32); otherwise the
//    first element that is not is named and the file refused. Float data
//    never becomes integers or bools, nor the other way round.
//
// And the values both generate under --inputs=wide (wideInputValue).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_VALUES_H
#define COCONET_RUNTIME_VALUES_H

#include "coconet/npy.h"
#include "coconet/status.h"
#include "coconet/types.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace coconet::rt {

/// One element before it is stored: a float type's value in `f` (exact in
/// the type), an integer's or bool's 64-bit two's complement pattern in `i`.
struct ElementValue {
  double f = 0;
  uint64_t i = 0;
};

/// The value of `--set name=text` for a parameter of type `dtype`.
/// InvalidArgument ("--set lr=1e999: ...") when the rule above refuses it.
Status parseSetValue(const std::string &name, DType dtype,
                     std::string_view text, ElementValue *out);

/// Whether a file of `type` can feed a `dtype` parameter at all (same
/// kind: float, integer or bool).
bool npyKindMatches(NpyType type, DType dtype);

/// Element `index` of `array` as a value of `dtype`, when it is exact in
/// it (npyKindMatches must hold). InvalidArgument otherwise, naming the
/// element and its value ("element 12 (1000000) is not exact in f16").
Status npyElementValue(const NpyArray &array, int64_t index, DType dtype,
                       ElementValue *out);
/// The same for the element of `type` at `element` (little-endian bytes).
Status npyElementValue(NpyType type, const uint8_t *element, int64_t index,
                       DType dtype, ElementValue *out);

/// A float tensor's generated element under --inputs=wide, from the
/// uniform input `u` and the independent bits `bits` of the same element
/// (uniformInput, uniformInputBits): f16 keeps `u`; otherwise a quarter of
/// the elements are +-2^54 and, in f64, the rest 1 + 52 random bits (sign
/// from bit 2). The simulator and the drivers both draw with it.
double wideInputValue(DType dtype, double u, uint64_t bits);

} // namespace coconet::rt

#endif // COCONET_RUNTIME_VALUES_H
