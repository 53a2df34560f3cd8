//===- DriverRunTest.cpp - the runtime's one driver (run_program.h) -------===//
//
// runProgram, the driver every generated main() hands its program's
// description to, on a host-memory target and a transport that stands for
// slower ranks: the step's arguments in the description's order (a
// scalar's host value), the results printed, the timed steps' ends reduced
// over ranks before they become steps' times, an extent that overflows
// refused, a failed step reported with exit status 1.
//
//===----------------------------------------------------------------------===//

#include "../../../runtime/src/driver/run_program.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <unistd.h>

namespace rt = coconet::rt;
namespace drv = coconet::rt::driver;

namespace {

/// The host copy is where the program reads a block.
struct HostOnlyBlock : drv::HostBlock {
  rt::Status make(drv::TensorInfo tensor, const std::vector<int64_t> &axes,
                  const std::vector<int64_t> &coords, void *symmetric) {
    return makeHost(std::move(tensor), axes, coords, symmetric);
  }
  rt::Status upload() { return rt::Status::success(); }
  void *pointer() { return host.data(); }
  rt::Status download() { return rt::Status::success(); }
};

struct CountingSession {
  int synchronized = 0;
  rt::Status synchronize() {
    ++synchronized;
    return rt::Status::success();
  }
};

/// Rank 0 of one, whose maxOf(double) stands for a rank that ended each
/// timed step later: its ends are `slow`.
class SlowPeer final : public drv::Transport {
public:
  std::vector<double> slow;
  std::vector<std::string> calls;
  int rank() const override { return 0; }
  int size() const override { return 1; }
  rt::Status gather(const void *data, size_t bytes,
                    std::vector<uint8_t> *all) override {
    const auto *p = static_cast<const uint8_t *>(data);
    all->assign(p, p + bytes);
    return rt::Status::success();
  }
  int maxOf(int value) override { return value; }
  void barrier() override { calls.push_back("barrier"); }
  void maxOf(double *values, size_t count) override {
    calls.push_back("max " + std::to_string(count));
    if (count == 1)
      values[0] = std::max(values[0], slow.back());
    else
      for (size_t i = 0; i < count && i < slow.size(); ++i)
        values[i] = std::max(values[i], slow[i]);
  }
};

/// y = a * x, x: f32[N] replicated, a: f32 scalar, y: f32[N] (or f32[2^62 * N],
/// which overflows for N > 1).
struct Scale {
  float a = 0;
  const float *x = nullptr;
  int steps = 0;
};
int destroyed = 0;
std::function<rt::Status(Scale &)> onStep;

rt::Status create(void *, const int64_t *, const int64_t *const *, void **out) {
  *out = new Scale();
  return rt::Status::success();
}
void destroy(void *p) {
  ++destroyed;
  delete static_cast<Scale *>(p);
}
rt::Status step(void *p, void *const *args) {
  auto &s = *static_cast<Scale *>(p);
  s.x = static_cast<const float *>(args[0]);
  s.a = *static_cast<const float *>(args[1]);
  ++s.steps;
  auto *y = static_cast<float *>(args[2]);
  y[0] = s.a * s.x[0];
  return onStep ? onStep(s) : rt::Status::success();
}

const char *const kSizes[] = {"P", "N"};
const uint32_t kAxes[] = {0};
const uint32_t kN[] = {1};
const cc_extent kShapeN[] = {{1, 1, kN}};
const cc_extent kShapeKN[] = {{1LL << 62, 1, kN}};
const cc_axis_layout kReplicated[] = {{CC_AXIS_REPLICATED, 0}};
constexpr int32_t kF32 = static_cast<int32_t>(rt::DType::F32);

drv::ProgramDescription describe(const cc_extent *yShape) {
  static cc_block blocks[3];
  static cc_result results[1];
  static cc_description program;
  blocks[0] = {"x", 0,  CC_BLOCK_TENSOR,    kF32, 1, kShapeN, kReplicated, 0,
               0,   -1, "f32[N] replicated"};
  blocks[1] = {"a", 1,    CC_BLOCK_SCALAR, kF32, 0, nullptr, kReplicated, 0, 0,
               -1,  "f32"};
  blocks[2] = {"y", 0,  CC_BLOCK_OUTPUT,    kF32, 1, yShape, kReplicated, 1,
               0,   -1, "f32[N] replicated"};
  results[0] = {"y", 2};
  program = {COCONET_DESCRIPTION_VERSION,
             "scale",
             "scale",
             "",
             2,
             kSizes,
             1,
             kAxes,
             0,
             3,
             2,
             blocks,
             1,
             results,
             0,
             nullptr,
             0};
  return {&program, create, destroy, step, nullptr, nullptr};
}

/// runProgram's exit status, and what it printed on stdout and stderr.
int runCaptured(const drv::ProgramDescription &d, SlowPeer &transport,
                std::vector<std::string> args, std::string *printed) {
  std::vector<char *> argv;
  args.insert(args.begin(), "scale");
  for (std::string &a : args)
    argv.push_back(a.data());
  char path[] = "/tmp/coconet-driver-run-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  std::fflush(stdout);
  std::fflush(stderr);
  const int out = dup(1), err = dup(2);
  dup2(fd, 1);
  dup2(fd, 2);
  CountingSession session;
  const int status = drv::runProgram<HostOnlyBlock>(
      d, session, [] { return rt::Status::success(); }, transport,
      static_cast<int>(argv.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(out, 1);
  dup2(err, 2);
  close(out);
  close(err);
  printed->clear();
  char buf[4096];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
    printed->append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  return status;
}

} // namespace

TEST_CASE("runProgram passes the blocks in order and prints the results",
          "[driver]") {
  SlowPeer transport;
  std::string printed;
  destroyed = 0;
  onStep = [](Scale &s) {
    CHECK(s.a == 3.0f);
    return rt::Status::success();
  };
  REQUIRE(runCaptured(describe(kShapeN), transport,
                      {"--size", "N=4", "--set", "a=3"}, &printed) == 0);
  onStep = nullptr;
  INFO(printed);
  CHECK(printed.find("y : f32[4]  block [4] of rank 0") != std::string::npos);
  CHECK(destroyed == 1);
  // One step, no timing: no barrier, nothing reduced.
  CHECK(transport.calls.empty());
}

TEST_CASE("runProgram reduces the timed steps' ends over ranks before it "
          "turns them into steps' times",
          "[driver]") {
  // A slower rank ended the three steps at 10, 11 and 30 ms: the steps
  // took 10, 1 and 19 ms (the fastest at most the mean, 10 ms). Each
  // rank's own times reduced instead would be the slow rank's ends
  // themselves here (10, 11 and 30: the fastest 10 ms).
  SlowPeer transport;
  transport.slow = {0.010, 0.011, 0.030};
  std::string printed;
  REQUIRE(runCaptured(
              describe(kShapeN), transport,
              {"--size", "N=4", "--iterations", "3", "--step-times", "--quiet"},
              &printed) == 0);
  CHECK(transport.calls ==
        std::vector<std::string>{"barrier", "max 1", "max 3"});
  CHECK(printed.find("scale: 3 steps on 1 ranks, 10.0") != std::string::npos);
  CHECK(printed.find("fastest 1.0") != std::string::npos);
}

TEST_CASE("runProgram refuses an extent that overflows 64 bits", "[driver]") {
  SlowPeer transport;
  std::string printed;
  destroyed = 0;
  // y: f32[2^62 * N] with N = 4: 2^64 elements (x, f32[4], is made).
  CHECK(runCaptured(describe(kShapeKN), transport, {"--size", "N=4"},
                    &printed) == 1);
  CHECK(printed.find("'y': the extent 4611686018427387904 * N does not fit "
                     "in 64 bits") != std::string::npos);
  CHECK(destroyed == 1);
}

TEST_CASE("runProgram reports a failed step with exit status 1", "[driver]") {
  SlowPeer transport;
  std::string printed;
  destroyed = 0;
  onStep = [](Scale &) {
    return rt::Status::error(rt::StatusCode::Internal, "the step broke");
  };
  CHECK(runCaptured(describe(kShapeN), transport, {"--size", "N=4"},
                    &printed) == 1);
  onStep = nullptr;
  CHECK(printed.find("scale: ") != std::string::npos);
  CHECK(printed.find("the step broke") != std::string::npos);
  CHECK(printed.find("y : f32") == std::string::npos);
  CHECK(destroyed == 1);
}
