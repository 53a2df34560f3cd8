//===- matmul_cpu.cpp - the exact matmul against the cores' FMA peak ------===//
//
// tools/bench-matmul.sh builds and runs this (and times OpenBLAS through
// numpy beside it). On the calling process's OpenMP threads it measures:
//
//   peak  fma       the cores' f64 fused multiply-add rate: independent
//                   chains of vector FMAs (the widest vectors this build
//                   targets), in GFLOP/s (2 flops per lane)
//         mul+add   the same with a separate multiply and add (what an
//                   exact f64 product-sum needs), in GFLOP/s
//   matmul DTYPE M N K [BATCH]   coconet::rt::cpu::matmul: the median time
//                   of --repeats calls after one warm-up, in GFLOP/s
//                   (2 M N K BATCH flops)
//   naive  DTYPE M N K [BATCH]   the loop the runtime had before (every
//                   element's K products summed in order, one element at a
//                   time), on --naive shapes only; also checks that its
//                   result equals matmul's bit for bit (exit status 1
//                   otherwise)
//
// Inputs are uniform in [-1, 1) (f64: all 53 bits), rounded to the element
// type, so sums depend on their order. test/cpu-arch/matmul.sh builds this
// for other instruction sets and runs the --naive checks.
//
//   matmul_cpu [--repeats N] [--shape M,N,K[,BATCH]]... [--naive M,N,K]...
//              [--dtypes f64,f32,bf16,f16] [--no-peak]
//
// prints CSV lines `what,dtype,m,n,k,batch,threads,seconds,gflops`.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/runtime.h"
#include "coconet/numeric.h"
#include "coconet/types.h"

#include <omp.h>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace rt = coconet::rt;

namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 8;
#elif defined(__AVX__)
constexpr int kLanes = 4;
#else
constexpr int kLanes = 2;
#endif
typedef double Vec __attribute__((vector_size(kLanes * sizeof(double))));

inline Vec fusedMulAdd(Vec a, Vec b, Vec c) {
#if defined(__AVX512F__)
  return reinterpret_cast<Vec>(_mm512_fmadd_pd(reinterpret_cast<__m512d>(a),
                                               reinterpret_cast<__m512d>(b),
                                               reinterpret_cast<__m512d>(c)));
#elif defined(__AVX__) && defined(__FMA__)
  return reinterpret_cast<Vec>(_mm256_fmadd_pd(reinterpret_cast<__m256d>(a),
                                               reinterpret_cast<__m256d>(b),
                                               reinterpret_cast<__m256d>(c)));
#else
  return a * b + c;
#endif
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// 12 independent chains of `steps` vector operations on every thread;
/// returns flops per second. fused: FMA, else a multiply and an add.
template <bool kFused> double peak(int64_t steps) {
  double seconds = 1e30;
  for (int attempt = 0; attempt < 3; ++attempt) {
    double sink = 0;
    const double start = now();
#pragma omp parallel reduction(+ : sink)
    {
      Vec c[12], a, b;
      for (int i = 0; i < kLanes; ++i) {
        a[i] = 1.0 + 1e-9 * omp_get_thread_num();
        b[i] = 1.0 - 1e-12;
      }
      for (auto &v : c)
        v = a;
      for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
        for (auto &v : c) {
          if constexpr (kFused)
            v = fusedMulAdd(v, b, a);
          else
            v = v * b + a; // this file is built with -ffp-contract=off
        }
      }
      for (auto &v : c)
        for (int i = 0; i < kLanes; ++i)
          sink += v[i];
    }
    seconds = std::min(seconds, now() - start);
    if (sink == 42)
      std::printf("#\n");
  }
  return 2.0 * 12 * kLanes * steps * omp_get_max_threads() / seconds;
}

template <typename T> T fromDouble(double v) {
  if constexpr (std::is_same_v<T, rt::Half>)
    return rt::Half{rt::doubleToHalfBits(v)};
  else if constexpr (std::is_same_v<T, rt::BFloat16>)
    return rt::BFloat16{rt::doubleToBFloat16Bits(v)};
  else
    return static_cast<T>(v);
}
template <typename T> double toDouble(T v) {
  if constexpr (std::is_same_v<T, rt::Half>)
    return rt::halfBitsToFloat(v.bits);
  else if constexpr (std::is_same_v<T, rt::BFloat16>)
    return rt::bfloat16BitsToFloat(v.bits);
  else
    return static_cast<double>(v);
}

/// The runtime's matmul before it was blocked: one element at a time.
template <typename T>
void naive(int64_t m, int64_t n, int64_t k, const T *a, const T *b, T *c) {
#pragma omp parallel for
  for (int64_t index = 0; index < m * n; ++index) {
    const int64_t i = index / n, j = index % n;
    double sum = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      sum += toDouble(a[i * k + kk]) * toDouble(b[kk * n + j]);
    c[index] = fromDouble<T>(sum);
  }
}

