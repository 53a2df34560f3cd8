//===- DriverIoTest.cpp - the driver's inputs and results -----------------===//
//
// On a 2 x 3 mesh, a program whose parameters cover every element type,
// scalar, and layout (local, sliced over one or two axes, replicated)
// returns all of them. fillInput must give every rank the block the
// simulator gives it (generated from the seed, set by value, or read from
// the simulator's own .npy files), and writeResult, fed every rank's block
// through a transport, must write the bytes sim::writeResults writes.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "../sim/SimTestUtil.h"

#include "coconet/driver.h"
#include "coconet/npy.h"

#include "sim/Inputs.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace coconet;
using test::simulateSource;
using test::storageOf;

namespace {

const char *const kProgram = R"(
program t(mesh [a: A, b: B],
          x0: f16[N, M] local(a) sliced(1, b),
          x1: bf16[N, M] sliced(0, a) local(b),
          x2: f32[N, M] sliced(0, a, b),
          x3: f64[N] local,
          x4: i32[N, M] sliced(1, b),
          x5: i64[N] local(b),
          x6: u64[N, M] sliced(0, b) sliced(1, a),
          x7: bool[N] local(a),
          s0: f16, s1: bf16, s2: f32, s3: f64, s4: i32, s5: i64, s6: u64,
          s7: bool) {
  return x0, x1, x2, x3, x4, x5, x6, x7, s0, s1, s2, s3, s4, s5, s6, s7;
})";

/// A temporary directory, removed at the end of the scope.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("rt", path)); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
};

sim::SimOptions meshOptions(int64_t a, int64_t b) {
  sim::SimOptions o;
  o.sizes = {{"A", a}, {"B", b}, {"N", 12}, {"M", 6}};
  return o;
}

std::vector<int64_t> axisSizesOf(const sim::SimResult &result) {
  std::vector<int64_t> sizes;
  for (unsigned a = 0; a < result.grid.numAxes(); ++a)
    sizes.push_back(result.grid.axisSize(a));
  return sizes;
}

rt::driver::TensorInfo infoOf(const test::Simulated &s, const ir::Stage &st) {
  return test::infoOf(st, s.result->placement(st, 0).globalShape);
}

/// Checks that fillInput gives every rank the simulator's block of every
/// parameter under `options`.
void checkInputs(const test::Simulated &s, const rt::driver::Options &options) {
  const std::vector<int64_t> axisSizes = axisSizesOf(*s.result);
  for (const ir::Stage *param : s.program().getParams()) {
    const rt::driver::TensorInfo info = infoOf(s, *param);
    for (int64_t r = 0; r < s.result->numRanks(); ++r) {
      const sim::Coords c = s.result->grid.coordsOf(r);
      const std::vector<int64_t> coords(c.begin(), c.end());
      rt::driver::Placement p;
      REQUIRE(rt::driver::place(info, axisSizes, coords, &p).ok());
      const std::vector<uint8_t> want = storageOf(s.at(param->name, r));
      std::vector<uint8_t> got(want.size(), 0xee);
      rt::Status status = rt::driver::fillInput(info, options, axisSizes,
                                                coords, p, got.data());
      INFO(param->name << " on rank " << r << ": " << status.toString());
      REQUIRE(status.ok());
      CHECK(got == want);
    }
  }
}

