//===- timing.cpp - the driver's timing line ------------------------------===//
//
// A generated driver times --iterations steps after --warmup ones and
// prints the slowest rank's mean. With --step-times it also waits for each
// step and notes when it ended; each step's own time (the slowest rank's,
// reduced by the driver) gives the fastest step, which a noisy machine's
// interruptions of a few steps in a run do not reach.
//
//===----------------------------------------------------------------------===//

#include "coconet/driver.h"

#include <algorithm>
#include <cstdio>

namespace coconet::rt::driver {

void stepDurations(std::vector<double> &ends) {
  for (size_t i = ends.size(); i-- > 1;)
    ends[i] -= ends[i - 1];
}

std::string timingLine(const char *program, int iterations, int ranks,
                       double seconds, const std::vector<double> &steps) {
  char text[128];
  std::snprintf(text, sizeof text, ": %d steps on %d ranks, %.6f ms per step",
                iterations, ranks, 1e3 * seconds / iterations);
  std::string line = std::string(program) + text;
  if (!steps.empty()) {
    std::snprintf(text, sizeof text, ", fastest %.6f ms",
                  1e3 * *std::min_element(steps.begin(), steps.end()));
    line += text;
  }
  return line;
}

} // namespace coconet::rt::driver
