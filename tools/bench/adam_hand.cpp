//===- adam_hand.cpp - Adam written by hand, and the memory floor ---------===//
//
// The references tools/bench-cpu.sh measures the generated Adam against, in
// the same run, as a user would write them with OpenMP and MPI (no
// coconet runtime):
//
//   adam_hand loop N ITER        one rank: the update of samples/adam.coco
//                                over N elements, f16 gradients widened with
//                                F16C a tile at a time, the same operations
//                                in the same order (divisions kept), so the
//                                same bits as the simulator
//   adam_hand allreduce N ITER   MPI_Allreduce of the f16 gradients (a user
//                                op summing in float), then the loop
//   adam_hand rs_ag N ITER       MPI_Reduce_scatter_block (the same op), the
//                                loop on this rank's slice, MPI_Allgather of
//                                the weights
//   adam_hand floor N ITER       the memory floor: Adam's traffic (read g,
//                                w, m, v; write w, m, v: 26 bytes an element)
//                                with one addition per value
//
// modes: floor loop allreduce rs_ag
// one rank: floor loop
//
// Each prints "NAME: X ms per step" (the slowest rank's mean over ITER steps
// after one untimed step). Build: mpicxx -O3 -march=native -fopenmp
// -ffp-contract=off -fno-math-errno (tools/bench-cpu.sh does).
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
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr long kTile = 512;

struct State {
  std::vector<uint16_t> g; // f16 gradients
  std::vector<float> w, m, v;
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  int step = 3;
};

/// The update of elements [first, first + n) reading gradients `g`.
void update(const uint16_t *g, float *w, float *m, float *v, long n,
            const State &s) {
  const float c1 = 1.0f - s.beta1, c2 = 1.0f - s.beta2;
  const float b1 = 1.0f - std::pow(s.beta1, static_cast<float>(s.step));
  const float b2 = 1.0f - std::pow(s.beta2, static_cast<float>(s.step));
#pragma omp parallel for schedule(static)
  for (long t = 0; t < n; t += kTile) {
    const long len = std::min(kTile, n - t);
    float g32[kTile];
    long j = 0;
    for (; j + 8 <= len; j += 8)
      _mm256_storeu_ps(g32 + j,
                       _mm256_cvtph_ps(_mm_loadu_si128(
                           reinterpret_cast<const __m128i *>(g + t + j))));
    for (; j < len; ++j)
      g32[j] = _cvtsh_ss(g[t + j]);
#pragma omp simd
    for (long i = 0; i < len; ++i) {
      const float gi = g32[i];
      const float m1 = s.beta1 * m[t + i] + c1 * gi;
      const float v1 = s.beta2 * v[t + i] + c2 * gi * gi;
      const float mhat = m1 / b1;
      const float vhat = v1 / b2;
      w[t + i] = w[t + i] - s.lr * mhat / (std::sqrt(vhat) + s.eps);
      m[t + i] = m1;
      v[t + i] = v1;
    }
  }
}

/// The floor: the same bytes, one addition each.
void floorStep(const uint16_t *g, float *w, float *m, float *v, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; ++i) {
    const float gi = static_cast<float>(g[i]);
    w[i] += gi;
    m[i] += gi;
    v[i] += gi;
  }
}

/// A user's f16 sum for MPI: widen, add in float, round back.
void sumHalf(void *in, void *inout, int *len, MPI_Datatype *) {
  const uint16_t *a = static_cast<const uint16_t *>(in);
  uint16_t *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] =
        _cvtss_sh(_cvtsh_ss(a[i]) + _cvtsh_ss(b[i]), _MM_FROUND_TO_NEAREST_INT);
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: adam_hand loop|allreduce|rs_ag|floor N ITER\n");
    MPI_Finalize();
    return 2;
  }
  const std::string mode = argv[1];
  const long n = std::atol(argv[2]);
  const int iterations = std::atoi(argv[3]);
  const long slice = n / size;
  State s;
  s.g.resize(n);
  const bool sharded = mode == "rs_ag";
  const long local = sharded ? slice : n;
  s.w.assign(n, 0.5f);
  s.m.assign(local, 0.0f);
  s.v.assign(local, 0.0f);
  for (long i = 0; i < n; ++i)
    s.g[i] = _cvtss_sh(std::sin(0.001f * static_cast<float>(i + rank)),
                       _MM_FROUND_TO_NEAREST_INT);
  std::vector<uint16_t> summed(sharded ? slice : n);
  std::vector<float> wSlice(sharded ? slice : 0);
  MPI_Datatype half;
  MPI_Type_contiguous(2, MPI_BYTE, &half);
  MPI_Type_commit(&half);
  MPI_Op sum;
  MPI_Op_create(sumHalf, 1, &sum);

  auto step = [&] {
    if (mode == "loop") {
      update(s.g.data(), s.w.data(), s.m.data(), s.v.data(), n, s);
    } else if (mode == "allreduce") {
      MPI_Allreduce(s.g.data(), summed.data(), static_cast<int>(n), half, sum,
                    MPI_COMM_WORLD);
      update(summed.data(), s.w.data(), s.m.data(), s.v.data(), n, s);
    } else if (mode == "rs_ag") {
      MPI_Reduce_scatter_block(s.g.data(), summed.data(),
                               static_cast<int>(slice), half, sum,
                               MPI_COMM_WORLD);
      std::memcpy(wSlice.data(), s.w.data() + rank * slice,
                  slice * sizeof(float));
      update(summed.data(), wSlice.data(), s.m.data(), s.v.data(), slice, s);
      MPI_Allgather(wSlice.data(), static_cast<int>(slice), MPI_FLOAT,
                    s.w.data(), static_cast<int>(slice), MPI_FLOAT,
                    MPI_COMM_WORLD);
    } else {
      floorStep(s.g.data(), s.w.data(), s.m.data(), s.v.data(), n);
    }
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
  MPI_Op_free(&sum);
  MPI_Type_free(&half);
  MPI_Finalize();
  return 0;
}
