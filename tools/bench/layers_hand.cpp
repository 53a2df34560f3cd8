//===- layers_hand.cpp - LAMB and AdamW over a parameter list by hand -----===//
//
// The references tools/bench-cpu.sh measures stdlib/optim/lamb_layers.coco,
// adamw_layers.coco, clip.coco and tools/bench/norm.coco against, in the
// same run, as a user would write them with OpenMP for one process (no
// coconet runtime):
//
//   layers_hand foreach N ITER OPT TABLE   the optimizer OPT (lamb, adamw,
//                                          clip: AdamW after clipping by
//                                          the global norm, as
//                                          clip_grad_norm_(foreach=True)
//                                          then AdamW; norm: the global
//                                          norm of f32 values alone, an
//                                          OpenMP reduction in double)
//                                          tensor by tensor, as PyTorch's
//                                          _foreach loops and apex's
//                                          per-tensor kernels do: for each
//                                          segment of TABLE an OpenMP loop
//                                          over its elements (LAMB: a
//                                          second loop for the update,
//                                          after the tensor's norms, an
//                                          OpenMP reduction in double)
//   layers_hand floor N ITER OPT TABLE     the memory floor of OPT's
//                                          traffic, one addition per value:
//                                          AdamW reads g, w, m, v and writes
//                                          w, m, v (26 bytes an element);
//                                          LAMB needs the update u twice
//                                          (the norms first), so it writes
//                                          u and reads it and w again (38);
//                                          clip reads g once more for the
//                                          norm (28); norm reads 4 bytes an
//                                          element, one addition each
// modes: floor foreach
// one rank: floor foreach
//
// Each prints "NAME: X ms per step" (the mean over ITER steps after one
// untimed step). Build: mpicxx -O3 -march=native -fopenmp -ffp-contract=off
// -fno-math-errno (tools/bench-cpu.sh does).
//
//===----------------------------------------------------------------------===//

#include <immintrin.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr long kTile = 512;

struct State {
  std::vector<uint16_t> g; // f16 gradients
  std::vector<float> w, m, v, u, decay;
  double norm = 0; // what clip and norm compute
  float maxNorm = 1.0f;
  std::vector<long> ends; // segment ends
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-6f, wd = 0.01f;
  int step = 3;
};

/// Widens g[t, t + len) into out.
void widen(const uint16_t *g, long len, float *out) {
  long j = 0;
  for (; j + 8 <= len; j += 8)
    _mm256_storeu_ps(out + j, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(g + j))));
  for (; j < len; ++j)
    out[j] = _cvtsh_ss(g[j]);
}

/// One step of the optimizer, tensor by tensor: LAMB (`Lamb`) or AdamW. The
/// element loops have no branch (a template, not a flag), so that they
/// vectorise as a user's would.
template <bool Lamb, bool Clip = false> void foreachStep(State &s) {
  float scale = 1.0f;
  if constexpr (Clip) {
    // clip_grad_norm_(foreach=True): the norm of every gradient, then one
    // scale min(max_norm / (norm + 1e-6), 1).
    const long n = static_cast<long>(s.w.size());
    double sq = 0;
#pragma omp parallel for schedule(static) reduction(+ : sq)
    for (long t = 0; t < n; t += kTile) {
      const long len = std::min(kTile, n - t);
      float g32[kTile];
      widen(s.g.data() + t, len, g32);
#pragma omp simd reduction(+ : sq)
      for (long k = 0; k < len; ++k)
        sq += static_cast<double>(g32[k]) * g32[k];
    }
    s.norm = std::sqrt(sq);
    scale = std::min(s.maxNorm / (static_cast<float>(s.norm) + 1e-6f), 1.0f);
  }
  const float c1 = 1.0f - s.beta1, c2 = 1.0f - s.beta2;
  const float b1 = 1.0f - std::pow(s.beta1, static_cast<float>(s.step));
  const float b2 = 1.0f - std::pow(s.beta2, static_cast<float>(s.step));
  const float beta1 = s.beta1, beta2 = s.beta2, eps = s.eps, lr = s.lr;
  long begin = 0;
  for (size_t i = 0; i < s.ends.size(); ++i) {
    const long end = s.ends[i];
    const float decay = s.wd * s.decay[i];
    double wn = 0, un = 0;
#pragma omp parallel for schedule(static) reduction(+ : wn, un)
    for (long t = begin; t < end; t += kTile) {
      const long len = std::min(kTile, end - t);
      float g32[kTile];
      widen(s.g.data() + t, len, g32);
      if constexpr (Clip) {
#pragma omp simd
        for (long k = 0; k < len; ++k)
          g32[k] *= scale;
      }
      float *__restrict__ w = s.w.data() + t;
      float *__restrict__ m = s.m.data() + t;
      float *__restrict__ v = s.v.data() + t;
      float *__restrict__ u = s.u.data() + t;
      if constexpr (Lamb) {
#pragma omp simd reduction(+ : wn, un)
        for (long k = 0; k < len; ++k) {
          const float m1 = beta1 * m[k] + c1 * g32[k];
          const float v1 = beta2 * v[k] + c2 * g32[k] * g32[k];
          const float uk =
              (m1 / b1) / (std::sqrt(v1 / b2) + eps) + decay * w[k];
          m[k] = m1;
          v[k] = v1;
          u[k] = uk;
          wn += static_cast<double>(w[k]) * w[k];
          un += static_cast<double>(uk) * uk;
        }
      } else {
#pragma omp simd
        for (long k = 0; k < len; ++k) {
          const float m1 = beta1 * m[k] + c1 * g32[k];
          const float v1 = beta2 * v[k] + c2 * g32[k] * g32[k];
          const float uk =
              (m1 / b1) / (std::sqrt(v1 / b2) + eps) + decay * w[k];
          m[k] = m1;
          v[k] = v1;
          w[k] = w[k] - lr * uk;
        }
      }
    }
    if constexpr (Lamb) {
      const float ratio =
          wn > 0 && un > 0 ? static_cast<float>(std::sqrt(wn) / std::sqrt(un))
                           : 1.0f;
      const float scale = lr * ratio;
      float *__restrict__ w = s.w.data();
      const float *__restrict__ u = s.u.data();
#pragma omp parallel for simd schedule(static)
      for (long k = begin; k < end; ++k)
        w[k] = w[k] - scale * u[k];
    }
    begin = end;
  }
}

