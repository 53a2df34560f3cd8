//===- FloatOrder.h - max and min independent of order ------*- C++ -*-===//
//
// std::fmax/std::fmin may return either zero for (+0, -0), so a maximum
// computed in another order (per-rank partial maxima combined by an
// allreduce, say) could differ in the sign of a zero. The language defines
// max and min on floats as IEEE 754-2019 maximumNumber/minimumNumber:
// -0 orders below +0, and a NaN operand is ignored unless both are NaN.
// The simulator and every code generation target use exactly these: the
// definitions are the runtime's (coconet/numeric.h).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SUPPORT_FLOATORDER_H
#define COCONET_SUPPORT_FLOATORDER_H

#include "coconet/numeric.h"

namespace coconet::support {

/// The larger of a and b; +0 over -0; the other operand when one is NaN.
inline double maxNumber(double a, double b) { return rt::maxNumber(a, b); }

/// The smaller of a and b; -0 under +0; the other operand when one is NaN.
inline double minNumber(double a, double b) { return rt::minNumber(a, b); }

} // namespace coconet::support

#endif // COCONET_SUPPORT_FLOATORDER_H
