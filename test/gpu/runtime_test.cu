//===- runtime_test.cu - the CUDA runtime's own checks on one GPU -----------=//
//
// Run by test/gpu/run.sh on a machine with a GPU (test/gpu/README.md);
// compiled, not run, by the CTest gpu-build where there is none.
//
//   runtime_test             every check; exit 0 when all pass
//   runtime_test --versions  the CUDA runtime/driver, NCCL and cuBLAS
//                            versions and the device, then exit
//
// What is checked:
//   - numeric.h on the device against the same functions on the host, bit
//     for bit, for many inputs: f16/bf16 rounding from float and double,
//     widening, maxNumber/minNumber, the integer helpers, float->int casts,
//     Philox4x32-10 (Random123's known answers), dropout and the generated
//     inputs;
//   - the CUDA intrinsics the generated kernels use where they must agree
//     with the simulator bit for bit: __float2half_rn / __float2bfloat16_rn
//     on all 2^32 floats, __double2half / __double2bfloat16 on double
//     rounding traps, __half2float / __bfloat162float on all 65536 inputs,
//     and __fadd_rn, __fsub_rn, __fmul_rn, __fdiv_rn, __fsqrt_rn and the
//     double versions against the host's IEEE arithmetic;
//   - the math functions whose results may differ (exp, log, tanh, erf,
//     pow in float and double) against glibc: the largest difference in
//     ulp is printed, and must stay within the bound the GPU check's
//     tolerances assume (test/gpu/prepare.py);
//   - cuda::matmul for every element type against a host reference that
//     sums in f64 (floats) or wrapping 64-bit integers and rounds once, as
//     the simulator does, with batches, a shared B, k = 0 and padded C;
//   - Communicator::single, Communicator::wrap, Mesh::create with axes of
//     size 1 (and the sizes it must refuse);
//   - one-rank NCCL collectives for every element type and operator, alone
//     and grouped: the output equals the input;
//   - the check macros: a failing CUDA, NCCL, cuBLAS call and kernel launch
//     each return a Status with the right code that names the call and
//     this file.
//
// Output: one line per check, "ok: NAME: details" or "FAILED: NAME: why",
// then "runtime_test: N checks, M failed".
//
//===----------------------------------------------------------------------===//

#include "coconet/cuda/runtime.h"
#include "coconet/numeric.h"
#include "coconet/status.h"
#include "coconet/types.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace coconet::rt;

namespace {

// --- Reporting -------------------------------------------------------------

int gChecks = 0;
int gFailed = 0;

void report(bool ok, const std::string &name, const std::string &detail) {
  ++gChecks;
  if (!ok)
    ++gFailed;
  std::printf("%s %s%s%s\n", ok ? "ok:" : "FAILED:", name.c_str(),
              detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stdout);
}

/// Runs a check that reports its own result, or fails with its Status.
template <typename F> void check(const std::string &name, F f) {
  std::string detail;
  bool ok = false;
  Status st = f(&ok, &detail);
  if (!st.ok()) {
    ok = false;
    detail = st.toString() + (detail.empty() ? "" : " (" + detail + ")");
  }
  report(ok, name, detail);
}

template <typename T> std::string hex(const T &v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  std::string s = "0x";
  for (size_t i = sizeof(T); i-- > 0;) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", b[i]);
    s += buf;
  }
  return s;
}

std::string fmt(const char *format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// --- Device memory -----------------------------------------------------------

template <typename T> class DeviceArray {
public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  ~DeviceArray() {
    if (ptr)
      cudaFree(ptr);
  }
  Status init(size_t n) {
    count = n;
    COCONET_CUDA_CHECK(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T)));
    return Status();
  }
  Status upload(const std::vector<T> &v) {
    COCONET_RETURN_IF_ERROR(init(v.size()));
    COCONET_CUDA_CHECK(cudaMemcpy(ptr, v.data(), v.size() * sizeof(T),
                                  cudaMemcpyHostToDevice));
    return Status();
  }
  Status download(std::vector<T> *v) const {
    v->resize(count);
    COCONET_CUDA_CHECK(
        cudaMemcpy(v->data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return Status();
  }
  T *get() const { return ptr; }

private:
  T *ptr = nullptr;
  size_t count = 0;
};

unsigned gridFor(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(
      std::min<int64_t>(std::max<int64_t>(blocks, 1), 4096));
}

template <typename In, typename Out, typename F>
__global__ void mapKernel(const In *in, Out *out, int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = f(in[i]);
}

/// Applies `f` to every input on the device.
template <typename Out, typename In, typename F>
Status onDevice(const std::vector<In> &in, F f, std::vector<Out> *out) {
  DeviceArray<In> din;
  DeviceArray<Out> dout;
  COCONET_RETURN_IF_ERROR(din.upload(in));
  COCONET_RETURN_IF_ERROR(dout.init(in.size()));
  const int64_t n = static_cast<int64_t>(in.size());
  COCONET_CUDA_LAUNCH_CHECK(
      mapKernel<<<gridFor(n), 256>>>(din.get(), dout.get(), n, f));
  COCONET_CUDA_CHECK(cudaDeviceSynchronize());
  return dout.download(out);
}

/// Bitwise equality of two values (of a plain struct, every byte).
struct Bitwise {
  template <typename T> bool operator()(const T &a, const T &b) const {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
};

/// `dev` on the device against `host` on the host for every input; `eq`
/// decides agreement. Reports the count and the first disagreements.
template <typename Out, typename In, typename DevF, typename HostF,
          typename Eq = Bitwise>
void compareMap(const std::string &name, const std::vector<In> &inputs,
                DevF dev, HostF host, Eq eq = Eq()) {
  check(name, [&](bool *ok, std::string *detail) -> Status {
    std::vector<Out> got;
    COCONET_RETURN_IF_ERROR(onDevice<Out>(inputs, dev, &got));
    size_t bad = 0;
    std::string first;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Out want = host(inputs[i]);
      if (eq(want, got[i]))
        continue;
      if (bad++ < 3)
        first += " input " + hex(inputs[i]) + ": device " + hex(got[i]) +
                 ", host " + hex(want) + ";";
    }
    *ok = bad == 0;
    *detail = std::to_string(inputs.size()) + " inputs, " +
              std::to_string(bad) + " disagree" + (bad ? ":" + first : "");
    return Status();
  });
}

std::mt19937_64 &rng() {
  static std::mt19937_64 r(20261123);
  return r;
}

// --- Inputs ------------------------------------------------------------------

std::vector<float> specialFloats() {
  std::vector<float> v = {
      0.0f,     -0.0f,    1.0f,     -1.0f,     0.5f,           2.0f,
      3.0f,     0.1f,     -0.1f,    1.0f / 3,  65504.0f,       65505.0f,
      65519.0f, 65520.0f, 65536.0f, -65520.0f, 1e-8f,          6e-8f,
      3e-8f,    1e30f,    -1e30f,   1e-30f,    5.96046448e-8f, 2.98023224e-8f};
  for (uint32_t bits :
       {0x00000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x7f800000u,
        0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu,
        0xff812345u, 0x80000001u, 0x33800000u, 0x33000000u, 0x33000001u,
        0x387fe000u, 0x38800000u, 0x477fe000u, 0x477ff000u, 0x477fefffu,
        0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f807fffu})
    v.push_back(floatFromBits(bits));
  return v;
}

/// Specials, random bit patterns, every f16 and bf16 value and the exact
/// midpoints between neighbours (and one float ulp either side).
std::vector<float> floatInputs(size_t randoms) {
  std::vector<float> v = specialFloats();
  for (size_t i = 0; i < randoms; ++i)
    v.push_back(floatFromBits(static_cast<uint32_t>(rng()())));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    for (int format = 0; format < 2; ++format) {
      const float a = format ? bfloat16BitsToFloat(uint16_t(h))
                             : halfBitsToFloat(uint16_t(h));
      const float b = format ? bfloat16BitsToFloat(uint16_t(h + 1))
                             : halfBitsToFloat(uint16_t(h + 1));
      v.push_back(a);
      if (!std::isfinite(a) || !std::isfinite(b) || (h & 0x7fffu) == 0x7fffu)
        continue;
      const float mid = static_cast<float>((double(a) + double(b)) / 2);
      v.push_back(mid);
      v.push_back(std::nextafter(mid, INFINITY));
      v.push_back(std::nextafter(mid, -INFINITY));
    }
  }
  return v;
}

