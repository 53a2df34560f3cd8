//===- ReferenceTest.cpp - samples against hand-written reference steps ---===//
//
// samples/sgd.coco and samples/adam.coco, run by the simulator, must equal
// a straightforward C++ implementation of the same optimizer step, bit for
// bit: the gradients are summed over ranks in f64 in rank order and
// rounded to f16 once (the allreduce's semantics), and everything after
// that is plain f32 arithmetic in the order the program writes it.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include "diag/Diagnostic.h"
#include "sema/Sema.h"
#include "support/Half.h"

#include <cmath>
#include <cstring>

using namespace coconet;
using ir::DType;

namespace {

struct Sample {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<ir::Module> module;
  std::string diagnostics;

  explicit Sample(llvm::StringRef name) {
    llvm::raw_string_ostream os(diagnostics);
    DiagnosticEngine diags(sourceMgr, os);
    sema::SemaOptions options;
    options.stdlibDir = COCONET_SOURCE_DIR "/stdlib";
    module = sema::compileFile(
        sourceMgr, diags, COCONET_SOURCE_DIR "/samples/" + name.str(), options);
  }
  const ir::Program &program() const { return *module->programs.front(); }
  std::vector<float> param(const sim::SimResult &r,
                           llvm::StringRef name) const {
    sim::Tensor t = r.assembled(program(), *program().findStage(name));
    std::vector<float> v;
    for (int64_t i = 0; i < t.size(); ++i)
      v.push_back(static_cast<float>(t.get(i)));
    return v;
  }
  /// The value of result `name` (an updated parameter) after the step.
  std::vector<float> result(const sim::SimResult &r,
                            llvm::StringRef name) const {
    for (size_t i = 0; i < program().getResults().size(); ++i)
      if (sim::resultName(program(), i) == name) {
        const ir::Stage *s = program().getResults()[i];
        sim::Tensor t = r.assembled(program(), *s);
        std::vector<float> v;
        for (int64_t i = 0; i < t.size(); ++i)
          v.push_back(static_cast<float>(t.get(i)));
        return v;
      }
    FAIL("no result " << name.str());
    return {};
  }
};

/// allreduce(sum, g) of f16 gradients: stacked [P, N] -> [N].
std::vector<float> allreduceF16(const std::vector<float> &g, int64_t p,
                                int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    double acc = 0;
    for (int64_t r = 0; r < p; ++r)
      acc += g[r * n + i];
    out[i] = static_cast<float>(support::roundToHalf(acc));
  }
  return out;
}

bool bitwiseEqual(const std::vector<float> &a, const std::vector<float> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
      return false;
  return true;
}

} // namespace

TEST_CASE("sgd.coco equals a hand-written SGD step", "[sim][reference]") {
  Sample sample("sgd.coco");
  INFO(sample.diagnostics);
  REQUIRE(sample.module);
  for (int64_t p : {1, 2, 4}) {
    for (uint64_t seed : {1u, 2u}) {
      DYNAMIC_SECTION(p << " ranks, seed " << seed) {
        const int64_t n = 64;
        sim::SimOptions o;
        o.sizes["P"] = p;
        o.sizes["N"] = n;
        o.seed = seed;
        auto r = sim::simulate(sample.program(), o);
        if (!r)
          FAIL(llvm::toString(r.takeError()));
        auto g = sample.param(*r, "g");
        auto w = sample.param(*r, "w");
        float lr = sample.param(*r, "lr")[0];
        auto gs = allreduceF16(g, p, n);
        std::vector<float> expected(n);
        for (int64_t i = 0; i < n; ++i)
          expected[i] = w[i] - lr * gs[i];
        CHECK(bitwiseEqual(sample.result(*r, "w"), expected));
      }
    }
  }
}

TEST_CASE("adam.coco equals a hand-written Adam step", "[sim][reference]") {
  Sample sample("adam.coco");
  INFO(sample.diagnostics);
  REQUIRE(sample.module);
  for (int64_t p : {1, 2, 4}) {
    for (uint64_t seed : {1u, 3u}) {
      DYNAMIC_SECTION(p << " ranks, seed " << seed) {
        const int64_t n = 128;
        sim::SimOptions o;
        o.sizes["P"] = p;
        o.sizes["N"] = n;
        o.seed = seed;
        o.scalarValues["lr"] = "0.001";
        o.scalarValues["beta1"] = "0.9";
        o.scalarValues["beta2"] = "0.999";
        o.scalarValues["eps"] = "1e-8";
        o.scalarValues["step"] = "3";
        // The second moment must be non-negative; the others are generated.
        o.inputTensors["v"] = test::makeTensor(DType::F32, {n}, [](int64_t i) {
          return 0.001 * static_cast<double>(i % 7);
        });
        auto r = sim::simulate(sample.program(), o);
        if (!r)
          FAIL(llvm::toString(r.takeError()));
        auto g = sample.param(*r, "g");
        auto w = sample.param(*r, "w"), m = sample.param(*r, "m"),
             v = sample.param(*r, "v");
        const float lr = 0.001f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
        const int step = 3;
        auto gs = allreduceF16(g, p, n);
        std::vector<float> w1(n), m1(n), v1(n);
        for (int64_t i = 0; i < n; ++i) {
          float g32 = gs[i];
          m1[i] = beta1 * m[i] + (1 - beta1) * g32;
          v1[i] = beta2 * v[i] + (1 - beta2) * g32 * g32;
          float mhat = m1[i] / (1 - std::pow(beta1, static_cast<float>(step)));
          float vhat = v1[i] / (1 - std::pow(beta2, static_cast<float>(step)));
          w1[i] = w[i] - lr * mhat / (std::sqrt(vhat) + eps);
        }
        CHECK(bitwiseEqual(sample.result(*r, "m"), m1));
        CHECK(bitwiseEqual(sample.result(*r, "v"), v1));
        CHECK(bitwiseEqual(sample.result(*r, "w"), w1));
      }
    }
  }
}
