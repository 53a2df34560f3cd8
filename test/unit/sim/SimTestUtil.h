//===- SimTestUtil.h - running programs given as text -----------*- C++ -*-===//

#ifndef COCONET_TEST_UNIT_SIM_SIMTESTUTIL_H
#define COCONET_TEST_UNIT_SIM_SIMTESTUTIL_H

#include "../sema/SemaTestUtil.h"

#include "sim/Simulator.h"

#include <catch2/catch.hpp>

#include <functional>

namespace coconet::test {

/// A checked program and one simulated run of it.
struct Simulated {
  Checked checked;
  std::optional<sim::SimResult> result;
  std::string error;

  const ir::Program &program() const {
    return *checked.module->programs.front();
  }
  const ir::Stage &stage(llvm::StringRef name) const {
    const ir::Stage *s = program().findStage(name);
    REQUIRE(s);
    return *s;
  }
  /// The block of `name` on `rank`.
  const sim::Tensor &at(llvm::StringRef name, int64_t rank) const {
    return result->value(stage(name), rank);
  }
  sim::Tensor assembled(llvm::StringRef name) const {
    return result->assembled(program(), stage(name));
  }
};

inline Simulated simulateSource(llvm::StringRef source,
                                sim::SimOptions options) {
  Simulated s;
  s.checked = check(source);
  INFO(s.checked.diagnostics);
  REQUIRE(s.checked.module);
  REQUIRE(s.checked.errors == 0);
  auto r = sim::simulate(s.program(), options);
  if (!r)
    s.error = llvm::toString(r.takeError());
  else
    s.result.emplace(std::move(*r));
  return s;
}

/// A tensor of `dtype` and `shape` whose element i is f(i).
inline sim::Tensor makeTensor(ir::DType dtype, llvm::ArrayRef<int64_t> shape,
                              const std::function<double(int64_t)> &f) {
  sim::Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, f(i));
  return t;
}

inline std::vector<double> values(const sim::Tensor &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.size(); ++i)
    v.push_back(t.get(i));
  return v;
}

} // namespace coconet::test

#endif // COCONET_TEST_UNIT_SIM_SIMTESTUTIL_H