/// The global norm of w (f32), an OpenMP reduction in double.
void normStep(State &s) {
  const long n = static_cast<long>(s.w.size());
  const float *w = s.w.data();
  double sq = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sq)
  for (long i = 0; i < n; ++i)
    sq += static_cast<double>(w[i]) * w[i];
  s.norm = std::sqrt(sq);
}

/// The norm's floor: 4 bytes an element read, one f32 addition each.
void normFloorStep(State &s) {
  const long n = static_cast<long>(s.w.size());
  const float *w = s.w.data();
  float sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
  for (long i = 0; i < n; ++i)
    sum += w[i];
  s.norm = sum;
}

/// The floor: the optimizer's bytes, one addition each.
void floorStep(State &s, bool lamb, bool clip) {
  const long n = static_cast<long>(s.w.size());
  if (clip) {
    // The norm's read of g.
    const uint16_t *g = s.g.data();
    float sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
    for (long i = 0; i < n; ++i)
      sum += static_cast<float>(g[i]);
    s.norm = sum;
  }
  float *w = s.w.data(), *m = s.m.data(), *v = s.v.data(), *u = s.u.data();
  const uint16_t *g = s.g.data();
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; ++i) {
    const float gi = static_cast<float>(g[i]);
    m[i] += gi;
    v[i] += gi;
    if (lamb)
      u[i] = w[i] + gi;
    else
      w[i] += gi;
  }
  if (lamb) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; ++i)
      w[i] += u[i];
  }
}

std::vector<long> readTable(const char *path) {
  std::ifstream in(path);
  std::vector<long> ends;
  std::string line;
  long total = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    long length = 0;
    while (words >> length)
      ends.push_back(total += length);
  }
  return ends;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 6) {
    if (rank == 0)
      std::fprintf(stderr, "usage: layers_hand foreach|floor N ITER "
                           "lamb|adamw|clip|norm TABLE\n");
    MPI_Finalize();
    return 2;
  }
  const std::string mode = argv[1];
  const long n = std::atol(argv[2]);
  const int iterations = std::atoi(argv[3]);
  const std::string opt = argv[4];
  const bool lamb = opt == "lamb", clip = opt == "clip", norm = opt == "norm";
  State s;
  s.ends = readTable(argv[5]);
  if (s.ends.empty() || s.ends.back() != n) {
    if (rank == 0)
      std::fprintf(stderr, "layers_hand: the table does not sum to %ld\n", n);
    MPI_Finalize();
    return 2;
  }
  s.g.resize(n);
  s.w.assign(n, 0.5f);
  s.m.assign(n, 0.0f);
  s.v.assign(n, 0.001f);
  s.u.assign(n, 0.0f);
  s.decay.assign(s.ends.size(), 1.0f);
  for (long i = 0; i < n; ++i)
    s.g[i] = _cvtss_sh(std::sin(0.001f * static_cast<float>(i + rank)),
                       _MM_FROUND_TO_NEAREST_INT);
  auto step = [&] {
    if (norm)
      mode == "foreach" ? normStep(s) : normFloorStep(s);
    else if (mode == "foreach" && lamb)
      foreachStep<true>(s);
    else if (mode == "foreach" && clip)
      foreachStep<false, true>(s);
    else if (mode == "foreach")
      foreachStep<false>(s);
    else
      floorStep(s, lamb, clip);
  };
  step(); // warm-up: pages touched, caches and threads started
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i)
    step();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: %.6f ms per step\n", mode.c_str(),
                1e3 * seconds / iterations);
  MPI_Finalize();
  return 0;
}
