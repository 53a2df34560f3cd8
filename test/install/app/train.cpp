// One step of the standard library's SGD with momentum under
// momentum_rs_c_ag on every rank, with a gradient of 1 everywhere: the
// summed gradient is P, so vel' = mu * vel + P + wd * w and
// w' = w - lr * vel'. Prints rank 0's first weight; exits 1 unless every
// weight and this rank's velocity slice are so.
#define OMPI_SKIP_MPICXX 1
#include "sgd_momentum_momentum_rs_c_ag.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  using coconet::generated::sgd_momentum_momentum_rs_c_ag;
  coconet::rt::cpu::Communicator world(MPI_COMM_WORLD);
  const int P = world.size();
  sgd_momentum_momentum_rs_c_ag::Sizes sizes;
  sizes.P = P;
  sizes.N = 80 * P;
  std::unique_ptr<sgd_momentum_momentum_rs_c_ag> step;
  coconet::rt::Status st =
      sgd_momentum_momentum_rs_c_ag::create(world, sizes, &step);
  std::vector<float> g(sizes.N, 1.0f), w(sizes.N, 2.0f),
      vel(sizes.N / P, 0.5f); // vel is sharded: this rank's slice
  const float lr = 0.125f, mu = 0.875f, wd = 0.25f;
  if (st.ok())
    st = (*step)(g.data(), w.data(), vel.data(), lr, mu, wd);
  const double v1 = mu * 0.5 + P + wd * 2.0, w1 = 2.0 - lr * v1;
  bool ok = st.ok();
  for (float x : w)
    ok = ok && std::fabs(x - w1) < 1e-6;
  for (float x : vel)
    ok = ok && std::fabs(x - v1) < 1e-6;
  if (!st.ok())
    std::fprintf(stderr, "%s\n", st.toString().c_str());
  else if (world.rank() == 0)
    std::printf("train on %d ranks: w[0] = %.6f (expected %.6f)%s\n", P, w[0],
                w1, ok ? "" : ": WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