/// Doubles around f16 and bf16 midpoints (where rounding through float
/// would round twice), random values in and beyond the narrow ranges, and
/// random bit patterns.
std::vector<double> doubleInputs(size_t randoms) {
  std::vector<double> v = {0.0,
                           -0.0,
                           1.0,
                           -1.0,
                           65504.0,
                           65519.999999,
                           65520.0,
                           1e300,
                           -1e300,
                           5e-324,
                           -5e-324,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           doubleFromBits(0x7ff0000000000001ull),
                           doubleFromBits(0xfff8000000abcdefull),
                           std::ldexp(1.0, -25),
                           std::ldexp(1.0, -24),
                           std::ldexp(1.0, -134),
                           std::ldexp(1.0, -133)};
  for (uint32_t h = 0; h < 0x10000; h += 1) {
    for (int format = 0; format < 2; ++format) {
      const double a = format ? bfloat16BitsToFloat(uint16_t(h))
                              : halfBitsToFloat(uint16_t(h));
      const double b = format ? bfloat16BitsToFloat(uint16_t(h + 1))
                              : halfBitsToFloat(uint16_t(h + 1));
      if (!std::isfinite(a) || !std::isfinite(b) || (h & 0x7fffu) == 0x7fffu)
        continue;
      const double mid = (a + b) / 2;
      v.push_back(mid);
      v.push_back(std::nextafter(mid, INFINITY));
      v.push_back(std::nextafter(mid, -INFINITY));
      // Off the midpoint by less than a float ulp: a float conversion
      // first would land on the midpoint, then round to even.
      v.push_back(mid + std::fabs(mid) * std::ldexp(1.0, -40));
      v.push_back(mid - std::fabs(mid) * std::ldexp(1.0, -40));
    }
  }
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<int> exponent(-140, 20);
  for (size_t i = 0; i < randoms; ++i) {
    v.push_back(std::ldexp(unit(rng()), exponent(rng())));
    v.push_back(doubleFromBits(rng()()));
  }
  return v;
}

bool isNaN16(uint16_t h, bool bf16) {
  return bf16 ? (h & 0x7f80u) == 0x7f80u && (h & 0x7fu)
              : (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
}

// --- numeric.h: rounding and widening ----------------------------------------

struct NarrowResults {
  uint16_t half, bf16;
  float roundHalf, roundBf16;
};
struct NarrowFromFloat {
  __host__ __device__ NarrowResults operator()(float x) const {
    return {floatToHalfBits(x), floatToBFloat16Bits(x), roundToHalf(x),
            roundToBFloat16(x)};
  }
};
struct NarrowDoubleResults {
  uint16_t half, bf16;
  uint32_t pad;
  double roundHalf, roundBf16;
};
struct NarrowFromDouble {
  __host__ __device__ NarrowDoubleResults operator()(double x) const {
    return {doubleToHalfBits(x), doubleToBFloat16Bits(x), 0, roundToHalf(x),
            roundToBFloat16(x)};
  }
};
struct Widen {
  __host__ __device__ uint64_t operator()(uint16_t h) const {
    return (uint64_t(floatBits(halfBitsToFloat(h))) << 32) |
           floatBits(bfloat16BitsToFloat(h));
  }
};

/// The intrinsics of the generated kernels against numeric.h.
struct IntrinsicFromDouble {
  __device__ uint32_t operator()(double x) const {
    return (uint32_t(__half_as_ushort(__double2half(x))) << 16) |
           __bfloat16_as_ushort(__double2bfloat16(x));
  }
};
struct NumericFromDouble {
  uint32_t operator()(double x) const {
    return (uint32_t(doubleToHalfBits(x)) << 16) | doubleToBFloat16Bits(x);
  }
};
struct IntrinsicWiden {
  __device__ uint64_t operator()(uint16_t h) const {
    __half_raw hr;
    hr.x = h;
    __nv_bfloat16_raw br;
    br.x = h;
    return (uint64_t(floatBits(__half2float(__half(hr)))) << 32) |
           floatBits(__bfloat162float(__nv_bfloat16(br)));
  }
};
/// Two packed narrow results agree, or are both NaN.
struct SameOrBothNaN16 {
  bool operator()(uint32_t a, uint32_t b) const {
    for (int part = 0; part < 2; ++part) {
      const uint16_t x = uint16_t(a >> (16 * (1 - part)));
      const uint16_t y = uint16_t(b >> (16 * (1 - part)));
      if (x != y && !(isNaN16(x, part == 1) && isNaN16(y, part == 1)))
        return false;
    }
    return true;
  }
};
struct SameOrBothNaN32x2 {
  bool operator()(uint64_t a, uint64_t b) const {
    for (int part = 0; part < 2; ++part) {
      const float x = floatFromBits(uint32_t(a >> (32 * part)));
      const float y = floatFromBits(uint32_t(b >> (32 * part)));
      if (floatBits(x) != floatBits(y) && !(std::isnan(x) && std::isnan(y)))
        return false;
    }
    return true;
  }
};

struct Exhaustive {
  unsigned long long mismatches;
  unsigned long long nanPayloads;
  unsigned long long first;
};

/// Every float: numeric.h's rounding against the intrinsic.
__global__ void everyFloatToNarrow(bool bf16, Exhaustive *out) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
       i < (uint64_t(1) << 32); i += uint64_t(gridDim.x) * blockDim.x) {
    const float x = floatFromBits(static_cast<uint32_t>(i));
    const uint16_t mine = bf16 ? floatToBFloat16Bits(x) : floatToHalfBits(x);
    const uint16_t theirs = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x))
                                 : __half_as_ushort(__float2half_rn(x));
    if (mine == theirs)
      continue;
    const bool nanMine = bf16 ? (mine & 0x7f80u) == 0x7f80u && (mine & 0x7fu)
                              : (mine & 0x7c00u) == 0x7c00u && (mine & 0x3ffu);
    const bool nanTheirs =
        bf16 ? (theirs & 0x7f80u) == 0x7f80u && (theirs & 0x7fu)
             : (theirs & 0x7c00u) == 0x7c00u && (theirs & 0x3ffu);
    if (nanMine && nanTheirs) {
      atomicAdd(&out->nanPayloads, 1ull);
      continue;
    }
    atomicAdd(&out->mismatches, 1ull);
    atomicMin(&out->first, static_cast<unsigned long long>(i));
  }
}

