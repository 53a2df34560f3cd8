//===- LowerTestUtil.h - plans in unit tests --------------------*- C++ -*-===//
//
// The plan of a program under a schedule, a buffer by name, the steps'
// names and the printed plan.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_UNIT_LOWER_LOWERTESTUTIL_H
#define COCONET_TEST_UNIT_LOWER_LOWERTESTUTIL_H

#include "../passes/PassTestUtil.h"

#include "lower/Lower.h"
#include "lower/Plan.h"

#include "llvm/Support/raw_ostream.h"

namespace coconet::test {

/// The plan of `program` under schedule `name` ("" for none).
inline std::unique_ptr<lower::Plan>
planOf(const Compiled &c, llvm::StringRef name, Scheduled &keep,
       const lower::LowerOptions &options = {}) {
  keep = name.empty() ? applySchedule(c, "", true) : schedule(c, name, true);
  REQUIRE(keep.program);
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(*c.sourceMgr, os);
  auto plan = lower::lowerProgram(*keep.program, name, diags, options);
  INFO(out);
  REQUIRE(plan);
  return plan;
}

inline const lower::Buffer &buffer(const lower::Plan &plan,
                                   llvm::StringRef name) {
  for (const lower::Buffer &b : plan.buffers)
    if (b.name == name)
      return b;
  FAIL("no buffer " << name.str());
  return plan.buffers.front();
}

inline unsigned bufferIndex(const lower::Plan &plan, llvm::StringRef name) {
  return static_cast<unsigned>(&buffer(plan, name) - plan.buffers.data());
}

inline std::vector<std::string> stepNames(const lower::Plan &plan) {
  std::vector<std::string> out;
  for (const lower::Step &s : plan.steps)
    out.push_back(s.name);
  return out;
}

inline std::string printed(const lower::Plan &plan) {
  std::string out;
  llvm::raw_string_ostream os(out);
  lower::printPlan(plan, os);
  return out;
}

} // namespace coconet::test

#endif // COCONET_TEST_UNIT_LOWER_LOWERTESTUTIL_H
