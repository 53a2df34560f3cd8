//===- NumericDeviceCheck.cu - numeric.h compiles as CUDA device code -----===//
//
// Built (not run: this machine has no GPU) with coconet_rt_cuda: kernels
// call every function of coconet/numeric.h, and every formula the
// compiler's table of operations (compiler/ir/ScalarOps.def) names, so that
// a change that breaks device compilation (a host-only call, a non-scalar
// constexpr object, an exception) or a formula the table names but
// numeric.h lacks fails the build.
//
//===----------------------------------------------------------------------===//

#include "coconet/numeric.h"

namespace {

using namespace coconet::rt;

template <typename T> __device__ T integerOps(const T *x) {
  return wrapAdd(x[0], x[1]) + wrapSub(x[2], x[3]) + wrapMul(x[4], x[5]) +
         wrapNeg(x[6]) + intDiv(x[7], x[8]) + intPow(x[9], x[10]) +
         intAbs(x[11]) + intRelu(x[12]);
}

__global__ void everyNumericFunction(float *f, double *d, uint16_t *h,
                                     int32_t *i, int64_t *l, uint64_t *u,
                                     bool *b) {
  h[0] = floatToHalfBits(f[0]);
  h[1] = doubleToHalfBits(d[0]);
  f[1] = halfBitsToFloat(h[2]);
  h[3] = floatToBFloat16Bits(f[2]);
  h[4] = doubleToBFloat16Bits(d[1]);
  f[3] = bfloat16BitsToFloat(h[5]);
  f[4] = roundToHalf(f[5]) + roundToBFloat16(f[6]);
  d[2] = roundToHalf(d[3]) + roundToBFloat16(d[4]);
  f[7] = maxNumber(f[8], f[9]) + minNumber(f[10], f[11]);
  d[5] = maxNumber(d[6], d[7]) + minNumber(d[8], d[9]);
  i[0] = integerOps(i + 1) + floatToInt<int32_t>(d[10]);
  l[0] = integerOps(l + 1) + floatToInt<int64_t>(d[11]);
  u[0] = integerOps(u + 1) + floatToInt<uint64_t>(d[12]);
  const PhiloxCounter c =
      philox4x32_10(PhiloxCounter{{static_cast<uint32_t>(u[20]), 1, 2, 3}},
                    PhiloxKey{{4, 5}});
  u[21] = c.v[0] + dropoutBits(u[22], u[23]) + uniformInputBits(1, 2, u[24]) +
          floatBits(f[12]) + doubleBits(d[13]);
  f[13] = dropoutUniform(u[25], u[26]) +
          floatFromBits(static_cast<uint32_t>(u[27]));
  d[14] = uniformInput(u[28], u[29], u[30]) + doubleFromBits(u[31]);
  d[15] = combineAdd(d[16], d[17]) + combineMul(d[18], d[19]);
  b[0] = dropoutKeep(u[32], u[33], f[14]);
}

__global__ void everyFloatOperation(float *f, double *d) {
  f[0] = addRn(f[1], f[2]) + subRn(f[3], f[4]) + mulRn(f[5], f[6]) +
         divRn(f[7], f[8]) + sqrtRn(f[9]) + mathExp(f[10]) + mathErf(f[11]) +
         mathAbs(f[12]) + (isNaN(f[13]) ? 1.0f : 0.0f);
  d[0] = addRn(d[1], d[2]) + subRn(d[3], d[4]) + mulRn(d[5], d[6]) +
         divRn(d[7], d[8]) + sqrtRn(d[9]) + mathExp(d[10]) + mathErf(d[11]) +
         mathAbs(d[12]) + (isNaN(d[13]) ? 1.0 : 0.0);
  int k = 14;
#define FORMULA_OP(Name, Printed, Fn)                                          \
  f[k] = ops::Fn(f[k]);                                                        \
  d[k] = ops::Fn(d[k]);                                                        \
  ++k;
#define NUM_OP(Name, Printed, FloatFn, IntFn)                                  \
  f[k] = ops::FloatFn(f[k]);                                                   \
  d[k] = ops::FloatFn(d[k]);                                                   \
  ++k;
#include "ir/ScalarOps.def"
}

} // namespace

/// Referenced so that the kernels are kept.
void *coconetNumericDeviceCheck() {
  return reinterpret_cast<void *>(&everyNumericFunction);
}
void *coconetFloatOperationDeviceCheck() {
  return reinterpret_cast<void *>(&everyFloatOperation);
}
