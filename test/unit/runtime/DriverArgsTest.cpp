//===- DriverArgsTest.cpp - the driver's command line and placement -------===//
//
// parseArgs with every option, both spellings and every error; place()
// against the simulator's placement on one-, two- and three-axis meshes
// for every combination of axis states, including uneven slices.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "coconet/driver.h"

#include "sim/Inputs.h"
#include "sim/Tensor.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace coconet;
using rt::driver::Options;

namespace {

/// Parses `args` (without the program name).
rt::Status parse(std::vector<std::string> args, Options *out,
                 bool *help = nullptr) {
  std::vector<char *> argv;
  std::string program = "adam";
  argv.push_back(program.data());
  for (std::string &a : args)
    argv.push_back(a.data());
  bool ignored = false;
  return rt::driver::parseArgs(static_cast<int>(argv.size()), argv.data(),
                               "adam", out, help ? help : &ignored);
}

/// The first line of a failed parse's message.
std::string errorOf(std::vector<std::string> args) {
  Options o;
  rt::Status s = parse(std::move(args), &o);
  if (s.ok())
    return "";
  CHECK(s.code() == rt::StatusCode::InvalidArgument);
  CHECK(s.message().find("\nusage: adam [--size") != std::string::npos);
  return s.message().substr(0, s.message().find('\n'));
}

} // namespace

TEST_CASE("parseArgs reads every option", "[runtime][driver]") {
  Options o;
  o.sizes["D"] = 9; // values the caller set stay unless overridden
  bool help = true;
  REQUIRE(parse({"--size", "N=1024,P=4", "--size=H=8", "--seed", "0x10",
                 "--set", "lr=0.01", "--set=beta1 = 0.9", "--input", "g=g.npy",
                 "--output-dir=out/", "--iterations", "5", "--warmup=2",
                 "--quiet", "--step-times", "-seed=17"},
                &o, &help)
              .ok());
  CHECK_FALSE(help);
  CHECK(o.sizes == std::map<std::string, int64_t>{
                       {"D", 9}, {"N", 1024}, {"P", 4}, {"H", 8}});
  CHECK(o.seed == 17);
  CHECK(o.values ==
        std::map<std::string, std::string>{{"lr", "0.01"}, {"beta1", "0.9"}});
  CHECK(o.inputs == std::map<std::string, std::string>{{"g", "g.npy"}});
  CHECK(o.outputDir == "out/");
  CHECK(o.iterations == 5);
  CHECK(o.warmup == 2);
  CHECK(o.quiet);
  CHECK(o.stepTimes);
  CHECK_FALSE(o.staging);
}

TEST_CASE("parseArgs defaults and --help", "[runtime][driver]") {
  Options o;
  REQUIRE(parse({}, &o).ok());
  CHECK(o.seed == 1);
  CHECK(o.iterations == 1);
  CHECK(o.warmup == 0);
  CHECK_FALSE(o.quiet);
  CHECK_FALSE(o.stepTimes);
  CHECK(o.outputDir.empty());
  bool help = false;
  REQUIRE(parse({"--seed", "3", "--help", "--bogus"}, &o, &help).ok());
  CHECK(help);
  const std::string text = rt::driver::usage("adam");
  CHECK(text.rfind("usage: adam [--size NAME=N", 0) == 0);
  for (const char *option :
       {"--size", "--seed", "--set", "--input", "--output-dir", "--iterations",
        "--warmup", "--step-times", "--quiet", "--help"})
    CHECK(text.find(option) != std::string::npos);
}

TEST_CASE("parseArgs refuses bad command lines", "[runtime][driver]") {
  CHECK(errorOf({"--bogus"}) == "unknown option '--bogus'");
  CHECK(errorOf({"stray"}) == "unexpected argument 'stray'");
  CHECK(errorOf({"--seed"}) == "--seed needs a value");
  CHECK(errorOf({"--seed", "-1"}) ==
        "--seed expects an integer from 0 to 2^64-1, got '-1'");
  CHECK(errorOf({"--seed=0x"}) ==
        "--seed expects an integer from 0 to 2^64-1, got '0x'");
  CHECK(errorOf({"--size", "N"}) == "--size expects NAME=VALUE, got 'N'");
  CHECK(errorOf({"--size", "N=4,=3"}) == "--size expects NAME=VALUE, got '=3'");
  CHECK(errorOf({"--size", "N=0"}) ==
        "--size N expects an integer from 1 to 2^63-1, got '0'");
  CHECK(errorOf({"--size", "N=0x10"}) ==
        "--size N expects an integer from 1 to 2^63-1, got '0x10'");
  CHECK(errorOf({"--set", "lr"}) == "--set expects NAME=VALUE, got 'lr'");
  CHECK(errorOf({"--input", "=x.npy"}) ==
        "--input expects NAME=VALUE, got '=x.npy'");
  CHECK(errorOf({"--quiet=yes"}) == "--quiet takes no value");
  CHECK(errorOf({"--step-times=1"}) == "--step-times takes no value");
  CHECK(errorOf({"--iterations", "0"}) ==
        "--iterations expects an integer from 1 to 2^31-1, got '0'");
  CHECK(errorOf({"--warmup", "-1"}) ==
        "--warmup expects an integer from 0 to 2^31-1, got '-1'");
  CHECK(errorOf({"--output-dir="}) == "--output-dir needs a directory");
  CHECK(errorOf({"--iterations", "2147483648"}) ==
        "--iterations expects an integer from 1 to 2^31-1, got '2147483648'");
  CHECK(errorOf({"--set", "lr=1", "--input", "lr=x.npy"}) ==
        "parameter 'lr' is given by both --set and --input; give it one value");
  // A failed parse leaves the options alone.
  Options o;
  o.seed = 5;
  CHECK_FALSE(parse({"--seed", "9", "--bogus"}, &o).ok());
  CHECK(o.seed == 5);
}