/// Rank 0 of `blocks.size()` ranks whose blocks are given: it gathers the
/// blocks, or their hashes (writeResult's check of the copies).
class FakeTransport final : public rt::driver::Transport {
public:
  explicit FakeTransport(std::vector<std::vector<uint8_t>> blocks)
      : blocks(std::move(blocks)) {}
  int rank() const override { return 0; }
  int size() const override { return static_cast<int>(blocks.size()); }
  rt::Status gather(const void *data, size_t bytes,
                    std::vector<uint8_t> *all) override {
    all->clear();
    const uint64_t hash0 =
        rt::driver::blockHash(blocks[0].data(), blocks[0].size());
    if (bytes == sizeof hash0 && std::memcmp(data, &hash0, bytes) == 0) {
      for (const auto &b : blocks) {
        const uint64_t h = rt::driver::blockHash(b.data(), b.size());
        const auto *p = reinterpret_cast<const uint8_t *>(&h);
        all->insert(all->end(), p, p + sizeof h);
      }
      return rt::Status::success();
    }
    CHECK(bytes == blocks[0].size());
    CHECK(std::memcmp(data, blocks[0].data(), bytes) == 0);
    for (const auto &b : blocks)
      all->insert(all->end(), b.begin(), b.end());
    return rt::Status::success();
  }
  int maxOf(int value) override { return value; }
  void barrier() override {}
  void maxOf(double *, size_t) override {}

private:
  std::vector<std::vector<uint8_t>> blocks;
};

std::string contents(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buffer);
  return (*buffer)->getBuffer().str();
}

/// Writes every result with writeResult and compares the files with
/// sim::writeResults's.
void checkResults(const test::Simulated &s) {
  TempDir simDir, driverDir;
  REQUIRE(!sim::writeResults(s.program(), *s.result, simDir.path));
  rt::driver::Options options;
  options.outputDir = driverDir.file("nested/out");
  const std::vector<int64_t> axisSizes = axisSizesOf(*s.result);
  const auto &results = s.program().getResults();
  for (size_t i = 0; i < results.size(); ++i) {
    const ir::Stage &stage = *results[i];
    const std::string name = sim::resultName(s.program(), i);
    std::vector<std::vector<uint8_t>> blocks;
    for (int64_t r = 0; r < s.result->numRanks(); ++r)
      blocks.push_back(storageOf(s.result->value(stage, r)));
    rt::driver::TensorInfo info = infoOf(s, stage);
    info.name = name;
    rt::Status status;
    if (s.result->numRanks() == 1) {
      status = rt::driver::writeResult(info, options, axisSizes,
                                       rt::driver::singleProcess(),
                                       blocks[0].data());
    } else {
      FakeTransport transport(blocks);
      status = rt::driver::writeResult(info, options, axisSizes, transport,
                                       blocks[0].data());
    }
    INFO(name << ": " << status.toString());
    REQUIRE(status.ok());
    CHECK(contents(driverDir.file("nested/out/" + name + ".npy")) ==
          contents(simDir.file(name + ".npy")));
  }
}

} // namespace

TEST_CASE("fillInput generates the simulator's inputs", "[runtime][driver]") {
  for (bool wide : {false, true})
    for (uint64_t seed : {uint64_t(1), uint64_t(0x123456789abcull)}) {
      DYNAMIC_SECTION((wide ? "wide" : "uniform") << " inputs, seed " << seed) {
        sim::SimOptions o = meshOptions(2, 3);
        o.seed = seed;
        o.inputKind = wide ? sim::InputKind::Wide : sim::InputKind::Uniform;
        auto s = simulateSource(kProgram, o);
        REQUIRE(s.error == "");
        rt::driver::Options options;
        options.seed = seed;
        options.inputKind =
            wide ? rt::driver::InputKind::Wide : rt::driver::InputKind::Uniform;
        checkInputs(s, options);
        checkResults(s);
      }
    }
}

