//===- matmul.cpp - the simulator's matmul at the speed of the cores -----===//
//
// C = A x B exactly as the simulator computes it (compiler/sim/Simulator.cpp):
// every element of C starts from +0, adds its K products in ascending k
// order in f64 (wrapping 64-bit integers), and rounds once to C's type.
//
// Floats. Operands are widened to f64 once, into packed panels, and a
// register-blocked micro-kernel keeps an MR x NR tile of C's f64 sums in
// vector registers while it walks k: each step broadcasts MR values of A
// and multiplies them with NR values of B. Every sum still takes its
// products one at a time in k order, so the rounding is the simulator's.
// Blocking over k (panels of kKC) keeps the order too: a tile's sums go to
// an f64 buffer between panels, never to C's narrower type.
//   - f16, bf16, f32: the product of two such values is exact in f64 (at most
//     2 x 24 significant bits), so a fused multiply-add rounds exactly as the
//     simulator's multiply-then-add does; the kernel uses FMA.
//   - f64: the product rounds, so the kernel multiplies and adds separately
//     (this file is built with -ffp-contract=off). On CPUs whose adds and
//     multiplies issue to different pipes (AMD Zen 4) this costs little.
// Integers. Wrapping addition is associative, so the order is free: each
// row of C is accumulated in 64 bits over k with the loop over columns
// vectorised.
//
// Work is split over OpenMP threads by blocks of C (a batch, a range of rows,
// a range of columns); every element is computed by one thread, so the
// result does not depend on the number of threads.
//
//===----------------------------------------------------------------------===//

#include "coconet/cpu/convert.h"
#include "coconet/cpu/runtime.h"

#include "../element.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <omp.h>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

namespace coconet::rt::cpu {

namespace {

using detail::visitDType;

// --- Vectors of doubles and the register blocking ----------------------------

#if defined(__AVX512F__)
constexpr int kLanes = 8;
constexpr int kMR = 8; // rows of a micro-tile (32 registers: 24 sums)
constexpr int kNV = 3; // vectors of a micro-tile's row
#elif defined(__AVX__)
constexpr int kLanes = 4;
constexpr int kMR = 4; // 16 registers: 12 sums
constexpr int kNV = 3;
#else
constexpr int kLanes = 2;
constexpr int kMR = 4;
constexpr int kNV = 3;
#endif
constexpr int kNR = kLanes * kNV; // columns of a micro-tile

typedef double Vec __attribute__((vector_size(kLanes * sizeof(double))));

/// Panel sizes: kKC steps of k per panel (a packed A micro-panel, kMR x kKC,
/// stays in the first-level cache); kNC columns of B per packed block (kKC x
/// kNC doubles, in the second-level cache); a task covers at most kRows rows.
constexpr int64_t kKC = 256;
constexpr int64_t kNC = 480;   // a multiple of kNR for 8, 4 and 2 lanes
constexpr int64_t kRows = 768; // a multiple of kMR
static_assert(kNC % kNR == 0 && kRows % kMR == 0);

inline Vec loadVec(const double *p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storeVec(double *p, Vec v) { std::memcpy(p, &v, sizeof v); }
inline Vec broadcast(double x) {
  Vec v;
  for (int i = 0; i < kLanes; ++i)
    v[i] = x;
  return v;
}

/// a * b + c with one rounding. Only called where a * b is exact, so it
/// equals the separately rounded multiply and add.
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
  return a * b + c; // two roundings, the second the only inexact one
#endif
}

/// sums[kMR][kNR] (row stride kNR) += the kc products of the packed panels
/// ap (kc x kMR, k-major) and bp (kc x kNR, k-major), each sum in k order.
/// kFused: the products are exact (f16, bf16, f32 operands).
template <bool kFused>
void microKernel(int64_t kc, const double *__restrict ap,
                 const double *__restrict bp, double *__restrict sums) {
  Vec c[kMR][kNV];
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v)
      c[r][v] = loadVec(sums + r * kNR + v * kLanes);
  for (int64_t k = 0; k < kc; ++k) {
    Vec b[kNV];
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v)
      b[v] = loadVec(bp + k * kNR + v * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      const Vec a = broadcast(ap[k * kMR + r]);
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) {
        if constexpr (kFused)
          c[r][v] = fusedMulAdd(a, b[v], c[r][v]);
        else
          c[r][v] = c[r][v] + a * b[v];
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v)
      storeVec(sums + r * kNR + v * kLanes, c[r][v]);
}

// --- Buffers -----------------------------------------------------------------

/// A growing, 64-byte aligned array of doubles, one per thread and use, kept
/// between calls (a call's first touch of fresh pages would cost more than
/// small products take).
class Scratch {
public:
  ~Scratch() { std::free(data_); }
  double *get(int64_t count) {
    if (count > capacity_) {
      std::free(data_);
      const size_t bytes = (static_cast<size_t>(count) * sizeof(double) + 63) &
                           ~static_cast<size_t>(63);
      data_ = static_cast<double *>(std::aligned_alloc(64, bytes));
      capacity_ = data_ ? count : 0;
    }
    return data_;
  }

private:
  double *data_ = nullptr;
  int64_t capacity_ = 0;
};

// --- Widening into packed panels ---------------------------------------------

/// out[0, n) = in[0, n) as doubles; `wide` is room for n floats.
template <typename T>
void widenRow(const T *in, int64_t n, double *out, float *wide) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    widen(in, wide, n);
    for (int64_t i = 0; i < n; ++i)
      out[i] = wide[i];
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<double>(in[i]);
  }
}