void checkEveryFloat(bool bf16, int sms) {
  const std::string what = bf16 ? "bf16" : "f16";
  check("numeric: f32 -> " + what +
            ", all 2^32 floats: numeric.h on the "
            "device against " +
            (bf16 ? "__float2bfloat16_rn" : "__float2half_rn"),
        [&](bool *ok, std::string *detail) -> Status {
          DeviceArray<Exhaustive> d;
          COCONET_RETURN_IF_ERROR(d.upload({Exhaustive{0, 0, ~0ull}}));
          COCONET_CUDA_LAUNCH_CHECK(
              everyFloatToNarrow<<<unsigned(sms) * 16, 256>>>(bf16, d.get()));
          COCONET_CUDA_CHECK(cudaDeviceSynchronize());
          std::vector<Exhaustive> h;
          COCONET_RETURN_IF_ERROR(d.download(&h));
          *ok = h[0].mismatches == 0;
          *detail = std::to_string(h[0].mismatches) + " differ" +
                    (h[0].mismatches
                         ? " (first input " + hex(uint32_t(h[0].first)) + ")"
                         : std::string()) +
                    ", " + std::to_string(h[0].nanPayloads) +
                    " NaNs with other payloads (allowed)";
          return Status();
        });
}

// --- IEEE arithmetic: the _rn intrinsics against the host --------------------

template <typename T> struct Pair {
  T a, b;
};
struct Arith32 {
  float add, sub, mul, div, sqrt;
};
struct Arith64 {
  double add, sub, mul, div, sqrt;
};
struct DeviceArith32 {
  __device__ Arith32 operator()(Pair<float> p) const {
    return {__fadd_rn(p.a, p.b), __fsub_rn(p.a, p.b), __fmul_rn(p.a, p.b),
            __fdiv_rn(p.a, p.b), __fsqrt_rn(p.a)};
  }
};
struct HostArith32 {
  Arith32 operator()(Pair<float> p) const {
    volatile float a = p.a, b = p.b; // one rounding per operation
    return {a + b, a - b, a * b, a / b, std::sqrt(p.a)};
  }
};
struct DeviceArith64 {
  __device__ Arith64 operator()(Pair<double> p) const {
    return {__dadd_rn(p.a, p.b), __dsub_rn(p.a, p.b), __dmul_rn(p.a, p.b),
            __ddiv_rn(p.a, p.b), __dsqrt_rn(p.a)};
  }
};
struct HostArith64 {
  Arith64 operator()(Pair<double> p) const {
    volatile double a = p.a, b = p.b;
    return {a + b, a - b, a * b, a / b, std::sqrt(p.a)};
  }
};
template <typename T, typename R> struct SameArith {
  bool operator()(const R &x, const R &y) const {
    const T *a = reinterpret_cast<const T *>(&x);
    const T *b = reinterpret_cast<const T *>(&y);
    for (size_t i = 0; i < sizeof(R) / sizeof(T); ++i)
      if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0 &&
          !(std::isnan(a[i]) && std::isnan(b[i])))
        return false;
    return true;
  }
};

// --- Math functions: ulp distance against glibc ------------------------------

enum class MathFn { Exp, Log, Tanh, Erf, Pow };
const char *mathName(MathFn f) {
  switch (f) {
  case MathFn::Exp:
    return "exp";
  case MathFn::Log:
    return "log";
  case MathFn::Tanh:
    return "tanh";
  case MathFn::Erf:
    return "erf";
  case MathFn::Pow:
    return "pow";
  }
  return "?";
}
template <typename T> struct DeviceMath {
  MathFn fn;
  // The spellings of the generated kernels: expf for float, exp for double.
  __device__ T operator()(Pair<T> p) const {
    if constexpr (sizeof(T) == 4) {
      switch (fn) {
      case MathFn::Exp:
        return expf(p.a);
      case MathFn::Log:
        return logf(p.a);
      case MathFn::Tanh:
        return tanhf(p.a);
      case MathFn::Erf:
        return erff(p.a);
      case MathFn::Pow:
        return powf(p.a, p.b);
      }
    } else {
      switch (fn) {
      case MathFn::Exp:
        return exp(p.a);
      case MathFn::Log:
        return log(p.a);
      case MathFn::Tanh:
        return tanh(p.a);
      case MathFn::Erf:
        return erf(p.a);
      case MathFn::Pow:
        return pow(p.a, p.b);
      }
    }
    return 0;
  }
};
template <typename T> T hostMath(MathFn fn, Pair<T> p) {
  switch (fn) {
  case MathFn::Exp:
    return std::exp(p.a);
  case MathFn::Log:
    return std::log(p.a);
  case MathFn::Tanh:
    return std::tanh(p.a);
  case MathFn::Erf:
    return std::erf(p.a);
  case MathFn::Pow:
    return std::pow(p.a, p.b);
  }
  return 0;
}
/// Representable values between two floats (of one type), counted in
/// integers: a double holds 53 bits, so the difference of two orders of
/// doubles taken as doubles came out in steps of 512 or 1024 (a 1-ulp
/// difference of exp read as 1024 on the first GPU run).
template <typename T> double ulpDistance(T x, T y) {
  if (std::isnan(x) || std::isnan(y))
    return std::isnan(x) && std::isnan(y) ? 0 : INFINITY;
  auto ordered = [](T v) -> int64_t {
    if constexpr (sizeof(T) == 4) {
      const uint32_t b = floatBits(v);
      return (b >> 31) ? -int64_t(b & 0x7fffffffu) : int64_t(b);
    } else {
      const uint64_t b = doubleBits(v);
      return (b >> 63) ? -int64_t(b & 0x7fffffffffffffffull) : int64_t(b);
    }
  };
  const int64_t a = ordered(x), b = ordered(y);
  // |a - b| < 2^64: the orders lie in (-2^63, 2^63).
  return double(a > b ? uint64_t(a) - uint64_t(b) : uint64_t(b) - uint64_t(a));
}

template <typename T> std::vector<Pair<T>> mathInputs(MathFn fn, size_t n) {
  std::vector<Pair<T>> v;
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < n; ++i) {
    const double r = u(rng()), s = u(rng());
    T a = 0, b = 0;
    switch (fn) {
    case MathFn::Exp:
      a = T(-87 + 175 * r);
      break;
    case MathFn::Log:
      a = T(i % 4 == 0 ? 0.5 + r : std::pow(10.0, -30 + 60 * r));
      break;
    case MathFn::Tanh:
      a = T(-10 + 20 * r);
      break;
    case MathFn::Erf:
      a = T(-4 + 8 * r);
      break;
    case MathFn::Pow:
      if (i % 2 == 0) { // Adam's bias correction: beta^t
        a = T(0.05 + 0.949 * r);
        b = T(1 + int(s * 16));
      } else {
        a = T(0.1 + 1.9 * r); // results stay normal: 1e-30 to 1e30
        b = T(-30 + 60 * s);
      }
      break;
    }
    v.push_back({a, b});
  }
  return v;
}

template <typename T> void checkMath(MathFn fn, double bound) {
  const std::string name = std::string("math: ") + mathName(fn) +
                           (sizeof(T) == 4 ? "f" : "") +
                           " on the device against glibc";
  check(name, [&](bool *ok, std::string *detail) -> Status {
    const std::vector<Pair<T>> in = mathInputs<T>(fn, 1 << 20);
    std::vector<T> got;
    COCONET_RETURN_IF_ERROR(onDevice<T>(in, DeviceMath<T>{fn}, &got));
    double worst = 0;
    size_t differ = 0, worstAt = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const double d = ulpDistance(hostMath(fn, in[i]), got[i]);
      differ += d > 0;
      if (d > worst) {
        worst = d;
        worstAt = i;
      }
    }
    *ok = worst <= bound;
    *detail = "max " + fmt("%.0f", worst) + " ulp (bound " +
              fmt("%.0f", bound) + "), " + std::to_string(differ) + " of " +
              std::to_string(in.size()) + " differ" +
              (worst > 0 ? "; worst at (" + fmt("%.9g", double(in[worstAt].a)) +
                               ", " + fmt("%.9g", double(in[worstAt].b)) + ")"
                         : std::string());
    return Status();
  });
}