struct Shape {
  int64_t m, n, k, batch = 1;
};

template <typename T>
int run(rt::DType dtype, const char *name, const Shape &s, int repeats,
        bool withNaive) {
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<T> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n),
      c(s.batch * s.m * s.n), d(s.m * s.n);
  for (auto &x : a)
    x = fromDouble<T>(uniform(random));
  for (auto &x : b)
    x = fromDouble<T>(uniform(random));
  const double flops = 2.0 * s.m * s.n * s.k * s.batch;
  const int threads = omp_get_max_threads();
  std::vector<double> times;
  for (int r = 0; r <= repeats; ++r) {
    const double start = now();
    rt::cpu::matmul(dtype, s.batch, s.m, s.n, s.k, a.data(), s.m * s.k,
                    b.data(), s.batch > 1 ? s.k * s.n : 0, c.data(), s.m * s.n);
    if (r > 0)
      times.push_back(now() - start);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("matmul,%s,%lld,%lld,%lld,%lld,%d,%.6g,%.4g\n", name,
              (long long)s.m, (long long)s.n, (long long)s.k,
              (long long)s.batch, threads, median, flops / median / 1e9);
  if (!withNaive)
    return 0;
  const double start = now();
  naive(s.m, s.n, s.k, a.data(), b.data(), d.data());
  const double seconds = now() - start;
  std::printf("naive,%s,%lld,%lld,%lld,1,%d,%.6g,%.4g\n", name, (long long)s.m,
              (long long)s.n, (long long)s.k, threads, seconds,
              2.0 * s.m * s.n * s.k / seconds / 1e9);
  if (std::memcmp(c.data(), d.data(), d.size() * sizeof(T)) != 0) {
    std::fprintf(stderr,
                 "matmul_cpu: %s %lldx%lldx%lld differs from the "
                 "naive loop\n",
                 name, (long long)s.m, (long long)s.n, (long long)s.k);
    return 1;
  }
  return 0;
}

bool parseShape(const char *text, Shape &s) {
  long long v[4] = {0, 0, 0, 1};
  const int got =
      std::sscanf(text, "%lld,%lld,%lld,%lld", &v[0], &v[1], &v[2], &v[3]);
  if (got < 3 || v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1)
    return false;
  s = {v[0], v[1], v[2], v[3]};
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int repeats = 5;
  std::vector<Shape> shapes, naiveShapes;
  std::string dtypes = "f64,f32,bf16,f16";
  bool withPeak = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    Shape s;
    if (arg == "--repeats" && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--shape" && i + 1 < argc && parseShape(argv[++i], s))
      shapes.push_back(s);
    else if (arg == "--naive" && i + 1 < argc && parseShape(argv[++i], s))
      naiveShapes.push_back(s);
    else if (arg == "--dtypes" && i + 1 < argc)
      dtypes = argv[++i];
    else if (arg == "--no-peak")
      withPeak = false;
    else {
      std::fprintf(
          stderr,
          "usage: matmul_cpu [--repeats N] [--shape M,N,K[,BATCH]]... "
          "[--naive M,N,K]... [--dtypes f64,f32,bf16,f16] [--no-peak]\n");
      return 2;
    }
  }
  std::printf("what,dtype,m,n,k,batch,threads,seconds,gflops\n");
  const int threads = omp_get_max_threads();
  const int64_t steps = 20'000'000;
  if (withPeak) {
    std::printf("peak,fma,0,0,0,0,%d,0,%.4g\n", threads,
                peak<true>(steps) / 1e9);
    std::printf("peak,mul+add,0,0,0,0,%d,0,%.4g\n", threads,
                peak<false>(steps) / 1e9);
  }
  int status = 0;
  auto each = [&](const Shape &s, bool withNaive) {
    for (size_t at = 0; at <= dtypes.size();) {
      size_t end = dtypes.find(',', at);
      if (end == std::string::npos)
        end = dtypes.size();
      const std::string d = dtypes.substr(at, end - at);
      at = end + 1;
      if (d == "f64")
        status |= run<double>(rt::DType::F64, "f64", s, repeats, withNaive);
      else if (d == "f32")
        status |= run<float>(rt::DType::F32, "f32", s, repeats, withNaive);
      else if (d == "bf16")
        status |=
            run<rt::BFloat16>(rt::DType::BF16, "bf16", s, repeats, withNaive);
      else if (d == "f16")
        status |= run<rt::Half>(rt::DType::F16, "f16", s, repeats, withNaive);
      else {
        std::fprintf(stderr, "matmul_cpu: unknown dtype %s\n", d.c_str());
        status = 2;
        return;
      }
      std::fflush(stdout);
    }
  };
  for (const Shape &s : shapes)
    each(s, false);
  for (const Shape &s : naiveShapes)
    each(s, true);
  return status;
}