/// Packs rows [0, kc) and columns [0, nc) of b (row stride ldb) into panels
/// of kNR columns, each kc x kNR and k-major; columns past nc are zero.
template <typename T>
void packB(const T *b, int64_t ldb, int64_t kc, int64_t nc, double *bp,
           double *row, float *wide) {
  const int64_t panels = (nc + kNR - 1) / kNR;
  for (int64_t k = 0; k < kc; ++k) {
    widenRow(b + k * ldb, nc, row, wide);
    for (int64_t p = 0; p < panels; ++p) {
      double *to = bp + (p * kc + k) * kNR;
      const int64_t width = std::min<int64_t>(kNR, nc - p * kNR);
      std::memcpy(to, row + p * kNR, static_cast<size_t>(width) * 8);
      std::fill(to + width, to + kNR, 0.0);
    }
  }
}

/// Packs rows [0, mc) and columns [0, kc) of a (row stride lda) into panels
/// of kMR rows, each kc x kMR and k-major; rows past mc are zero.
template <typename T>
void packA(const T *a, int64_t lda, int64_t mc, int64_t kc, double *ap,
           double *row, float *wide) {
  const int64_t panels = (mc + kMR - 1) / kMR;
  for (int64_t q = 0; q < panels; ++q) {
    double *panel = ap + q * kc * kMR;
    for (int r = 0; r < kMR; ++r) {
      const int64_t i = q * kMR + r;
      if (i < mc) {
        widenRow(a + i * lda, kc, row, wide);
        for (int64_t k = 0; k < kc; ++k)
          panel[k * kMR + r] = row[k];
      } else {
        for (int64_t k = 0; k < kc; ++k)
          panel[k * kMR + r] = 0.0;
      }
    }
  }
}

// --- Floats ------------------------------------------------------------------

/// One task: rows [i0, i0 + mc) and columns [j0, j0 + nc) of one batch's C.
template <typename Traits>
void floatBlock(int64_t k, int64_t n, const typename Traits::Storage *a,
                const typename Traits::Storage *b, typename Traits::Storage *c,
                int64_t i0, int64_t mc, int64_t j0, int64_t nc) {
  constexpr bool kFused = !std::is_same_v<typename Traits::Storage, double>;
  thread_local Scratch sumsBuffer, aBuffer, bBuffer, rowBuffer, wideBuffer;
  const int64_t rowPanels = (mc + kMR - 1) / kMR;
  const int64_t colPanels = (nc + kNR - 1) / kNR;
  // The block's sums, as micro-tiles: tile (q, p) at (q * colPanels + p) *
  // kMR * kNR, each kMR x kNR with row stride kNR.
  const int64_t tile = int64_t{kMR} * kNR;
  double *sums = sumsBuffer.get(rowPanels * colPanels * tile);
  std::fill(sums, sums + rowPanels * colPanels * tile, 0.0);
  const int64_t kcMax = std::min(k, kKC);
  double *ap = aBuffer.get(std::max<int64_t>(1, rowPanels * kMR * kcMax));
  double *bp = bBuffer.get(std::max<int64_t>(1, colPanels * kNR * kcMax));
  double *row = rowBuffer.get(std::max(kcMax, nc));
  float *wide = reinterpret_cast<float *>(wideBuffer.get(std::max(kcMax, nc)));
  for (int64_t pc = 0; pc < k; pc += kKC) {
    const int64_t kc = std::min(kKC, k - pc);
    packB(b + pc * n + j0, n, kc, nc, bp, row, wide);
    packA(a + i0 * k + pc, k, mc, kc, ap, row, wide);
    for (int64_t q = 0; q < rowPanels; ++q)
      for (int64_t p = 0; p < colPanels; ++p)
        microKernel<kFused>(kc, ap + q * kc * kMR, bp + p * kc * kNR,
                            sums + (q * colPanels + p) * tile);
  }
  // Round once, into C: a micro-tile's row at a time (contiguous on both
  // sides, so the conversion vectorises).
  for (int64_t i = 0; i < mc; ++i) {
    const int64_t q = i / kMR, r = i % kMR;
    typename Traits::Storage *out = c + (i0 + i) * n + j0;
    for (int64_t p = 0; p < colPanels; ++p) {
      const double *from = sums + (q * colPanels + p) * tile + r * kNR;
      typename Traits::Storage *to = out + p * kNR;
      const int64_t width = std::min<int64_t>(kNR, nc - p * kNR);
#pragma omp simd
      for (int64_t s = 0; s < width; ++s)
        to[s] = Traits::store(from[s]);
    }
  }
}