TEST_CASE("fillInput sets values as the simulator does", "[runtime][driver]") {
  const std::vector<std::map<std::string, std::string>> cases = {
      {{"x0", "0.1"},
       {"x1", "-2.7e-3"},
       {"x2", "1e-40"},
       {"x3", "0x1.8p3"},
       {"x4", "-2147483648"},
       {"x5", "0x7fffffffffffffff"},
       {"x6", "18446744073709551615"},
       {"x7", "true"},
       {"s0", "65519"},
       {"s1", "-3.38e38"},
       {"s2", "3.4028235e38"},
       {"s3", "-0.0"},
       {"s4", "017"},
       {"s5", "-0b101"},
       {"s6", "0o777"},
       {"s7", "0"}},
      {{"x0", "nan"},
       {"x1", "-0"},
       {"x2", "inf"},
       {"x3", "-inf"},
       {"s0", "65504"},
       {"s1", "1e-40"},
       {"s2", "0.1"},
       {"s3", "1e308"},
       {"s7", "false"}}};
  for (size_t i = 0; i < cases.size(); ++i) {
    DYNAMIC_SECTION("case " << i) {
      sim::SimOptions o = meshOptions(2, 3);
      o.scalarValues = cases[i];
      auto s = simulateSource(kProgram, o);
      REQUIRE(s.error == "");
      rt::driver::Options options;
      options.values = cases[i];
      checkInputs(s, options);
      checkResults(s);
    }
  }
}

TEST_CASE("fillInput refuses values as the simulator does",
          "[runtime][driver]") {
  for (const auto &[name, value] :
       std::vector<std::pair<std::string, std::string>>{{"x4", "abc"},
                                                        {"x4", "2147483648"},
                                                        {"s6", "-1"},
                                                        {"s5", "1.5"},
                                                        {"s7", "yes"},
                                                        {"x2", "1.5x"},
                                                        {"s3", ""},
                                                        // Out of range, and
                                                        // not 0 but rounded
                                                        // to it.
                                                        {"s0", "65520"},
                                                        {"s1", "1e-45"},
                                                        {"s1", "-1e39"},
                                                        {"s2", "1e39"},
                                                        {"x2", "1e999"}}) {
    sim::SimOptions o = meshOptions(2, 3);
    o.scalarValues[name] = value;
    auto s = simulateSource(kProgram, o);
    REQUIRE(s.error != "");
    rt::driver::Options options;
    options.values[name] = value;
    auto checked = test::check(kProgram);
    const ir::Stage &param = *checked.module->programs.front()->findStage(name);
    std::vector<int64_t> shape;
    for (const ir::Dim &d : param.type.shape)
      shape.push_back(*d.evaluate(o.sizes));
    const rt::driver::TensorInfo info = test::infoOf(param, shape);
    rt::driver::Placement p;
    REQUIRE(rt::driver::place(info, {2, 3}, {0, 0}, &p).ok());
    std::vector<uint8_t> block(p.elements() * rt::dtypeSize(info.dtype));
    rt::Status status =
        rt::driver::fillInput(info, options, {2, 3}, {0, 0}, p, block.data());
    CHECK(status.code() == rt::StatusCode::InvalidArgument);
    CHECK(status.message() == s.error);
  }
}

