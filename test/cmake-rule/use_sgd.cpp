// An application of the generated API: SGD under rs_c_ag on the CPU target,
// one step on every rank; prints the first weight of rank 0.
#define OMPI_SKIP_MPICXX 1
#include "sgd_rs_c_ag.h"

#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  coconet::rt::cpu::Communicator world(MPI_COMM_WORLD);
  coconet::generated::sgd_rs_c_ag::Sizes sizes;
  sizes.P = world.size();
  sizes.N = 64 * world.size();
  std::unique_ptr<coconet::generated::sgd_rs_c_ag> step;
  coconet::rt::Status st =
      coconet::generated::sgd_rs_c_ag::create(world, sizes, &step);
  std::vector<coconet::rt::Half> g(sizes.N, coconet::rt::toHalf(1.0f));
  std::vector<float> w(sizes.N, 2.0f);
  if (st.ok())
    st = (*step)(g.data(), w.data(), 0.5f);
  if (!st.ok())
    std::fprintf(stderr, "%s\n", st.toString().c_str());
  else if (world.rank() == 0)
    std::printf("w[0] = %g (expected %g)\n", w[0], 2.0 - 0.5 * world.size());
  const bool ok = st.ok() && w[0] == 2.0f - 0.5f * world.size();
  MPI_Finalize();
  return ok ? 0 : 1;
}