// --- Integers ----------------------------------------------------------------

/// Rows [i0, i0 + mc) and columns [j0, j0 + nc) of one batch's C.
template <typename Traits>
void integerBlock(int64_t k, int64_t n, const typename Traits::Storage *a,
                  const typename Traits::Storage *b,
                  typename Traits::Storage *c, int64_t i0, int64_t mc,
                  int64_t j0, int64_t nc) {
  thread_local Scratch rowBuffer;
  uint64_t *sums = reinterpret_cast<uint64_t *>(rowBuffer.get(nc));
  for (int64_t i = i0; i < i0 + mc; ++i) {
    std::fill(sums, sums + nc, uint64_t{0});
    for (int64_t kk = 0; kk < k; ++kk) {
      const uint64_t x = Traits::load(a[i * k + kk]);
      const typename Traits::Storage *from = b + kk * n + j0;
#pragma omp simd
      for (int64_t j = 0; j < nc; ++j)
        sums[j] += x * Traits::load(from[j]);
    }
    for (int64_t j = 0; j < nc; ++j)
      c[i * n + j0 + j] = Traits::store(sums[j]);
  }
}

int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/// Blocks of columns of C: nearly equal, whole micro-tiles, at most kNC.
int64_t columnBlocks(int64_t n) { return (n + kNC - 1) / kNC; }

/// Blocks of rows of one batch of C: nearly equal, whole micro-tiles, at
/// most kRows, halved while there are fewer than two tasks per thread.
int64_t rowBlockSize(int64_t batch, int64_t m, int64_t n, int64_t threads) {
  const int64_t colBlocks = columnBlocks(n);
  int64_t rowBlocks = (m + kRows - 1) / kRows;
  while (batch * colBlocks * rowBlocks < 2 * threads && rowBlocks * kMR < m)
    rowBlocks *= 2;
  return roundUp((m + rowBlocks - 1) / rowBlocks, kMR);
}

template <typename Traits>
void matmulTyped(int64_t batch, int64_t m, int64_t n, int64_t k,
                 const typename Traits::Storage *a, int64_t strideA,
                 const typename Traits::Storage *b, int64_t strideB,
                 typename Traits::Storage *c, int64_t strideC) {
  // Tasks: (batch, row block, column block), blocks of nearly equal size
  // (whole micro-tiles), at most kRows x kNC, rows split further while
  // there are fewer than two tasks per thread.
  const int64_t colBlocks = columnBlocks(n);
  const int64_t colBlock = roundUp((n + colBlocks - 1) / colBlocks, kNR);
  const int64_t rowBlock = rowBlockSize(batch, m, n, omp_get_max_threads());
  const int64_t rowBlocks = (m + rowBlock - 1) / rowBlock;
  const int64_t perBatch = rowBlocks * colBlocks;
  const int64_t tasks = batch * perBatch;
#pragma omp parallel for schedule(dynamic, 1) if (tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t bi = t / perBatch, rest = t % perBatch;
    const int64_t i0 = (rest / colBlocks) * rowBlock;
    const int64_t j0 = (rest % colBlocks) * colBlock;
    const int64_t mc = std::min(rowBlock, m - i0),
                  nc = std::min(colBlock, n - j0);
    const typename Traits::Storage *ab = a + bi * strideA;
    const typename Traits::Storage *bb = b + bi * strideB;
    typename Traits::Storage *cb = c + bi * strideC;
    if constexpr (Traits::kFloat)
      floatBlock<Traits>(k, n, ab, bb, cb, i0, mc, j0, nc);
    else
      integerBlock<Traits>(k, n, ab, bb, cb, i0, mc, j0, nc);
  }
}

} // namespace

int64_t matmulRowBlocks(int64_t batch, int64_t m, int64_t n, int64_t threads) {
  if (batch < 1 || m < 1 || n < 1)
    return 0;
  const int64_t rowBlock =
      rowBlockSize(batch, m, n, std::max<int64_t>(threads, 1));
  return (m + rowBlock - 1) / rowBlock;
}

void matmul(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
            const void *a, int64_t strideA, const void *b, int64_t strideB,
            void *c, int64_t strideC) {
  if (batch < 1 || m < 1 || n < 1 || k < 0)
    return;
  visitDType(dtype, [&](auto traits) {
    using Traits = decltype(traits);
    using T = typename Traits::Storage;
    matmulTyped<Traits>(batch, m, n, k, static_cast<const T *>(a), strideA,
                        static_cast<const T *>(b), strideB, static_cast<T *>(c),
                        strideC);
  });
}

} // namespace coconet::rt::cpu