TEST_CASE("the timing line: the mean, and each step's own time with "
          "--step-times",
          "[runtime][driver]") {
  // When each of four steps ended, from the start of the loop: steps of
  // 3, 2, 5 and 4 ms, the fastest neither the first nor the last.
  std::vector<double> steps = {0.003, 0.005, 0.010, 0.014};
  rt::driver::stepDurations(steps);
  REQUIRE(steps.size() == 4);
  CHECK(steps[0] == Approx(0.003));
  CHECK(steps[1] == Approx(0.002));
  CHECK(steps[2] == Approx(0.005));
  CHECK(steps[3] == Approx(0.004));
  CHECK(rt::driver::timingLine("adam", 4, 2, 0.014, steps) ==
        "adam: 4 steps on 2 ranks, 3.500000 ms per step, fastest 2.000000 ms");
  // Without --step-times: the mean alone, as before.
  std::vector<double> none;
  rt::driver::stepDurations(none);
  CHECK(rt::driver::timingLine("adam", 4, 2, 0.014, none) ==
        "adam: 4 steps on 2 ranks, 3.500000 ms per step");
}

TEST_CASE("every numeric option of a driver: its limits accepted, one past "
          "them refused",
          "[runtime][driver]") {
  struct Edge {
    std::vector<std::string> args;
    bool accepted;
  };
  const std::vector<Edge> edges = {
      {{"--seed", "0"}, true},
      {{"--seed", "18446744073709551615"}, true},
      {{"--seed", "-1"}, false},
      {{"--seed", "18446744073709551616"}, false},
      {{"--size", "N=1"}, true},
      {{"--size", "N=9223372036854775807"}, true},
      {{"--size", "N=0"}, false},
      {{"--size", "N=9223372036854775808"}, false},
      {{"--iterations", "1"}, true},
      {{"--iterations", "2147483647"}, true},
      {{"--iterations", "0"}, false},
      {{"--iterations", "2147483648"}, false},
      {{"--warmup", "0"}, true},
      {{"--warmup", "2147483647"}, true},
      {{"--warmup", "-1"}, false},
      {{"--warmup", "2147483648"}, false},
  };
  for (const Edge &e : edges) {
    INFO(e.args[0] << " " << e.args[1]);
    Options o;
    const rt::Status s = parse(e.args, &o);
    CHECK(s.ok() == e.accepted);
    if (!s.ok())
      continue;
    // The value is the limit itself, not a neighbour.
    const std::string &v = e.args[1];
    if (e.args[0] == "--seed")
      CHECK(std::to_string(o.seed) == v);
    if (e.args[0] == "--size")
      CHECK("N=" + std::to_string(o.sizes.at("N")) == v);
    if (e.args[0] == "--iterations")
      CHECK(std::to_string(o.iterations) == v);
    if (e.args[0] == "--warmup")
      CHECK(std::to_string(o.warmup) == v);
  }
}

TEST_CASE("parseArgs reads --inputs uniform|wide", "[runtime][driver]") {
  Options o;
  REQUIRE(parse({}, &o).ok());
  CHECK(o.inputKind == rt::driver::InputKind::Uniform);
  REQUIRE(parse({"--inputs", "wide"}, &o).ok());
  CHECK(o.inputKind == rt::driver::InputKind::Wide);
  REQUIRE(parse({"--inputs=uniform"}, &o).ok());
  CHECK(o.inputKind == rt::driver::InputKind::Uniform);
  CHECK(errorOf({"--inputs"}) == "--inputs needs a value");
  CHECK(errorOf({"--inputs=normal"}) ==
        "--inputs expects uniform or wide, got 'normal'");
  CHECK(rt::driver::usage("adam").find("--inputs") != std::string::npos);
}

