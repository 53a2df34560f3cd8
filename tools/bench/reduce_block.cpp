//===- reduce_block.cpp - the CPU cost of the reduction order's block size
//-===//
//
// How the block size B of the order of a reduction (coconet/reduce_order.h:
// 32 lanes, blocks of B terms, a lane tree and a block tree) prices a
// norm on this CPU: the CPU runtime's scheme (src/cpu/reduce.cpp: threads
// over blocks, the lanes in eight 4-double vectors, each piece's block tree
// on one thread) with B as a parameter, over one f32 tensor of N = 2^24
// (one piece), 148 pieces (GPT-2 small's table scaled to N) and 10,000
// random pieces, beside the read floor (an OpenMP sum in double). Prints one
// line per B and table: ms (median of 7 runs) and x floor. The block size was
// chosen from this and from the GPU's (a warp per block: B / 32 loads a
// thread). Build:
//
//   g++ -O2 -march=native -ffp-contract=off -fopenmp
//   tools/bench/reduce_block.cpp
//
//===----------------------------------------------------------------------===//

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

typedef double Double4 __attribute__((vector_size(32)));
typedef float Float4 __attribute__((vector_size(16)));

double block(const float *x, int64_t n) {
  Double4 acc[8];
  for (Double4 &a : acc)
    a = Double4{0, 0, 0, 0};
  const int64_t full = n / 32;
  for (int64_t j = 0; j < full; ++j)
    for (int v = 0; v < 8; ++v) {
      Float4 f;
      std::memcpy(&f, x + j * 32 + 4 * v, sizeof f);
      const Double4 d = __builtin_convertvector(f, Double4);
      acc[v] += d * d;
    }
  for (int64_t k = full * 32; k < n; ++k)
    acc[(k % 32) / 4][k % 4] += static_cast<double>(x[k]) * x[k];
  for (int v = 0; v < 4; ++v)
    acc[v] += acc[v + 4];
  for (int v = 0; v < 2; ++v)
    acc[v] += acc[v + 2];
  acc[0] += acc[1];
  return (acc[0][0] + acc[0][2]) + (acc[0][1] + acc[0][3]);
}

double tree(const double *p, int64_t n) {
  if (n == 1)
    return p[0];
  const int64_t h = n - n / 2;
  return tree(p, h) + tree(p + h, n - h);
}

/// Norms of the pieces [ends[s-1], ends[s]) with blocks of b terms.
void norms(const float *x, const std::vector<int64_t> &ends, int64_t b,
           std::vector<int64_t> &first, std::vector<double> &partials,
           std::vector<double> &out) {
  const int64_t pieces = static_cast<int64_t>(ends.size());
  first.assign(pieces + 1, 0);
  for (int64_t s = 0; s < pieces; ++s) {
    const int64_t len = ends[s] - (s ? ends[s - 1] : 0);
    first[s + 1] = first[s] + (len + b - 1) / b;
  }
  partials.resize(first[pieces]);
  out.resize(pieces);
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t k = 0; k < first[pieces]; ++k) {
      const int64_t s =
          std::upper_bound(first.begin(), first.end(), k) - first.begin() - 1;
      const int64_t begin = s ? ends[s - 1] : 0;
      const int64_t at = begin + (k - first[s]) * b;
      partials[k] = block(x + at, std::min(b, ends[s] - at));
    }
#pragma omp for schedule(static)
    for (int64_t s = 0; s < pieces; ++s)
      out[s] =
          first[s + 1] > first[s]
              ? std::sqrt(tree(&partials[first[s]], first[s + 1] - first[s]))
              : 0.0;
  }
}

/// The read floor: an OpenMP sum of the f32 values in double.
__attribute__((noinline)) double readSum(const float *x, int64_t n) {
  double sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i)
    sum += x[i];
  return sum;
}

template <typename F> double medianMs(F f) {
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - a)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[3];
}

} // namespace

int main() {
  const int64_t n = int64_t{1} << 24;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = std::sin(0.001f * i);
  std::mt19937_64 rng(10000);
  std::vector<int64_t> t10000;
  for (int i = 0; i < 9999; ++i)
    t10000.push_back(rng() % (n + 1));
  t10000.push_back(n);
  std::sort(t10000.begin(), t10000.end());
  // GPT-2 small's 148 tensors, scaled to N (embedding 31%, layer norms
  // tiny): approximated by 12 layers of 12 tensors and 4 others.
  std::vector<int64_t> gpt2;
  {
    const double w[] = {38597376, 786432, 768,     768, 1769472,
                        2304,     589824, 768,     768, 768,
                        2359296,  3072,   2359296, 768};
    std::vector<double> lengths = {w[0], w[1]};
    for (int l = 0; l < 12; ++l)
      for (int k = 2; k < 14; ++k)
        lengths.push_back(w[k]);
    lengths.push_back(768);
    lengths.push_back(768);
    double total = 0;
    for (double v : lengths)
      total += v;
    int64_t at = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      at = i + 1 == lengths.size()
               ? n
               : std::min<int64_t>(
                     n, at + std::max<int64_t>(
                                 1, std::llround(lengths[i] / total * n)));
      gpt2.push_back(at);
    }
  }
  const std::vector<int64_t> one = {n};
  std::vector<int64_t> first;
  std::vector<double> partials, out;
  volatile double sink = 0;
  const float *data = x.data();
  auto readFloor = [&] { sink = readSum(data, n); };
  readFloor(); // threads started, pages warm
  const double floorMs = medianMs(readFloor);
  std::printf("reduce_block: N = 2^24 f32, %d threads; read floor %.3f ms\n",
              omp_get_max_threads(), floorMs);
  std::printf("%6s %10s %8s %8s %10s %8s\n", "B", "table", "ms", "x floor",
              "blocks", "");
  for (int64_t b : {256, 512, 1024, 2048, 4096, 8192, 16384})
    for (auto [name, table] :
         {std::pair<const char *, const std::vector<int64_t> *>{"T=1", &one},
          {"GPT-2", &gpt2},
          {"T=10000", &t10000}}) {
      const double ms =
          medianMs([&] { norms(x.data(), *table, b, first, partials, out); });
      std::printf("%6ld %10s %8.3f %8.2f %10ld\n", static_cast<long>(b), name,
                  ms, ms / floorMs, static_cast<long>(first.back()));
    }
  return 0;
}
