//===- SimulatorTest.cpp - computation stages, rounding and inputs --------===//

#include "SimTestUtil.h"

#include "sim/Inputs.h"
#include "support/Philox.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace coconet;
using coconet::test::makeTensor;
using coconet::test::simulateSource;
using coconet::test::values;
using ir::DType;

static sim::SimOptions ranks(int64_t p) {
  sim::SimOptions o;
  o.sizes["P"] = p;
  return o;
}

TEST_CASE("f16 values are rounded to nearest even at every store",
          "[sim][rounding]") {
  sim::SimOptions o = ranks(1);
  // 1 + 2^-11 is halfway between 1 and the next f16 (1 + 2^-10): ties go to
  // the even significand, 1. 1 + 3 * 2^-11 goes up to 1 + 2^-9.
  o.inputTensors["a"] =
      makeTensor(DType::F16, {2}, [](int64_t) { return 1.0; });
  o.inputTensors["b"] = makeTensor(DType::F32, {2}, [](int64_t i) {
    return i == 0 ? std::ldexp(1.0, -11) : 3 * std::ldexp(1.0, -11);
  });
  auto s = simulateSource(R"(
program t(a: f16[2] replicated, b: f32[2] replicated) {
  c = a + f16(b);      // f16(b) rounds b: 2^-11 is exact in f16
  d = f32(a) + b;      // exact in f32
  e = f16(d);
  return c, d, e;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(s.at("c", 0).get(0) == 1.0);
  CHECK(s.at("c", 0).get(1) == 1.0 + std::ldexp(1.0, -9));
  CHECK(s.at("d", 0).get(0) == 1.0 + std::ldexp(1.0, -11));
  CHECK(s.at("e", 0).get(0) == 1.0);
}

TEST_CASE("bf16 arithmetic computes in f32 and rounds", "[sim][rounding]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["a"] =
      makeTensor(DType::BF16, {1}, [](int64_t) { return 1.0; });
  auto s = simulateSource(R"(
program t(a: bf16[1] replicated) {
  b = a + 0.00390625;  // 2^-8: halfway to the next bf16 after 1, ties to 1
  c = a + 0.01171875;  // 3 * 2^-8: rounds up to 1 + 2^-6
  return b, c;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(s.at("b", 0).get(0) == 1.0);
  CHECK(s.at("c", 0).get(0) == 1.0 + std::ldexp(1.0, -6));
}

TEST_CASE("f32 arithmetic is single precision", "[sim][rounding]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["a"] =
      makeTensor(DType::F32, {1}, [](int64_t) { return 1.0; });
  auto s = simulateSource(R"(
program t(a: f32[1] replicated) { b = (a + 0.00000001) - a; return b; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(s.at("b", 0).get(0) == 0.0); // 1e-8 is lost against 1 in f32
}

TEST_CASE("reductions accumulate in f64 and round once", "[sim][reduction]") {
  sim::SimOptions o = ranks(1);
  // 2048 + 1 + 1 in f16: adding one at a time would stay at 2048 (ulp 2);
  // f64 accumulation gives 2050, which is representable.
  o.inputTensors["x"] = makeTensor(
      DType::F16, {3}, [](int64_t i) { return i == 0 ? 2048.0 : 1.0; });
  auto s = simulateSource(R"(
program t(x: f16[3] replicated) { s = sum(x); m = max(x); n = norm(x);
  return s, m, n; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(s.at("s", 0).get(0) == 2050.0);
  CHECK(s.at("m", 0).get(0) == 2048.0);
  // sqrt(2048^2 + 2) = 2048.0004..., which rounds to 2048 in f16.
  CHECK(s.at("n", 0).get(0) == 2048.0);
}

TEST_CASE("a reduction along a dimension", "[sim][reduction]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["x"] = makeTensor(
      DType::F32, {2, 3}, [](int64_t i) { return static_cast<double>(i); });
  auto s = simulateSource(R"(
program t(x: f32[2, 3] replicated) { r = sum(x, dim=1); c = max(x, dim=0);
  return r, c; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("r", 0)) == std::vector<double>{3, 12});
  CHECK(values(s.at("c", 0)) == std::vector<double>{3, 4, 5});
}

TEST_CASE("a reduction of a sliced tensor is a per-rank partial value",
          "[sim][reduction]") {
  sim::SimOptions o = ranks(2);
  o.sizes["N"] = 4;
  o.inputTensors["x"] = makeTensor(
      DType::F32, {4}, [](int64_t i) { return static_cast<double>(i + 1); });
  auto s = simulateSource(R"(
program t(x: f32[N] sliced) { p = sum(x); t = allreduce(sum, p); return t; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(s.at("p", 0).get(0) == 3.0);
  CHECK(s.at("p", 1).get(0) == 7.0);
  CHECK(s.at("t", 1).get(0) == 10.0);
}

TEST_CASE("elementwise operands are read at the slice's offset",
          "[sim][elementwise]") {
  sim::SimOptions o = ranks(2);
  o.sizes["N"] = 4;
  o.inputTensors["x"] = makeTensor(
      DType::F32, {4}, [](int64_t i) { return static_cast<double>(i); });
  o.inputTensors["r"] = makeTensor(DType::F32, {4}, [](int64_t i) {
    return 100.0 * static_cast<double>(i);
  });
  auto s = simulateSource(R"(
program t(x: f32[N] sliced, r: f32[N] replicated) { y = x + r; return y; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("y", 1)) == std::vector<double>{202, 303});
}

TEST_CASE("broadcasting repeats trailing-aligned operands",
          "[sim][elementwise]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["x"] =
      makeTensor(DType::F32, {2, 3}, [](int64_t) { return 0; });
  o.inputTensors["b"] = makeTensor(
      DType::F32, {3}, [](int64_t i) { return static_cast<double>(i + 1); });
  auto s = simulateSource(R"(
program t(x: f32[2, 3] replicated, b: f32[3] replicated) {
  y = x + b * 2; return y; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("y", 0)) == std::vector<double>{2, 4, 6, 2, 4, 6});
}

TEST_CASE("integer arithmetic wraps and divides toward zero",
          "[sim][elementwise]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["x"] = makeTensor(DType::I32, {3}, [](int64_t i) {
    return i == 0 ? 2147483647.0 : (i == 1 ? -7.0 : 7.0);
  });
  auto s = simulateSource(R"(
program t(x: i32[3] replicated) { a = x + 1; d = x / 2; z = x / 0;
  c = i32(f32(x) * 0.5); return a, d, z, c; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(s.at("a", 0).getInt(0) == -2147483648LL);
  CHECK(s.at("d", 0).getInt(1) == -3);
  CHECK(s.at("z", 0).getInt(2) == 0);
  CHECK(s.at("c", 0).getInt(1) == -3); // -3.5 truncates toward zero
}

TEST_CASE("select and comparisons", "[sim][elementwise]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["x"] = makeTensor(
      DType::F32, {3}, [](int64_t i) { return static_cast<double>(i) - 1; });
  auto s = simulateSource(R"(
program t(x: f32[3] replicated) { y = select(x > 0, x, 0 - x) + relu(x);
  return y; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("y", 0)) == std::vector<double>{1, 0, 2});
}

TEST_CASE("dropout masks depend only on the global element index",
          "[sim][dropout]") {
  const char *src = R"(
program t(x: f32[N] sliced, r: f32[N] replicated, p: f32, seed: u64) {
  a = dropout(x, p, seed); b = dropout(r, p, seed); return a, b; })";
  sim::SimOptions o = ranks(4);
  o.sizes["N"] = 64;
  o.scalarValues["p"] = "0.25";
  o.scalarValues["seed"] = "12345";
  auto one = makeTensor(DType::F32, {64}, [](int64_t) { return 1.0; });
  o.inputTensors["x"] = one;
  o.inputTensors["r"] = one;
  auto s = simulateSource(src, o);
  REQUIRE(s.error == "");
  auto a = values(s.assembled("a")), b = values(s.assembled("b"));
  CHECK(a == b); // sliced and replicated give the same mask
  int64_t kept = 0;
  for (int64_t i = 0; i < 64; ++i) {
    bool keep = support::dropoutKeep(12345, static_cast<uint64_t>(i), 0.25f);
    CHECK(a[i] == (keep ? static_cast<double>(1.0f / 0.75f) : 0.0));
    kept += keep;
  }
  CHECK(kept > 0);
  CHECK(kept < 64);
}

TEST_CASE("matmul: K-sliced partial sums, columns, rows", "[sim][matmul]") {
  sim::SimOptions o = ranks(2);
  o.sizes["M"] = 2;
  o.sizes["K"] = 4;
  o.sizes["N"] = 2;
  // a = [[1 2 3 4] [5 6 7 8]], b = [[-3 -2] [-1 0] [1 2] [3 4]];
  // a b = [[10 20] [10 36]].
  auto a = makeTensor(DType::F32, {2, 4}, [](int64_t i) { return i + 1.0; });
  auto b = makeTensor(DType::F32, {4, 2}, [](int64_t i) { return i - 3.0; });
  for (const char *n : {"a", "ar", "as"})
    o.inputTensors[n] = a;
  for (const char *n : {"b", "br", "bc"})
    o.inputTensors[n] = b;
  auto s = simulateSource(R"(
program t(a: f32[M, K] sliced(1), b: f32[K, N] sliced(0),
          ar: f32[M, K] replicated, br: f32[K, N] replicated,
          bc: f32[K, N] sliced(1), as: f32[M, K] sliced(0)) {
  partial = matmul(a, b);
  full = allreduce(sum, partial);
  ref = matmul(ar, br);
  cols = matmul(ar, bc);
  rows = matmul(as, br);
  return full, ref, cols, rows;
})",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("partial", 0)) == std::vector<double>{-5, -2, -21, -10});
  CHECK(values(s.at("partial", 1)) == std::vector<double>{15, 22, 31, 46});
  CHECK(values(s.at("full", 1)) == std::vector<double>{10, 20, 10, 36});
  CHECK(values(s.at("ref", 0)) == std::vector<double>{10, 20, 10, 36});
  CHECK(values(s.at("cols", 1)) == std::vector<double>{20, 36});
  CHECK(values(s.at("rows", 1)) == std::vector<double>{10, 36});
}

TEST_CASE("batched matmul and transpose", "[sim][matmul]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["a"] = makeTensor(DType::F32, {2, 1, 2}, [](int64_t i) {
    return i + 1.0; // [[1 2]], [[3 4]]
  });
  o.inputTensors["b"] = makeTensor(DType::F32, {2, 1}, [](int64_t i) {
    return i + 1.0; // [[1] [2]]
  });
  auto s = simulateSource(R"(
program t(a: f32[2, 1, 2] replicated, b: f32[2, 1] replicated) {
  c = matmul(a, b); d = transpose(a); return c, d; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("c", 0)) == std::vector<double>{5, 11});
  CHECK(s.at("d", 0).shape() == llvm::ArrayRef<int64_t>{2, 2, 1});
  CHECK(values(s.at("d", 0)) == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("layernorm and rmsnorm normalise each row", "[sim][norm]") {
  sim::SimOptions o = ranks(2);
  o.sizes["B"] = 2;
  o.inputTensors["x"] = makeTensor(DType::F32, {2, 4}, [](int64_t i) {
    return i < 4 ? static_cast<double>(i) : 2.0; // [0 1 2 3], [2 2 2 2]
  });
  o.inputTensors["g"] = makeTensor(DType::F32, {4}, [](int64_t) { return 2; });
  o.inputTensors["bt"] = makeTensor(DType::F32, {4}, [](int64_t) { return 1; });
  auto s = simulateSource(R"(
program t(x: f32[B, 4] sliced(0), g: f32[4] replicated, bt: f32[4] replicated) {
  y = layernorm(x, g, bt, 0.0); r = rmsnorm(x, g, 0.0); return y, r; })",
                          o);
  REQUIRE(s.error == "");
  // Row [0 1 2 3]: mean 1.5, variance 1.25.
  auto y = values(s.at("y", 0));
  REQUIRE(y.size() == 4);
  for (int i = 0; i < 4; ++i)
    CHECK(y[i] ==
          static_cast<float>((i - 1.5) * (1.0 / std::sqrt(1.25)) * 2 + 1));
  // Row [2 2 2 2] on rank 1: variance 0 -> (x - mean) / sqrt(0) = 0/0.
  CHECK(std::isnan(s.at("y", 1).get(0)));
  // rmsnorm of [2 2 2 2]: 2 / 2 * 2 = 2.
  CHECK(values(s.at("r", 1)) == std::vector<double>{2, 2, 2, 2});
}

TEST_CASE("generated inputs respect layouts", "[sim][inputs]") {
  sim::SimOptions o = ranks(4);
  o.sizes["N"] = 8;
  o.seed = 7;
  auto s = simulateSource(R"(
program t(r: f32[N] replicated, s: f32[N] sliced, l: f32[N] local,
          n: i32[N] replicated, lr: f32, k: i32, seed: u64) {
  y = r + s; return y; })",
                          o);
  REQUIRE(s.error == "");
  for (int64_t rank = 1; rank < 4; ++rank) {
    CHECK(s.at("r", rank) == s.at("r", 0));
    CHECK_FALSE(s.at("l", rank) == s.at("l", 0));
    CHECK(s.at("seed", rank) == s.at("seed", 0));
  }
  // The slices are blocks of one global tensor.
  auto global = values(s.assembled("s"));
  CHECK(s.at("s", 2).get(1) == global[5]);
  for (double v : global) {
    CHECK(v >= -1.0);
    CHECK(v < 1.0);
  }
  for (double v : values(s.at("n", 0))) {
    CHECK(v >= 0);
    CHECK(v <= 15);
    CHECK(v == std::floor(v));
  }
  double lr = s.at("lr", 0).get(0);
  CHECK(lr >= 0.05);
  CHECK(lr < 0.95);
  int64_t k = s.at("k", 0).getInt(0);
  CHECK(k >= 1);
  CHECK(k <= 8);
  // The values are the documented function of (seed, parameter, index).
  CHECK(s.at("r", 0).get(3) ==
        static_cast<float>(support::uniformInput(7, 0, 3)));
  CHECK(s.at("l", 2).get(0) == static_cast<float>(support::uniformInput(
                                   7, (uint64_t(2) << 32) | 2, 0)));
  // Another seed, other values.
  sim::SimOptions o2 = o;
  o2.seed = 8;
  auto s2 = simulateSource(R"(
program t(r: f32[N] replicated) { y = r * 2; return y; })",
                           o2);
  REQUIRE(s2.error == "");
  CHECK_FALSE(s2.at("r", 0) == s.at("r", 0));
}

TEST_CASE("wide inputs: the documented values, sums that see their order",
          "[sim][inputs]") {
  sim::SimOptions o = ranks(3);
  o.sizes["N"] = 96;
  o.seed = 5;
  o.inputKind = sim::InputKind::Wide;
  auto s = simulateSource(R"(
program t(h: f16[N] local, b: bf16[N] local, x: f32[N] local, d: f64[N] local,
          n: i32[N] local, lr: f32, k: i32) {
  y = allreduce(sum, x); z = allreduce(sum, d); return y, z; })",
                          o);
  REQUIRE(s.error == "");
  // Element i of parameter `index` on rank r (each rank its own group).
  auto u = [](uint64_t index, int64_t r, int64_t i) {
    return support::uniformInput(5, (index << 32) | uint64_t(r), i);
  };
  auto bits = [](uint64_t index, int64_t r, int64_t i) {
    return support::uniformInputBits(5, (index << 32) | uint64_t(r), i);
  };
  auto rounded = [](DType dtype, double v) {
    sim::Tensor t(dtype, {1});
    t.set(0, v);
    return t.get(0);
  };
  int big = 0, fine = 0;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t i = 0; i < 96; ++i) {
      // f16: as uniform inputs; bf16, f32, f64: +-2^54 when bits 0 and 1
      // are clear, else u (f64: +-[1, 2) with 53 random bits).
      CHECK(s.at("h", r).get(i) == rounded(DType::F16, u(0, r, i)));
      const uint64_t bb = bits(1, r, i), bx = bits(2, r, i), bd = bits(3, r, i);
      auto sign = [](uint64_t b) { return b & 4 ? -1.0 : 1.0; };
      CHECK(s.at("b", r).get(i) == ((bb & 3) == 0
                                        ? sign(bb) * 0x1p54
                                        : rounded(DType::BF16, u(1, r, i))));
      CHECK(s.at("x", r).get(i) == ((bx & 3) == 0
                                        ? sign(bx) * 0x1p54
                                        : rounded(DType::F32, u(2, r, i))));
      const double want = (bd & 3) == 0
                              ? sign(bd) * 0x1p54
                              : sign(bd) * (1 + double(bd >> 12) * 0x1p-52);
      CHECK(s.at("d", r).get(i) == want);
      big += (bx & 3) == 0;
      if ((bd & 3) != 0) {
        CHECK(std::fabs(want) >= 1.0);
        CHECK(std::fabs(want) < 2.0);
        // More bits than a float holds (almost always).
        fine += want != double(static_cast<float>(want));
      }
    }
  // About a quarter of the elements are +-2^54; the f64 ones carry all
  // their bits.
  CHECK(big > 96 * 3 / 8);
  CHECK(big < 96 * 3 / 2);
  CHECK(fine > 96 * 3 / 2);
  // Integers and scalars are drawn as uniform inputs are.
  for (double v : values(s.at("n", 1))) {
    CHECK(v >= 0);
    CHECK(v <= 15);
  }
  CHECK(s.at("lr", 0).get(0) >= 0.05);
  CHECK(s.at("lr", 0).get(0) < 0.95);
  CHECK(s.at("k", 0).getInt(0) >= 1);
  CHECK(s.at("k", 0).getInt(0) <= 8);
  // The point of them: the allreduces' sums, added in ascending member
  // order, differ from the same sums added in descending order.
  for (const char *name : {"y", "z"}) {
    const char *in = name[0] == 'y' ? "x" : "d";
    const DType dtype = name[0] == 'y' ? DType::F32 : DType::F64;
    int differ = 0;
    for (int64_t i = 0; i < 96; ++i) {
      double down = 0;
      for (int64_t r = 3; r-- > 0;)
        down += s.at(in, r).get(i);
      differ += rounded(dtype, down) != s.at(name, 0).get(i);
    }
    INFO(name << ": " << differ << " of 96 sums depend on the order");
    // About 7% of three f32 terms (two large ones that cancel, the small
    // one at an end), 40% of three f64 terms.
    CHECK(differ >= (dtype == DType::F32 ? 3 : 24));
  }
}

TEST_CASE("scalar values, bad values and unknown names", "[sim][inputs]") {
  const char *src = "program t(x: f32[4] replicated, lr: f32) { y = x * lr; "
                    "return y; }";
  sim::SimOptions o = ranks(1);
  o.scalarValues["lr"] = "0.5";
  o.inputTensors["x"] = makeTensor(DType::F32, {4}, [](int64_t) { return 3; });
  auto s = simulateSource(src, o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("y", 0)) == std::vector<double>{1.5, 1.5, 1.5, 1.5});

  o.scalarValues["lr"] = "fast";
  CHECK(simulateSource(src, o).error ==
        "--set lr=fast: expected a number for a parameter of type f32");
  // A tensor given by value has it in every element.
  o.scalarValues.clear();
  o.scalarValues["x"] = "2";
  o.scalarValues["lr"] = "0.25";
  auto filled = simulateSource(src, o);
  REQUIRE(filled.error == "");
  CHECK(values(filled.at("y", 0)) == std::vector<double>{0.5, 0.5, 0.5, 0.5});
  o.scalarValues.clear();
  o.scalarValues["mu"] = "1";
  CHECK(simulateSource(src, o).error ==
        "--set mu: program 't' has no parameter 'mu'");
}

TEST_CASE("results round-trip through .npy files", "[sim][npy]") {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("coconet-sim", dir));
  const char *src = R"(
program t(x: f16[N] local, w: f32[N] replicated) {
  s = allreduce(sum, x); w1 = update(w, w - f32(s)); return s; })";
  sim::SimOptions o = ranks(2);
  o.sizes["N"] = 4;
  auto s = simulateSource(src, o);
  REQUIRE(s.error == "");
  REQUIRE_FALSE(bool(sim::writeResults(s.program(), *s.result, dir)));
  // Feed the written w back as input: the same result comes out.
  llvm::SmallString<128> wPath(dir);
  llvm::sys::path::append(wPath, "w.npy");
  REQUIRE(llvm::sys::fs::exists(wPath));
  sim::SimOptions o2 = o;
  o2.inputFiles["w"] = std::string(wPath);
  auto s2 = simulateSource(src, o2);
  REQUIRE(s2.error == "");
  CHECK(s2.at("w", 1) == s.at("w1", 0));
  // A file of the wrong shape is refused with its path.
  sim::SimOptions o3 = o;
  o3.sizes["N"] = 8;
  o3.inputFiles["w"] = std::string(wPath);
  auto s3 = simulateSource(src, o3);
  CHECK(s3.error == std::string(wPath) +
                        ": input 'w': expected shape (8,), the file has (4,)");
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("abs and relu of integers", "[sim][elementwise]") {
  sim::SimOptions o = ranks(1);
  o.inputTensors["x"] = makeTensor(DType::I32, {3}, [](int64_t i) {
    return i == 0 ? -5.0 : (i == 1 ? 7.0 : -2147483648.0);
  });
  sim::Tensor u(DType::U64, {1});
  sim::Scalar big;
  big.i = uint64_t(1) << 63;
  u.setScalar(0, big);
  o.inputTensors["u"] = u;
  auto s = simulateSource(R"(
program t(x: i32[3] replicated, u: u64[1] replicated) {
  a = abs(x); r = relu(x); ua = abs(u); ur = relu(u); return a, r, ua, ur; })",
                          o);
  REQUIRE(s.error == "");
  CHECK(values(s.at("a", 0)) == std::vector<double>{5, 7, -2147483648.0});
  CHECK(values(s.at("r", 0)) == std::vector<double>{0, 7, 0});
  CHECK(s.at("ua", 0).getScalar(0).i == big.i);
  CHECK(s.at("ur", 0).getScalar(0).i == big.i);
}

TEST_CASE("nextCoords walks a block as coordsOf plus its offset",
          "[sim][coords]") {
  // Shapes with dimensions of 1 (a carry through them), and the wrap from
  // the last element back to the first.
  const std::vector<std::pair<sim::Coords, sim::Coords>> blocks = {
      {{5}, {3}},
      {{2, 3}, {0, 0}},
      {{3, 1, 4}, {6, 2, 8}},
      {{1, 1, 2}, {0, 5, 1}},
      {{2, 3, 1, 2}, {4, 0, 7, 2}}};
  for (const auto &[shape, offset] : blocks) {
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    sim::Coords walk(offset.begin(), offset.end()), expected;
    for (int64_t i = 0; i <= count; ++i) {
      sim::Tensor::coordsOf(i % count, shape, expected);
      for (size_t d = 0; d < expected.size(); ++d)
        expected[d] += offset[d];
      INFO("element " << i << " of " << count);
      CHECK(walk == expected);
      sim::Tensor::nextCoords(walk, shape, offset);
    }
  }
}