TEST_CASE("fillInput reads the simulator's .npy files", "[runtime][driver]") {
  // The files: every parameter of a run with another seed, in assembled
  // form, as the simulator writes its results.
  TempDir dir;
  {
    sim::SimOptions o = meshOptions(2, 3);
    o.seed = 77;
    auto s = simulateSource(kProgram, o);
    REQUIRE(s.error == "");
    REQUIRE(!sim::writeResults(s.program(), *s.result, dir.path));
  }
  sim::SimOptions o = meshOptions(2, 3);
  rt::driver::Options options;
  for (const char *name : {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "s0",
                           "s1", "s2", "s3", "s4", "s5", "s6", "s7"}) {
    o.inputFiles[name] = dir.file(std::string(name) + ".npy");
    options.inputs[name] = dir.file(std::string(name) + ".npy");
  }
  auto s = simulateSource(kProgram, o);
  REQUIRE(s.error == "");
  checkInputs(s, options);
  checkResults(s);

  SECTION("a file of the wrong shape or type is refused") {
    const ir::Stage &x2 = s.stage("x2");
    const rt::driver::TensorInfo info = infoOf(s, x2);
    rt::driver::Placement p;
    REQUIRE(rt::driver::place(info, {2, 3}, {0, 0}, &p).ok());
    std::vector<float> block(p.elements());
    rt::driver::Options bad;
    bad.inputs["x2"] = dir.file("x0.npy");
    rt::Status status =
        rt::driver::fillInput(info, bad, {2, 3}, {0, 0}, p, block.data());
    CHECK(status.message() == dir.file("x0.npy") +
                                  ": input 'x2': expected shape (12, 6), the "
                                  "file has (6, 12, 6)");
    bad.inputs["x2"] = dir.file("x4.npy");
    status = rt::driver::fillInput(info, bad, {2, 3}, {0, 0}, p, block.data());
    CHECK(status.message() == dir.file("x4.npy") +
                                  ": input 'x2': a f32 parameter cannot be "
                                  "read from '<i4' data");
    bad.inputs["x2"] = dir.file("missing.npy");
    status = rt::driver::fillInput(info, bad, {2, 3}, {0, 0}, p, block.data());
    CHECK(status.code() == rt::StatusCode::IoError);
    CHECK(status.message().rfind(
              "cannot read '" + dir.file("missing.npy") + "': ", 0) == 0);
  }
  SECTION("entries of one local group must agree") {
    // x5 is local on b only: ranks 0 (0, 0) and 3 (1, 0) hold one block.
    rt::NpyArray array;
    REQUIRE(rt::readNpyFile(dir.file("x5.npy"), &array).ok());
    array.data[3 * 12 * 8] ^= 1;
    REQUIRE(rt::writeNpyFile(dir.file("x5.npy"), array).ok());
    sim::SimOptions o2 = meshOptions(2, 3);
    o2.inputFiles["x5"] = dir.file("x5.npy");
    auto s2 = simulateSource(kProgram, o2);
    CHECK(s2.error.find("entries 0 and 3 must be equal") != std::string::npos);
    const rt::driver::TensorInfo info = infoOf(s, s.stage("x5"));
    for (int64_t r : {0, 1, 5}) {
      const sim::Coords c = s.result->grid.coordsOf(r);
      const std::vector<int64_t> coords(c.begin(), c.end());
      rt::driver::Placement p;
      REQUIRE(rt::driver::place(info, {2, 3}, coords, &p).ok());
      std::vector<int64_t> block(p.elements());
      rt::driver::Options bad;
      bad.inputs["x5"] = dir.file("x5.npy");
      rt::Status status =
          rt::driver::fillInput(info, bad, {2, 3}, coords, p, block.data());
      CHECK(status.code() == rt::StatusCode::InvalidArgument);
      CHECK(status.message().find("entries 0 and 3 must be equal") !=
            std::string::npos);
    }
  }
}

TEST_CASE("writeResult of a single-process run writes the simulator's bytes",
          "[runtime][driver]") {
  sim::SimOptions o = meshOptions(1, 1);
  o.seed = 5;
  auto s = simulateSource(kProgram, o);
  REQUIRE(s.error == "");
  checkResults(s);

  // A computed result too: f16 arithmetic rounded at every step.
  sim::SimOptions o2;
  o2.sizes = {{"P", 1}, {"N", 16}};
  auto s2 = simulateSource(R"(
program u(x: f16[N] local, y: bf16[N]) {
  z = x * x + 1;
  w = y / (y - y);
  return z, w;
})",
                           o2);
  REQUIRE(s2.error == "");
  checkResults(s2);
}

