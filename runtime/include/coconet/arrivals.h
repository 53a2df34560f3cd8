//===- arrivals.h - a barrier of arrival counters in shared memory -*- C++
//-*-===//
//
// The barrier of processes that share memory: each member has a 64-bit
// arrival counter that it alone increments (release), and a member's n-th
// barrier is complete when every member's counter is at least n (acquire:
// what a member wrote before it arrived is seen by whoever sees its
// arrival). The CPU runtime's Team (src/cpu/team.cpp) and the CUDA
// emulation's LSA barriers (test/emu/src/nccl_device.cpp) are this one
// barrier. A waiting member pauses between looks (a spin hint, and every
// kYieldEvery looks it yields the processor, so members run on fewer cores
// than there are still progress) and gives up after a time limit, saying
// which member it waited for: a member that died or hangs must not leave
// the others spinning for ever.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_ARRIVALS_H
#define COCONET_RUNTIME_ARRIVALS_H

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>

namespace coconet::rt {

/// Increments this member's counter; its arrival number, which every
/// member's counter must reach.
inline uint64_t arrive(uint64_t *mine) {
  return __atomic_add_fetch(mine, 1, __ATOMIC_ACQ_REL);
}

/// A hint to the processor that this thread spins.
inline void spinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Waits until the counter of every member m < `members` (`counterOf(m)`,
/// a uint64_t*) is at least `arrival`, in member order, for at most
/// `seconds`: -1 when all arrived, else the first member that had not.
template <typename CounterOf>
int waitForArrivals(CounterOf counterOf, int members, uint64_t arrival,
                    double seconds) {
  constexpr unsigned kYieldEvery = 64;   // looks between yields
  constexpr unsigned kClockEvery = 1024; // looks between reading the clock
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  for (int m = 0; m < members; ++m) {
    const uint64_t *counter = counterOf(m);
    for (unsigned looks = 1;
         __atomic_load_n(counter, __ATOMIC_ACQUIRE) < arrival; ++looks) {
      spinPause();
      if (looks % kYieldEvery == 0)
        std::this_thread::yield();
      if (looks % kClockEvery == 0 && Clock::now() > deadline)
        return m;
    }
  }
  return -1;
}

/// A time limit in seconds from the environment variable `name` (a
/// positive number), else `fallback`.
inline double secondsFromEnv(const char *name, double fallback) {
  const char *v = std::getenv(name);
  if (v && *v) {
    char *end = nullptr;
    const double seconds = std::strtod(v, &end);
    if (end && *end == '\0' && seconds > 0)
      return seconds;
  }
  return fallback;
}

} // namespace coconet::rt

#endif // COCONET_RUNTIME_ARRIVALS_H