// --- maxNumber / minNumber ---------------------------------------------------

template <typename T> struct MaxMin {
  T max, min;
};
template <typename T> struct MaxMinOf {
  __host__ __device__ MaxMin<T> operator()(Pair<T> p) const {
    return {maxNumber(p.a, p.b), minNumber(p.a, p.b)};
  }
};
template <typename T> std::vector<Pair<T>> maxMinInputs() {
  std::vector<T> specials;
  for (float f : specialFloats())
    specials.push_back(T(f));
  if constexpr (sizeof(T) == 8) {
    specials.push_back(doubleFromBits(0x7ff0000000000001ull));
    specials.push_back(doubleFromBits(0xfff8000000000123ull));
    specials.push_back(5e-324);
  }
  std::vector<Pair<T>> v;
  for (T a : specials)
    for (T b : specials)
      v.push_back({a, b});
  std::uniform_real_distribution<double> u(-2, 2);
  for (int i = 0; i < (1 << 18); ++i) {
    T a = T(u(rng())), b = T(u(rng()));
    if (i % 8 == 0)
      b = a;
    if (i % 8 == 1)
      b = -a;
    v.push_back({a, b});
  }
  return v;
}

// --- Integers ----------------------------------------------------------------

template <typename T> struct IntResults {
  T add, sub, mul, div, pow, neg, abs, relu;
};
template <typename T> struct IntOps {
  __host__ __device__ IntResults<T> operator()(Pair<T> p) const {
    return {wrapAdd(p.a, p.b), wrapSub(p.a, p.b), wrapMul(p.a, p.b),
            intDiv(p.a, p.b),  intPow(p.a, p.b),  wrapNeg(p.a),
            intAbs(p.a),       intRelu(p.a)};
  }
};
template <typename T> std::vector<Pair<T>> intInputs() {
  const T lo = std::numeric_limits<T>::min(),
          hi = std::numeric_limits<T>::max();
  std::vector<T> edges = {T(0),      T(1),      T(2),      T(3),
                          T(7),      T(31),     T(32),     T(63),
                          T(64),     T(12345),  lo,        hi,
                          T(lo + 1), T(hi - 1), T(hi / 2), T(hi / 2 + 1)};
  if constexpr (std::is_signed_v<T>) {
    for (T e : {T(-1), T(-2), T(-3), T(-7), T(-64), T(-12345)})
      edges.push_back(e);
  }
  std::vector<Pair<T>> v;
  for (T a : edges)
    for (T b : edges)
      v.push_back({a, b});
  std::uniform_int_distribution<int> small(-20, 20);
  for (int i = 0; i < (1 << 18); ++i) {
    const T a = static_cast<T>(rng()());
    T b = static_cast<T>(rng()());
    if (i % 2 == 0)
      b = static_cast<T>(small(rng())); // small exponents and divisors
    v.push_back({a, b});
  }
  return v;
}

struct FloatToInts {
  int32_t i32;
  uint32_t pad;
  int64_t i64;
  uint64_t u64;
};
struct FloatToIntsOf {
  __host__ __device__ FloatToInts operator()(double x) const {
    return {floatToInt<int32_t>(x), 0, floatToInt<int64_t>(x),
            floatToInt<uint64_t>(x)};
  }
};
std::vector<double> floatToIntInputs() {
  std::vector<double> v = {0.0,
                           -0.0,
                           0.5,
                           -0.5,
                           0.999,
                           -0.999,
                           1.0,
                           -1.0,
                           2147483647.0,
                           2147483647.5,
                           2147483648.0,
                           -2147483648.0,
                           -2147483648.5,
                           -2147483649.0,
                           9223372036854775807.0,
                           9223372036854775808.0,
                           -9223372036854775808.0,
                           -9223372036854777856.0,
                           18446744073709551615.0,
                           18446744073709549568.0,
                           1e300,
                           -1e300,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(0, 70);
  for (int i = 0; i < (1 << 18); ++i)
    v.push_back(std::ldexp(u(rng()), e(rng())));
  return v;
}

// --- Philox, dropout, generated inputs ---------------------------------------

struct PhiloxIn {
  uint64_t seed, index, stream;
  float p;
  uint32_t pad;
};
struct PhiloxOut {
  PhiloxCounter block;
  uint32_t dropout;
  float uniform;
  uint32_t keep;
  uint32_t pad;
  double input;
  uint64_t inputBits;
};
struct PhiloxOf {
  __host__ __device__ PhiloxOut operator()(PhiloxIn in) const {
    PhiloxOut o;
    o.block = philox4x32_10(
        PhiloxCounter{{uint32_t(in.index), uint32_t(in.index >> 32),
                       uint32_t(in.stream), uint32_t(in.stream >> 32)}},
        PhiloxKey{{uint32_t(in.seed), uint32_t(in.seed >> 32)}});
    o.dropout = dropoutBits(in.seed, in.index);
    o.uniform = dropoutUniform(in.seed, in.index);
    o.keep = dropoutKeep(in.seed, in.index, in.p) ? 1u : 0u;
    o.pad = 0;
    o.input = uniformInput(in.seed, in.stream, in.index);
    o.inputBits = uniformInputBits(in.seed, in.stream, in.index);
    return o;
  }
};
struct Kat {
  PhiloxCounter counter;
  PhiloxKey key;
};
struct KatOf {
  __host__ __device__ PhiloxCounter operator()(Kat k) const {
    return philox4x32_10(k.counter, k.key);
  }
};

// --- matmul ------------------------------------------------------------------

const DType kAllTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64,
                           DType::I32, DType::I64,  DType::U64, DType::Bool};

double loadFloat(DType t, const uint8_t *p) {
  uint16_t h;
  float f;
  double d;
  switch (t) {
  case DType::F16:
    std::memcpy(&h, p, 2);
    return halfBitsToFloat(h);
  case DType::BF16:
    std::memcpy(&h, p, 2);
    return bfloat16BitsToFloat(h);
  case DType::F32:
    std::memcpy(&f, p, 4);
    return f;
  default:
    std::memcpy(&d, p, 8);
    return d;
  }
}
void storeFloat(DType t, uint8_t *p, double v) {
  uint16_t h;
  float f;
  switch (t) {
  case DType::F16:
    h = doubleToHalfBits(v);
    std::memcpy(p, &h, 2);
    return;
  case DType::BF16:
    h = doubleToBFloat16Bits(v);
    std::memcpy(p, &h, 2);
    return;
  case DType::F32:
    f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
    return;
  default:
    std::memcpy(p, &v, 8);
    return;
  }
}
/// An integer or bool element widened as the simulator holds it.
uint64_t loadInt(DType t, const uint8_t *p) {
  int32_t i;
  uint64_t u;
  switch (t) {
  case DType::I32:
    std::memcpy(&i, p, 4);
    return static_cast<uint64_t>(static_cast<int64_t>(i));
  case DType::Bool:
    return p[0] != 0;
  default:
    std::memcpy(&u, p, 8);
    return u;
  }
}
void storeInt(DType t, uint8_t *p, uint64_t v) {
  if (t == DType::Bool)
    p[0] = v != 0;
  else
    std::memcpy(p, &v, dtypeSize(t)); // the low bytes: wraps
}

struct MatmulShape {
  int64_t batch, m, n, k;
  bool batchedB;
  int64_t padC; ///< extra elements between C's batch entries
};