TEST_CASE("writeResult refuses copies of one block that differ",
          "[runtime][driver]") {
  // A value replicated on axis 0 and sliced along its dimension on axis 1
  // of a 2x2 mesh: ranks 0 and 2 hold block 0, ranks 1 and 3 block 1.
  rt::driver::TensorInfo info;
  info.name = "w";
  info.dtype = rt::DType::F32;
  info.globalShape = {4};
  info.layout = {{rt::driver::AxisState::Replicated, 0},
                 {rt::driver::AxisState::Sliced, 0}};
  auto bytesOf = [](std::vector<float> v) {
    std::vector<uint8_t> b(v.size() * sizeof(float));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  TempDir dir;
  rt::driver::Options options;
  options.outputDir = dir.path.str().str();
  std::vector<std::vector<uint8_t>> blocks = {bytesOf({1, 2}), bytesOf({3, 4}),
                                              bytesOf({1, 2}), bytesOf({3, 4})};
  {
    FakeTransport same(blocks);
    CHECK(rt::driver::writeResult(info, options, {2, 2}, same, blocks[0].data())
              .ok());
  }
  // Rank 3's copy of block 1 has one element that is not rank 1's.
  blocks[3] = bytesOf({3, -4});
  FakeTransport differ(blocks);
  const rt::Status status =
      rt::driver::writeResult(info, options, {2, 2}, differ, blocks[0].data());
  INFO(status.toString());
  CHECK(status.code() == rt::StatusCode::Internal);
  CHECK(status.message() ==
        "the copies of 'w' differ: rank 3's block at [2] is not rank 1's, "
        "which holds the same block");
  // Replicated on every axis: rank 0's copy is written, without a gather
  // of the blocks, and still checked.
  info.layout = {{rt::driver::AxisState::Replicated, 0},
                 {rt::driver::AxisState::Replicated, 0}};
  info.globalShape = {2};
  std::vector<std::vector<uint8_t>> replicas = {
      bytesOf({1, 2}), bytesOf({1, 2}), bytesOf({1, 2}), bytesOf({1, 2.5})};
  FakeTransport replicated(replicas);
  CHECK(rt::driver::writeResult(info, options, {2, 2}, replicated,
                                replicas[0].data())
            .message()
            .find("rank 3's block at [0] is not rank 0's") !=
        std::string::npos);
}

TEST_CASE("writeResult writes nothing without an output directory",
          "[runtime][driver]") {
  rt::driver::TensorInfo info;
  info.name = "x";
  info.globalShape = {4};
  info.layout = {{rt::driver::AxisState::Replicated, 0}};
  const float block[4] = {1, 2, 3, 4};
  rt::driver::Options options;
  CHECK(rt::driver::writeResult(info, options, {1}, rt::driver::singleProcess(),
                                block)
            .ok());
  // The transport must span the mesh.
  TempDir dir;
  options.outputDir = dir.path.str().str();
  CHECK(rt::driver::writeResult(info, options, {2}, rt::driver::singleProcess(),
                                block)
            .code() == rt::StatusCode::InvalidArgument);
  std::vector<uint8_t> all;
  REQUIRE(rt::driver::singleProcess().gather(block, sizeof block, &all).ok());
  CHECK(all.size() == sizeof block);
  CHECK(rt::driver::singleProcess().rank() == 0);
  CHECK(rt::driver::singleProcess().size() == 1);
}

TEST_CASE("a driver's blocks are zeroed and on a 64-byte boundary",
          "[runtime][driver]") {
  // malloc hands a large block out 16 bytes past a page (its mmap'd
  // chunk's header), and a small one on 16 bytes: a kernel's vectors then
  // straddle two cache lines. Sizes on both sides of malloc's mmap
  // threshold, and odd ones.
  for (int64_t n : {int64_t(1), int64_t(3), int64_t(1000), int64_t(1) << 16,
                    int64_t(1) << 20, (int64_t(1) << 22) + 5}) {
    DYNAMIC_SECTION("f16[" << n << "]") {
      rt::driver::HostBlock block;
      rt::driver::TensorInfo info;
      info.name = "x";
      info.dtype = rt::DType::F16;
      info.globalShape = {n};
      REQUIRE(block.makeHost(info, {}, {}, nullptr).ok());
      REQUIRE(block.host.size() == static_cast<size_t>(n) * 2);
      CHECK(reinterpret_cast<uintptr_t>(block.host.data()) % 64 == 0);
      CHECK(std::all_of(block.host.begin(), block.host.end(),
                        [](uint8_t b) { return b == 0; }));
    }
  }
}
