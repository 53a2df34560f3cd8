//===- convert.cpp - f16 and bf16 arrays to float and back ----------------===//
//
// The F16C path is compiled for the f16c target attribute whatever the
// flags of the build; it runs only where the CPU reports F16C. vcvtph2ps is
// exact; vcvtps2ph with the round-to-nearest-even immediate rounds as
// numeric.h does (independent of MXCSR), and both quiet a NaN keeping its
// sign and top payload bits, as numeric.h does: the tests compare the two
// paths on every f16 and on the floats that matter.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/convert.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COCONET_HAVE_X86 1
#endif

namespace coconet::rt::cpu {

namespace {

void widenPortable(const Half *in, float *out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i] = halfBitsToFloat(in[i].bits);
}

void narrowPortable(const float *in, Half *out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i].bits = floatToHalfBits(in[i]);
}

#if COCONET_HAVE_X86
__attribute__((target("f16c,avx"))) void widenF16C(const Half *in, float *out,
                                                   int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i)
    out[i] = halfBitsToFloat(in[i].bits);
}

__attribute__((target("f16c,avx"))) void narrowF16C(const float *in, Half *out,
                                                    int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), h);
  }
  for (; i < n; ++i)
    out[i].bits = floatToHalfBits(in[i]);
}

bool cpuHasF16C() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
}
#else
bool cpuHasF16C() { return false; }
#endif

/// The path, chosen at the first call: F16C where the CPU has it, unless
/// COCONET_CONVERSIONS=portable.
std::atomic<int> &path() {
  static std::atomic<int> chosen{[] {
    const char *env = std::getenv("COCONET_CONVERSIONS");
    const bool portable = env && std::strcmp(env, "portable") == 0;
    return int(!portable && cpuHasF16C() ? ConversionPath::F16C
                                         : ConversionPath::Portable);
  }()};
  return chosen;
}

} // namespace

ConversionPath conversionPath() {
  return static_cast<ConversionPath>(path().load(std::memory_order_relaxed));
}

bool setConversionPath(ConversionPath p) {
  if (p == ConversionPath::F16C && !cpuHasF16C())
    return false;
  path().store(int(p), std::memory_order_relaxed);
  return true;
}

void widen(const Half *in, float *out, int64_t n) {
#if COCONET_HAVE_X86
  if (conversionPath() == ConversionPath::F16C)
    return widenF16C(in, out, n);
#endif
  widenPortable(in, out, n);
}

void narrow(const float *in, Half *out, int64_t n) {
#if COCONET_HAVE_X86
  if (conversionPath() == ConversionPath::F16C)
    return narrowF16C(in, out, n);
#endif
  narrowPortable(in, out, n);
}

void widen(const BFloat16 *in, float *out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i] = bfloat16BitsToFloat(in[i].bits);
}

void narrow(const float *in, BFloat16 *out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i].bits = floatToBFloat16Bits(in[i]);
}

} // namespace coconet::rt::cpu
