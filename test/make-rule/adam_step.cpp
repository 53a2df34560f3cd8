// An application of the generated API, built by test/make-rule/Makefile:
// one step of Adam under rs_c_ag on the CPU target, on every rank, with a
// gradient of 1 everywhere: the summed gradient is P, so the step moves
// every weight by lr * P / (P + eps) (bias-corrected moments P and P^2).
// Prints rank 0's first weight; exits 1 unless every weight moved so.
#define OMPI_SKIP_MPICXX 1
#include "adam_rs_c_ag.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  using coconet::generated::adam_rs_c_ag;
  coconet::rt::cpu::Communicator world(MPI_COMM_WORLD);
  const int P = world.size();
  adam_rs_c_ag::Sizes sizes;
  sizes.P = P;
  sizes.N = 96 * P;
  std::unique_ptr<adam_rs_c_ag> step;
  coconet::rt::Status st = adam_rs_c_ag::create(world, sizes, &step);
  // m and v are sharded: this rank's N / P elements.
  std::vector<coconet::rt::Half> g(sizes.N, coconet::rt::toHalf(1.0f));
  std::vector<float> w(sizes.N, 2.0f), m(sizes.N / P, 0.0f),
      v(sizes.N / P, 0.0f);
  const float lr = 0.25f, eps = 1e-3f;
  if (st.ok())
    st = (*step)(g.data(), w.data(), m.data(), v.data(), lr, 0.9f, 0.999f, eps,
                 1);
  const double expected = 2.0 - lr * P / (P + eps);
  bool ok = st.ok();
  for (float x : w)
    ok = ok && std::fabs(x - expected) < 1e-5;
  if (!st.ok())
    std::fprintf(stderr, "%s\n", st.toString().c_str());
  else if (world.rank() == 0)
    std::printf("adam_step on %d ranks: w[0] = %.6f (expected %.6f)%s\n", P,
                w[0], expected, ok ? "" : ": WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