Status checkMatmul(cublasHandle_t handle, cudaStream_t stream, DType t,
                   const MatmulShape &s, bool *ok, std::string *detail) {
  const size_t size = dtypeSize(t);
  const int64_t strideA = s.m * s.k, strideB = s.batchedB ? s.k * s.n : 0;
  const int64_t strideC = s.m * s.n + s.padC;
  const int64_t countA = s.batch * strideA;
  const int64_t countB = s.batchedB ? s.batch * strideB : s.k * s.n;
  const int64_t countC = s.batch * strideC;
  std::vector<uint8_t> a(size_t(countA) * size), b(size_t(countB) * size);
  std::uniform_real_distribution<double> u(-1, 1);
  auto fill = [&](std::vector<uint8_t> &v) {
    for (size_t i = 0; i < v.size() / size; ++i) {
      if (isFloat(t))
        storeFloat(t, &v[i * size], u(rng()));
      else if (t == DType::Bool)
        v[i] = static_cast<uint8_t>(rng()() & 1);
      else
        storeInt(t, &v[i * size], rng()()); // full range: products wrap
    }
  };
  fill(a);
  fill(b);
  const uint8_t kSentinel = 0x5a;
  std::vector<uint8_t> c(size_t(countC) * size, kSentinel);

  DeviceArray<uint8_t> da, db, dc;
  COCONET_RETURN_IF_ERROR(da.upload(a));
  COCONET_RETURN_IF_ERROR(db.upload(b));
  COCONET_RETURN_IF_ERROR(dc.upload(c));
  COCONET_RETURN_IF_ERROR(cuda::matmul(handle, stream, t, s.batch, s.m, s.n,
                                       s.k, da.get(), strideA, db.get(),
                                       strideB, dc.get(), strideC));
  COCONET_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint8_t> got;
  COCONET_RETURN_IF_ERROR(dc.download(&got));

  // The simulator's reference: products summed in k order in f64 (floats)
  // or wrapping 64-bit integers, rounded once.
  std::vector<uint8_t> want(c);
  std::vector<double> exact(size_t(s.batch * s.m * s.n));
  double scale = 0;
  for (int64_t bi = 0; bi < s.batch; ++bi)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        const uint8_t *ra = &a[size_t(bi * strideA + i * s.k) * size];
        const uint8_t *cb = &b[size_t(bi * strideB + j) * size];
        uint8_t *out = &want[size_t(bi * strideC + i * s.n + j) * size];
        if (isFloat(t)) {
          double sum = 0;
          for (int64_t kk = 0; kk < s.k; ++kk)
            sum += loadFloat(t, ra + kk * size) *
                   loadFloat(t, cb + size_t(kk * s.n) * size);
          storeFloat(t, out, sum);
          scale = std::max(scale, std::fabs(loadFloat(t, out)));
        } else {
          uint64_t sum = 0;
          for (int64_t kk = 0; kk < s.k; ++kk)
            sum =
                wrapAdd(sum, wrapMul(loadInt(t, ra + kk * size),
                                     loadInt(t, cb + size_t(kk * s.n) * size)));
          storeInt(t, out, sum);
        }
      }
  const double eps = t == DType::F16    ? std::ldexp(1.0, -10)
                     : t == DType::BF16 ? std::ldexp(1.0, -7)
                     : t == DType::F32  ? std::ldexp(1.0, -23)
                                        : std::ldexp(1.0, -52);
  // f16/bf16: f32 accumulation changes the rounded result by about one
  // place at most; f32 accumulates in f32 (K roundings), f64 in another
  // order (the tolerances of test/gpu/prepare.py: "matmul").
  const double bound = t == DType::F16 || t == DType::BF16 ? 2.0 : 32.0;
  double worst = 0;
  int64_t wrong = 0, gaps = 0;
  for (int64_t bi = 0; bi < s.batch; ++bi)
    for (int64_t e = 0; e < strideC; ++e) {
      const size_t at = size_t(bi * strideC + e) * size;
      if (e >= s.m * s.n) { // padding: untouched
        for (size_t byte = 0; byte < size; ++byte)
          gaps += got[at + byte] != kSentinel;
        continue;
      }
      if (std::memcmp(&got[at], &want[at], size) == 0)
        continue;
      if (!isFloat(t)) {
        ++wrong;
        continue;
      }
      const double x = loadFloat(t, &want[at]), y = loadFloat(t, &got[at]);
      const double unit =
          eps * std::max({std::fabs(x), std::fabs(y), scale, 1e-300});
      const double ulps = std::fabs(x - y) / unit;
      worst = std::max(worst, std::isnan(ulps) ? INFINITY : ulps);
      wrong += !(ulps <= bound);
    }
  *ok = wrong == 0 && gaps == 0;
  *detail = std::string(dtypeName(t)) + " batch " + std::to_string(s.batch) +
            " m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " +
            std::to_string(s.k) + (s.batchedB ? "" : " (one B)") +
            (s.padC ? " (C padded)" : "") + ": " +
            (isFloat(t) ? "max " + fmt("%.2f", worst) + " ulp (bound " +
                              fmt("%.0f", bound) + "), "
                        : std::string()) +
            std::to_string(wrong) + " wrong, " + std::to_string(gaps) +
            " padding bytes written";
  return Status();
}

// --- NCCL on one rank --------------------------------------------------------

const ReduceOp kAllOps[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max,
                            ReduceOp::Min, ReduceOp::Avg};

/// Random elements of `t` that are numbers (NaNs could change payload).
std::vector<uint8_t> randomElements(DType t, size_t count) {
  const size_t size = dtypeSize(t);
  std::vector<uint8_t> v(count * size);
  std::uniform_real_distribution<double> u(-100, 100);
  for (size_t i = 0; i < count; ++i) {
    if (isFloat(t))
      storeFloat(t, &v[i * size], u(rng()));
    else if (t == DType::Bool)
      v[i] = static_cast<uint8_t>(rng()() & 1);
    else
      storeInt(t, &v[i * size], rng()());
  }
  return v;
}

