//===- MeasureTest.cpp - how `coconetc tune --measure` times its rows -----===//
//
// tune::measureRows with a fake run in place of a built driver: the order
// of the rounds (rank order, then reversed), what a run time makes of the
// steps, what is kept (each row's fastest step), and the reading of a
// driver's timing line.
//
//===----------------------------------------------------------------------===//

#include "tune/Measure.h"

#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace coconet;

namespace {

struct Call {
  size_t row;
  int64_t steps;
  bool operator==(const Call &o) const {
    return row == o.row && steps == o.steps;
  }
};

} // namespace

TEST_CASE("measured rows: rounds alternate their order, the fastest is kept",
          "[tune]") {
  std::vector<Call> calls;
  // Row i's k-th run: a mean of (i + 1) ms, its fastest step 1 ms less per
  // earlier run of it (so the last run is the fastest).
  std::vector<int> runsOf(3, 0);
  auto run = [&](size_t i, int64_t steps) -> llvm::Expected<tune::RunTime> {
    calls.push_back({i, steps});
    const double k = runsOf[i]++;
    return tune::RunTime{(i + 1) * 1e-3, (10 - k) * 1e-3};
  };
  std::string progress;
  llvm::raw_string_ostream os(progress);
  tune::MeasurePolicy policy;
  policy.iterations = 5;
  policy.rounds = 3;
  auto m = tune::measureRows(
      3, policy, run, [](size_t i) { return "row " + std::to_string(i); }, os);
  const bool measured = static_cast<bool>(m);
  REQUIRE(measured);
  const std::vector<Call> want = {{0, 5}, {1, 5}, {2, 5}, {2, 5}, {1, 5},
                                  {0, 5}, {0, 5}, {1, 5}, {2, 5}};
  CHECK(calls == want);
  CHECK(m->seconds == std::vector<double>{8e-3, 8e-3, 8e-3});
  CHECK(m->steps == std::vector<int64_t>{5, 5, 5});
  CHECK(progress.find("measuring 3 of 3, round 2 of 3, 5 steps: row 2") !=
        std::string::npos);
}

TEST_CASE("a run time sizes each row's runs, and a long first run is a round",
          "[tune]") {
  std::vector<Call> calls;
  // Row 0 steps take 1 ms, row 1 steps 100 ms.
  auto run = [&](size_t i, int64_t steps) -> llvm::Expected<tune::RunTime> {
    calls.push_back({i, steps});
    const double mean = i == 0 ? 1e-3 : 100e-3;
    return tune::RunTime{mean, mean};
  };
  std::string progress;
  llvm::raw_string_ostream os(progress);
  tune::MeasurePolicy policy;
  policy.iterations = 5;
  policy.runTimeMs = 50;
  policy.rounds = 1;
  auto m = tune::measureRows(
      2, policy, run, [](size_t) { return std::string("r"); }, os);
  const bool measured = static_cast<bool>(m);
  REQUIRE(measured);
  // Sizing: 5 steps each; row 0 needs 50 steps for 50 ms, row 1 needs
  // fewer than 5, so its sizing run is its round.
  const std::vector<Call> want = {{0, 5}, {1, 5}, {0, 50}};
  CHECK(calls == want);
  CHECK(m->steps == std::vector<int64_t>{50, 5});
  CHECK(tune::stepsText(m->steps, 50) ==
        "5 to 50 steps (at least 50 ms a run)");
  CHECK(tune::stepsText({5, 5}, 0) == "5 steps each");
}

TEST_CASE("a failed run stops the measuring with its error", "[tune]") {
  auto run = [&](size_t i, int64_t) -> llvm::Expected<tune::RunTime> {
    if (i == 1)
      return llvm::createStringError("row 1 failed");
    return tune::RunTime{1e-3, 1e-3};
  };
  std::string progress;
  llvm::raw_string_ostream os(progress);
  auto m = tune::measureRows(
      3, tune::MeasurePolicy{}, run, [](size_t) { return std::string(); }, os);
  const bool measured = static_cast<bool>(m);
  REQUIRE_FALSE(measured);
  CHECK(llvm::toString(m.takeError()) == "row 1 failed");
}

TEST_CASE("a driver's timing line is read in seconds", "[tune]") {
  auto t = tune::parseTimingLine(
      "adam_r1: 40 steps on 2 ranks, 1.25 ms per step, fastest 1.1 ms\n");
  const bool read = static_cast<bool>(t);
  REQUIRE(read);
  CHECK(t->mean == Approx(1.25e-3));
  CHECK(t->fastest == Approx(1.1e-3));
  auto bad = tune::parseTimingLine("adam_r1: 40 steps on 2 ranks");
  const bool readBad = static_cast<bool>(bad);
  CHECK_FALSE(readBad);
  llvm::consumeError(bad.takeError());
  CHECK(tune::spearman({1, 2, 3}, {10, 20, 30}) == Approx(1));
  CHECK(tune::spearman({1, 2, 3}, {30, 20, 10}) == Approx(-1));
}