namespace {

/// Every layout of a rank-2 value over `axes` axes: each axis replicated,
/// local, or sliced along dimension 0 or 1.
std::vector<ir::Layout> allLayouts(unsigned axes) {
  std::vector<ir::Layout> layouts;
  int64_t combinations = 1;
  for (unsigned a = 0; a < axes; ++a)
    combinations *= 4;
  for (int64_t c = 0; c < combinations; ++c) {
    ir::Layout layout(axes);
    int64_t rest = c;
    for (unsigned a = 0; a < axes; ++a, rest /= 4) {
      switch (rest % 4) {
      case 0:
        layout[a] = {ir::AxisState::Replicated, 0};
        break;
      case 1:
        layout[a] = {ir::AxisState::Local, 0};
        break;
      default:
        layout[a] = {ir::AxisState::Sliced, static_cast<int>(rest % 4 - 2)};
        break;
      }
    }
    layouts.push_back(layout);
  }
  return layouts;
}

} // namespace

TEST_CASE("place() agrees with the simulator's placement",
          "[runtime][driver]") {
  const std::vector<std::vector<int64_t>> meshes = {{4}, {2, 3}, {2, 2, 2}};
  const std::vector<std::vector<int64_t>> shapes = {{24, 12}, {6, 5}};
  for (const auto &axisSizes : meshes) {
    ir::Mesh mesh;
    mesh.isImplicit = false;
    for (size_t a = 0; a < axisSizes.size(); ++a)
      mesh.axes.push_back({"a" + std::to_string(a), "A" + std::to_string(a)});
    const sim::RankGrid grid(axisSizes);
    for (const ir::Layout &layout : allLayouts(axisSizes.size()))
      for (const auto &shape : shapes) {
        ir::Stage stage;
        stage.name = "x";
        stage.type.dtype = ir::DType::F32;
        stage.type.layout = layout;
        const rt::driver::TensorInfo info = test::infoOf(stage, shape);
        for (int64_t r = 0; r < grid.numRanks(); ++r) {
          const sim::Coords c = grid.coordsOf(r);
          const std::vector<int64_t> coords(c.begin(), c.end());
          auto expected = sim::place(shape, layout, mesh, grid, c, "x");
          rt::driver::Placement got;
          rt::Status s = rt::driver::place(info, axisSizes, coords, &got);
          INFO("layout " << layout.str(mesh) << ", shape [" << shape[0] << ", "
                         << shape[1] << "], rank " << r);
          if (!expected) {
            llvm::consumeError(expected.takeError());
            CHECK(s.code() == rt::StatusCode::InvalidArgument);
            CHECK(s.message().find("which is not divisible by the") !=
                  std::string::npos);
            continue;
          }
          REQUIRE(s.ok());
          CHECK(got.localShape ==
                std::vector<int64_t>(expected->localShape.begin(),
                                     expected->localShape.end()));
          CHECK(got.offset == std::vector<int64_t>(expected->offset.begin(),
                                                   expected->offset.end()));
          CHECK(got.localGroup == sim::localGroup(layout, grid, c));
          CHECK(got.elements() == got.localShape[0] * got.localShape[1]);
        }
      }
  }
}

TEST_CASE("place() refuses a layout that does not fit the mesh",
          "[runtime][driver]") {
  rt::driver::TensorInfo info;
  info.name = "x";
  info.globalShape = {8};
  info.layout = {{rt::driver::AxisState::Sliced, 0}};
  rt::driver::Placement p;
  CHECK(rt::driver::place(info, {2, 2}, {0, 0}, &p).code() ==
        rt::StatusCode::InvalidArgument);
  CHECK(rt::driver::place(info, {2}, {2}, &p).code() ==
        rt::StatusCode::InvalidArgument);
  CHECK(rt::driver::place(info, {2}, {0, 1}, &p).code() ==
        rt::StatusCode::InvalidArgument);
  info.layout = {{rt::driver::AxisState::Sliced, 1}};
  CHECK(rt::driver::place(info, {2}, {0}, &p).code() ==
        rt::StatusCode::InvalidArgument);
  info.layout = {{rt::driver::AxisState::Sliced, 0}};
  info.globalShape = {7};
  rt::Status s = rt::driver::place(info, {2}, {1}, &p);
  CHECK(s.message() == "dimension 0 of 'x' has size 7, which is not divisible "
                       "by the 2 ranks of mesh axis 0 that slice it; choose "
                       "sizes that divide evenly");
  // A scalar has one element wherever it is.
  info.globalShape = {};
  info.layout = {{rt::driver::AxisState::Replicated, 0}};
  REQUIRE(rt::driver::place(info, {2}, {1}, &p).ok());
  CHECK(p.elements() == 1);
}