Status oneRankCollectives(const cuda::Mesh &mesh, cudaStream_t stream, DType t,
                          bool *ok, std::string *detail) {
  const size_t count = 1003, size = dtypeSize(t);
  const std::vector<uint8_t> in = randomElements(t, count);
  DeviceArray<uint8_t> din, dout, dinplace;
  COCONET_RETURN_IF_ERROR(din.upload(in));
  COCONET_RETURN_IF_ERROR(dout.init(in.size()));
  COCONET_RETURN_IF_ERROR(dinplace.init(in.size()));
  const ncclDataType_t type = cuda::ncclType(t);
  std::vector<std::string> bad;
  int done = 0;
  auto expectCopy = [&](const std::string &what,
                        const DeviceArray<uint8_t> &d) -> Status {
    COCONET_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<uint8_t> got;
    COCONET_RETURN_IF_ERROR(d.download(&got));
    ++done;
    if (got != in)
      bad.push_back(what);
    return Status();
  };
  auto reset = [&](const DeviceArray<uint8_t> &d) -> Status {
    COCONET_CUDA_CHECK(cudaMemsetAsync(d.get(), 0xa5, in.size(), stream));
    return Status();
  };
  for (int axis : {-1, 0}) {
    ncclComm_t comm = mesh.axisComm(axis);
    const std::string where = axis < 0 ? "world" : "axis 0";
    for (ReduceOp op : kAllOps) {
      if (op == ReduceOp::Avg && t == DType::Bool)
        continue; // bool is never averaged
      const std::string name =
          std::string("allreduce(") + reduceOpName(op) + ") on " + where;
      COCONET_RETURN_IF_ERROR(reset(dout));
      COCONET_NCCL_CHECK(ncclAllReduce(din.get(), dout.get(), count, type,
                                       cuda::ncclOp(op), comm, stream));
      COCONET_RETURN_IF_ERROR(expectCopy(name, dout));
      // In place.
      COCONET_CUDA_CHECK(cudaMemcpyAsync(dinplace.get(), din.get(), in.size(),
                                         cudaMemcpyDeviceToDevice, stream));
      COCONET_NCCL_CHECK(ncclAllReduce(dinplace.get(), dinplace.get(), count,
                                       type, cuda::ncclOp(op), comm, stream));
      COCONET_RETURN_IF_ERROR(expectCopy(name + " in place", dinplace));
    }
    COCONET_RETURN_IF_ERROR(reset(dout));
    COCONET_NCCL_CHECK(ncclReduceScatter(din.get(), dout.get(), count, type,
                                         ncclSum, comm, stream));
    COCONET_RETURN_IF_ERROR(expectCopy("reducescatter on " + where, dout));
    COCONET_RETURN_IF_ERROR(reset(dout));
    COCONET_NCCL_CHECK(
        ncclAllGather(din.get(), dout.get(), count, type, comm, stream));
    COCONET_RETURN_IF_ERROR(expectCopy("allgather on " + where, dout));
    COCONET_RETURN_IF_ERROR(reset(dout));
    COCONET_NCCL_CHECK(
        ncclBroadcast(din.get(), dout.get(), count, type, 0, comm, stream));
    COCONET_RETURN_IF_ERROR(expectCopy("broadcast on " + where, dout));
    COCONET_RETURN_IF_ERROR(reset(dout));
    COCONET_NCCL_CHECK(ncclReduce(din.get(), dout.get(), count, type, ncclSum,
                                  0, comm, stream));
    COCONET_RETURN_IF_ERROR(expectCopy("reduce on " + where, dout));
    // Grouped, as the generated code groups adjacent collectives.
    COCONET_RETURN_IF_ERROR(reset(dout));
    COCONET_CUDA_CHECK(cudaMemcpyAsync(dinplace.get(), din.get(), in.size(),
                                       cudaMemcpyDeviceToDevice, stream));
    COCONET_NCCL_CHECK(ncclGroupStart());
    COCONET_NCCL_CHECK(ncclAllReduce(din.get(), dout.get(), count, type,
                                     ncclSum, comm, stream));
    COCONET_NCCL_CHECK(
        ncclAllGather(din.get(), dinplace.get(), count, type, comm, stream));
    COCONET_NCCL_CHECK(ncclGroupEnd());
    COCONET_RETURN_IF_ERROR(expectCopy("grouped allreduce on " + where, dout));
    COCONET_RETURN_IF_ERROR(
        expectCopy("grouped allgather on " + where, dinplace));
  }
  *ok = bad.empty();
  *detail = std::string(dtypeName(t)) + ": " + std::to_string(done) +
            " collectives of " + std::to_string(count) + " elements (" +
            std::to_string(count * size) + " bytes)";
  for (const std::string &b : bad)
    *detail += "; wrong: " + b;
  return Status();
}

// --- The check macros --------------------------------------------------------

__global__ void emptyKernel(int) {}

int gCudaLine = 0, gNcclLine = 0, gCublasLine = 0, gLaunchLine = 0;

Status failingCuda() {
  void *p = nullptr;
  gCudaLine = __LINE__ + 1;
  COCONET_CUDA_CHECK(cudaMalloc(&p, size_t(1) << 62));
  cudaFree(p);
  return Status();
}
Status failingNccl() {
  int n = 0;
  gNcclLine = __LINE__ + 1;
  COCONET_NCCL_CHECK(ncclCommCount(nullptr, &n));
  return Status();
}
Status failingCublas(cublasHandle_t handle) {
  const float one = 1, zero = 0;
  gCublasLine = __LINE__ + 1;
  COCONET_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, -1, 1, 1,
                                   &one, nullptr, 1, nullptr, 1, &zero, nullptr,
                                   1));
  return Status();
}
Status failingLaunch() {
  gLaunchLine = __LINE__ + 1;
  COCONET_CUDA_LAUNCH_CHECK(emptyKernel<<<0, 1>>>(1));
  return Status();
}
Status goodLaunch() {
  COCONET_CUDA_LAUNCH_CHECK(emptyKernel<<<1, 1>>>(1));
  COCONET_CUDA_CHECK(cudaDeviceSynchronize());
  return Status();
}
Status propagates() {
  COCONET_RETURN_IF_ERROR(failingNccl());
  return Status::error(StatusCode::Internal, "not reached");
}

void expectFailure(const std::string &name, const Status &st, StatusCode code,
                   const std::string &call, int line) {
  const std::string where = "runtime_test.cu:" + std::to_string(line) + ")";
  const std::string &m = st.message();
  const bool ok = st.code() == code && m.rfind(call + " failed: ", 0) == 0 &&
                  m.size() >= where.size() &&
                  m.compare(m.size() - where.size(), where.size(), where) == 0;
  report(ok, name,
         "\"" + st.toString() + "\"" +
             (ok ? std::string()
                 : " (expected " + std::string(statusCodeName(code)) + ", \"" +
                       call + " failed: ...(" + where + "\")"));
}

// --- Versions ----------------------------------------------------------------

std::string versionText(int v, int majorScale) {
  return std::to_string(v / majorScale) + "." +
         std::to_string(v % majorScale / 10);
}

int printVersions() {
  int runtime = 0, driver = 0, nccl = 0, devices = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  ncclGetVersion(&nccl);
  int blasMajor = 0, blasMinor = 0, blasPatch = 0;
  cublasGetProperty(MAJOR_VERSION, &blasMajor);
  cublasGetProperty(MINOR_VERSION, &blasMinor);
  cublasGetProperty(PATCH_LEVEL, &blasPatch);
  std::printf("CUDA runtime %s, CUDA driver API %s\n",
              versionText(runtime, 1000).c_str(),
              versionText(driver, 1000).c_str());
  // NCCL >= 2.9 codes versions as major * 10000 + minor * 100 + patch.
  std::printf("NCCL %d.%d.%d (ncclGetVersion %d, header %d.%d.%d)\n",
              nccl / 10000, nccl / 100 % 100, nccl % 100, nccl, NCCL_MAJOR,
              NCCL_MINOR, NCCL_PATCH);
  std::printf("cuBLAS %d.%d.%d\n", blasMajor, blasMinor, blasPatch);
  if (cudaGetDeviceCount(&devices) != cudaSuccess)
    devices = 0;
  for (int d = 0; d < devices; ++d) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
      std::printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", d, prop.name,
                  prop.major, prop.minor, prop.multiProcessorCount,
                  double(prop.totalGlobalMem) / (1 << 30));
  }
  if (devices == 0)
    std::printf("no CUDA device\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--versions")
    return printVersions();
  if (argc > 1) {
    std::fprintf(stderr, "usage: runtime_test [--versions]\n");
    return 2;
  }
  printVersions();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("runtime_test: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
    return 1;

  // --- numeric.h ---
  checkEveryFloat(false, prop.multiProcessorCount);
  checkEveryFloat(true, prop.multiProcessorCount);
  {
    const std::vector<float> in = floatInputs(1 << 21);
    compareMap<NarrowResults>("numeric: f32 -> f16/bf16 (floatToHalfBits, "
                              "roundToHalf, ...), device against host",
                              in, NarrowFromFloat(), NarrowFromFloat());
  }
  {
    const std::vector<double> in = doubleInputs(1 << 20);
    compareMap<NarrowDoubleResults>(
        "numeric: f64 -> f16/bf16 (doubleToHalfBits, roundToHalf, ...), "
        "device against host",
        in, NarrowFromDouble(), NarrowFromDouble());
    compareMap<uint32_t>("numeric: __double2half / __double2bfloat16 (the "
                         "generated reductions' stores) round once, as "
                         "doubleToHalfBits / doubleToBFloat16Bits",
                         in, IntrinsicFromDouble(), NumericFromDouble(),
                         SameOrBothNaN16());
  }
  {
    std::vector<uint16_t> all(0x10000);
    for (uint32_t i = 0; i < 0x10000; ++i)
      all[i] = uint16_t(i);
    compareMap<uint64_t>("numeric: f16/bf16 -> f32, all 65536 inputs, device "
                         "against host",
                         all, Widen(), Widen());
    compareMap<uint64_t>("numeric: __half2float / __bfloat162float against "
                         "halfBitsToFloat / bfloat16BitsToFloat, all inputs",
                         all, IntrinsicWiden(), Widen(), SameOrBothNaN32x2());
  }
  {
    std::vector<Pair<float>> f;
    std::vector<Pair<double>> d;
    const std::vector<float> s = specialFloats();
    for (float a : s)
      for (float b : s) {
        f.push_back({a, b});
        d.push_back({a, b});
      }
    std::uniform_real_distribution<double> u(-1, 1);
    std::uniform_int_distribution<int> e(-140, 130);
    for (int i = 0; i < (1 << 20); ++i) {
      f.push_back(
          {floatFromBits(uint32_t(rng()())), floatFromBits(uint32_t(rng()()))});
      f.push_back({float(std::ldexp(u(rng()), e(rng()))),
                   float(std::ldexp(u(rng()), e(rng())))});
      d.push_back({doubleFromBits(rng()()), doubleFromBits(rng()())});
      d.push_back({std::ldexp(u(rng()), 8 * e(rng())),
                   std::ldexp(u(rng()), 8 * e(rng()))});
    }
    compareMap<Arith32>("ieee: __fadd_rn/__fsub_rn/__fmul_rn/__fdiv_rn/"
                        "__fsqrt_rn against the host, subnormals included",
                        f, DeviceArith32(), HostArith32(),
                        SameArith<float, Arith32>());
    compareMap<Arith64>("ieee: __dadd_rn/__dsub_rn/__dmul_rn/__ddiv_rn/"
                        "__dsqrt_rn against the host",
                        d, DeviceArith64(), HostArith64(),
                        SameArith<double, Arith64>());
  }
  // The bounds the GPU check's tolerances assume (test/gpu/prepare.py:
  // "transcendental" 16 and "pow" 32 in f32, where pow's 32 also covers
  // the cancellation in 1 - beta^t).
  for (MathFn fn :
       {MathFn::Exp, MathFn::Log, MathFn::Tanh, MathFn::Erf, MathFn::Pow}) {
    checkMath<float>(fn, 16);
    checkMath<double>(fn, 16);
  }
  compareMap<MaxMin<float>>("numeric: maxNumber/minNumber (float), device "
                            "against host",
                            maxMinInputs<float>(), MaxMinOf<float>(),
                            MaxMinOf<float>());
  compareMap<MaxMin<double>>("numeric: maxNumber/minNumber (double), device "
                             "against host",
                             maxMinInputs<double>(), MaxMinOf<double>(),
                             MaxMinOf<double>());
  compareMap<IntResults<int32_t>>(
      "numeric: wrapAdd/Sub/Mul/Neg, intDiv, intPow, intAbs, intRelu (i32), "
      "device against host",
      intInputs<int32_t>(), IntOps<int32_t>(), IntOps<int32_t>());
  compareMap<IntResults<int64_t>>(
      "numeric: wrapAdd/Sub/Mul/Neg, intDiv, intPow, intAbs, intRelu (i64), "
      "device against host",
      intInputs<int64_t>(), IntOps<int64_t>(), IntOps<int64_t>());
  compareMap<IntResults<uint64_t>>(
      "numeric: wrapAdd/Sub/Mul/Neg, intDiv, intPow, intAbs, intRelu (u64), "
      "device against host",
      intInputs<uint64_t>(), IntOps<uint64_t>(), IntOps<uint64_t>());
  compareMap<FloatToInts>("numeric: floatToInt<i32/i64/u64>, device against "
                          "host",
                          floatToIntInputs(), FloatToIntsOf(), FloatToIntsOf());
  {
    // Random123's kat_vectors (as test/unit/support/PhiloxTest.cpp).
    const std::vector<Kat> kats = {
        {{{0, 0, 0, 0}}, {{0, 0}}},
        {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
         {{0xffffffffu, 0xffffffffu}}},
        {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
         {{0xa4093822u, 0x299f31d0u}}}};
    const PhiloxCounter want[] = {
        {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}};
    check("numeric: philox4x32_10 on the device: Random123's known answers",
          [&](bool *ok, std::string *detail) -> Status {
            std::vector<PhiloxCounter> got;
            COCONET_RETURN_IF_ERROR(
                onDevice<PhiloxCounter>(kats, KatOf(), &got));
            int right = 0;
            for (size_t i = 0; i < kats.size(); ++i)
              right += std::memcmp(&got[i], &want[i], sizeof want[i]) == 0;
            *ok = right == 3;
            *detail = std::to_string(right) + " of 3 vectors";
            return Status();
          });
    std::vector<PhiloxIn> in;
    std::uniform_real_distribution<float> p(0, 1);
    for (uint64_t seed :
         {0ull, 1ull, 7ull, 0xffffffffull, 0x100000000ull, ~0ull})
      for (uint64_t index = 0; index < 4096; ++index)
        in.push_back({seed, index, index % 3, index % 5 ? p(rng()) : 0.5f, 0});
    for (int i = 0; i < (1 << 20); ++i) {
      const int which = i % 4;
      const float prob = which == 0 ? 0.0f : which == 1 ? 1.0f : p(rng());
      in.push_back({rng()(), rng()(), rng()() >> (i % 64), prob, 0});
    }
    compareMap<PhiloxOut>("numeric: philox4x32_10, dropoutBits/Uniform/Keep, "
                          "uniformInput(Bits), device against host",
                          in, PhiloxOf(), PhiloxOf());
  }

  // --- The runtime: communicator, mesh, collectives, matmul, macros ---
  std::unique_ptr<cuda::Communicator> world;
  check("cuda: Communicator::single", [&](bool *ok, std::string *detail) {
    COCONET_RETURN_IF_ERROR(cuda::Communicator::single(&world));
    *ok = world && world->rank() == 0 && world->size() == 1 && world->comm();
    *detail = "rank " + std::to_string(world ? world->rank() : -1) + " of " +
              std::to_string(world ? world->size() : -1);
    return Status();
  });
  if (!world) {
    std::printf("runtime_test: %d checks, %d failed (no communicator: "
                "stopped)\n",
                gChecks, gFailed);
    return 1;
  }
  check("cuda: Communicator::wrap of the world",
        [&](bool *ok, std::string *detail) -> Status {
          {
            cuda::Communicator wrapped =
                cuda::Communicator::wrap(world->comm());
            *ok = wrapped.rank() == 0 && wrapped.size() == 1 &&
                  wrapped.comm() == world->comm();
          }
          // The wrapper did not destroy the world's communicator.
          int n = 0;
          COCONET_NCCL_CHECK(ncclCommCount(world->comm(), &n));
          *ok = *ok && n == 1;
          *detail = "rank 0 of 1, the world still usable after it";
          return Status();
        });
  std::unique_ptr<cuda::Mesh> mesh;
  check("cuda: Mesh::create with one axis of size 1",
        [&](bool *ok, std::string *detail) -> Status {
          COCONET_RETURN_IF_ERROR(cuda::Mesh::create(*world, {1}, &mesh));
          *ok = mesh->numAxes() == 1 && mesh->axisSize(0) == 1 &&
                mesh->coord(0) == 0 && mesh->rank() == 0 && mesh->size() == 1 &&
                mesh->axisComm(0) == world->comm() &&
                mesh->axisComm(-1) == world->comm();
          *detail = "1 axis, coordinate 0, the axis's communicator is the "
                    "world's";
          return Status();
        });
  check("cuda: Mesh::create with two axes of size 1",
        [&](bool *ok, std::string *detail) -> Status {
          std::unique_ptr<cuda::Mesh> two;
          COCONET_RETURN_IF_ERROR(cuda::Mesh::create(*world, {1, 1}, &two));
          *ok = two->numAxes() == 2 && two->coord(0) == 0 &&
                two->coord(1) == 0 && two->axisComm(0) && two->axisComm(1);
          *detail = "2 axes";
          return Status();
        });
  check("cuda: Mesh::create refuses sizes that do not fit the world",
        [&](bool *ok, std::string *detail) -> Status {
          std::unique_ptr<cuda::Mesh> m;
          const Status two = cuda::Mesh::create(*world, {2}, &m);
          const Status zero = cuda::Mesh::create(*world, {0}, &m);
          const Status product = cuda::Mesh::create(*world, {1, 2}, &m);
          *ok = two.code() == StatusCode::InvalidArgument &&
                zero.code() == StatusCode::InvalidArgument &&
                product.code() == StatusCode::InvalidArgument;
          *detail = "{2}: \"" + two.toString() + "\"; {0}: \"" +
                    zero.toString() + "\"; {1, 2}: \"" + product.toString() +
                    "\"";
          return Status();
        });

  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  check("cuda: a stream and a cuBLAS handle bound to it",
        [&](bool *ok, std::string *detail) -> Status {
          COCONET_CUDA_CHECK(cudaStreamCreate(&stream));
          COCONET_CUBLAS_CHECK(cublasCreate(&handle));
          COCONET_CUBLAS_CHECK(cublasSetStream(handle, stream));
          *ok = true;
          *detail = "created";
          return Status();
        });
  if (!stream || !handle) {
    std::printf("runtime_test: %d checks, %d failed (stopped)\n", gChecks,
                gFailed);
    return 1;
  }
  if (mesh)
    for (DType t : kAllTypes)
      check(std::string("nccl: one-rank collectives return their input (") +
                dtypeName(t) + ")",
            [&](bool *ok, std::string *detail) {
              return oneRankCollectives(*mesh, stream, t, ok, detail);
            });

  const MatmulShape shapes[] = {
      {1, 67, 33, 45, true, 0}, {3, 5, 7, 129, false, 0},
      {2, 16, 16, 16, true, 0}, {2, 9, 10, 11, true, 7},
      {2, 3, 4, 0, true, 5},    {1, 1, 1, 1, true, 0}};
  for (DType t : kAllTypes)
    for (const MatmulShape &s : shapes)
      check(std::string("cuda: matmul ") + dtypeName(t) +
                " against the simulator's reference",
            [&](bool *ok, std::string *detail) {
              return checkMatmul(handle, stream, t, s, ok, detail);
            });
  check("cuda: matmul refuses negative and too large extents",
        [&](bool *ok, std::string *detail) -> Status {
          const Status negative =
              cuda::matmul(handle, stream, DType::F32, 1, -1, 1, 1, nullptr, 0,
                           nullptr, 0, nullptr, 0);
          const Status large =
              cuda::matmul(handle, stream, DType::F32, 1, int64_t(1) << 32, 1,
                           1, nullptr, 0, nullptr, 0, nullptr, 0);
          *ok = negative.code() == StatusCode::InvalidArgument &&
                large.code() == StatusCode::InvalidArgument;
          *detail =
              "\"" + negative.toString() + "\"; \"" + large.toString() + "\"";
          return Status();
        });
  check("cuda: defaultAllocator allocates, frees, and 0 bytes works",
        [&](bool *ok, std::string *detail) -> Status {
          cuda::Allocator &a = cuda::defaultAllocator();
          void *zero = nullptr, *mib = nullptr;
          COCONET_RETURN_IF_ERROR(a.allocate(0, &zero));
          COCONET_RETURN_IF_ERROR(a.allocate(1 << 20, &mib));
          COCONET_CUDA_CHECK(cudaMemset(mib, 1, 1 << 20));
          a.deallocate(zero, 0);
          a.deallocate(mib, 1 << 20);
          *ok = zero && mib;
          *detail = "0 bytes and 1 MiB";
          return Status();
        });
  check("cuda: ncclType and ncclOp map every element type and operator",
        [&](bool *ok, std::string *detail) -> Status {
          *ok = cuda::ncclType(DType::F16) == ncclFloat16 &&
                cuda::ncclType(DType::BF16) == ncclBfloat16 &&
                cuda::ncclType(DType::F32) == ncclFloat32 &&
                cuda::ncclType(DType::F64) == ncclFloat64 &&
                cuda::ncclType(DType::I32) == ncclInt32 &&
                cuda::ncclType(DType::I64) == ncclInt64 &&
                cuda::ncclType(DType::U64) == ncclUint64 &&
                cuda::ncclType(DType::Bool) == ncclUint8 &&
                cuda::ncclOp(ReduceOp::Sum) == ncclSum &&
                cuda::ncclOp(ReduceOp::Prod) == ncclProd &&
                cuda::ncclOp(ReduceOp::Max) == ncclMax &&
                cuda::ncclOp(ReduceOp::Min) == ncclMin &&
                cuda::ncclOp(ReduceOp::Avg) == ncclAvg;
          *detail = "8 types, 5 operators";
          return Status();
        });

  // Each failing call runs before its line is read (the order in which a
  // call's arguments are evaluated is unspecified: the first GPU run read
  // the lines as 0).
  const Status cudaFailure = failingCuda();
  expectFailure("macros: COCONET_CUDA_CHECK names the failed call", cudaFailure,
                StatusCode::CudaError, "cudaMalloc(...)", gCudaLine);
  cudaGetLastError(); // the allocation failure is not sticky; clear it
  const Status ncclFailure = failingNccl();
  expectFailure("macros: COCONET_NCCL_CHECK names the failed call", ncclFailure,
                StatusCode::NcclError, "ncclCommCount(...)", gNcclLine);
  const Status cublasFailure = failingCublas(handle);
  expectFailure("macros: COCONET_CUBLAS_CHECK names the failed call",
                cublasFailure, StatusCode::CublasError, "cublasSgemm(...)",
                gCublasLine);
  const Status launchFailure = failingLaunch();
  expectFailure("macros: COCONET_CUDA_LAUNCH_CHECK names the kernel",
                launchFailure, StatusCode::CudaError,
                "emptyKernel<<<...>>>(...)", gLaunchLine);
  cudaGetLastError();
  const Status propagated = propagates();
  expectFailure("macros: COCONET_RETURN_IF_ERROR returns the failed Status",
                propagated, StatusCode::NcclError, "ncclCommCount(...)",
                gNcclLine);
  {
    const Status good = goodLaunch();
    report(good.ok() && good.toString() == "ok",
           "macros: a good launch and call return ok", good.toString());
  }

  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  mesh.reset();
  world.reset();
  const cudaError_t last = cudaDeviceSynchronize();
  report(last == cudaSuccess, "cuda: no error left on the device",
         cudaGetErrorString(last));
  std::printf("runtime_test: %d checks, %d failed\n", gChecks, gFailed);
  return gFailed ? 1 : 0;
}
