//===- Measure.cpp - timing a table's schedules on this machine ----------===//
//
// See Measure.h; docs/tuner.md, "Measured", for what the measurements
// showed on the development VM.
//
//===----------------------------------------------------------------------===//

#include "tune/Measure.h"

#include "tune/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

namespace coconet::tune {

std::string stepText(const RunTime &t) {
  return "mean " + formatSeconds(t.mean) + ", fastest " +
         formatSeconds(t.fastest) + " a step";
}

llvm::Expected<RunTime> parseTimingLine(llvm::StringRef out) {
  size_t at = out.find(" ms per step, fastest ");
  if (at == llvm::StringRef::npos)
    return llvm::createStringError("no timing line");
  llvm::StringRef mean = out.take_front(at);
  mean = mean.substr(mean.find_last_of(' ') + 1);
  llvm::StringRef fastest = out.substr(at).drop_front(
      llvm::StringRef(" ms per step, fastest ").size());
  fastest = fastest.take_until([](char ch) { return ch == ' '; });
  RunTime t;
  if (mean.getAsDouble(t.mean) || fastest.getAsDouble(t.fastest))
    return llvm::createStringError("cannot read the times in: " + out.str());
  t.mean /= 1000;
  t.fastest /= 1000;
  return t;
}

llvm::Expected<Measured>
measureRows(size_t rows, const MeasurePolicy &policy,
            llvm::function_ref<llvm::Expected<RunTime>(size_t, int64_t)> run,
            llvm::function_ref<std::string(size_t)> label,
            llvm::raw_ostream &progress) {
  Measured out;
  out.steps.assign(rows, policy.iterations);
  std::vector<std::vector<double>> times(rows);
  // Short steps: a run of a few takes a millisecond, which the VM's
  // scheduling and the threads' wake-up dominate. A first run of each
  // schedule (it builds the program) says its step's time; the rounds'
  // runs then take enough steps for the run time.
  if (policy.runTimeMs > 0)
    for (size_t i = 0; i < rows; ++i) {
      progress << "coconetc tune: sizing " << i + 1 << " of " << rows << ": "
               << label(i);
      auto t = run(i, policy.iterations);
      if (!t) {
        progress << '\n';
        return t.takeError();
      }
      progress << " -> " << stepText(*t) << '\n';
      const double want = std::ceil(static_cast<double>(policy.runTimeMs) /
                                    1000 / std::max(t->mean, 1e-9));
      out.steps[i] = static_cast<int64_t>(
          std::clamp(want, static_cast<double>(policy.iterations), 1e6));
      if (out.steps[i] == policy.iterations)
        times[i].push_back(t->fastest);
    }
  for (int64_t round = 0; round < policy.rounds; ++round)
    for (size_t k = 0; k < rows; ++k) {
      const size_t i = round % 2 == 0 ? k : rows - 1 - k;
      if (static_cast<int64_t>(times[i].size()) > round)
        continue;
      progress << "coconetc tune: measuring " << i + 1 << " of " << rows
               << (policy.rounds > 1
                       ? ", round " + std::to_string(round + 1) + " of " +
                             std::to_string(policy.rounds)
                       : std::string())
               << ", " << out.steps[i] << " steps: " << label(i);
      auto t = run(i, out.steps[i]);
      if (!t) {
        progress << '\n';
        return t.takeError();
      }
      progress << " -> " << stepText(*t) << '\n';
      times[i].push_back(t->fastest);
    }
  for (const std::vector<double> &ts : times)
    out.seconds.push_back(*llvm::min_element(ts));
  return out;
}

std::string stepsText(llvm::ArrayRef<int64_t> steps, int64_t runTimeMs) {
  const auto [lo, hi] = std::minmax_element(steps.begin(), steps.end());
  std::string text = std::to_string(*lo);
  if (*hi != *lo)
    text += " to " + std::to_string(*hi);
  text += " steps";
  if (runTimeMs > 0)
    return text + " (at least " + std::to_string(runTimeMs) + " ms a run)";
  return text + " each";
}

double spearman(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b) {
  auto ranks = [](llvm::ArrayRef<double> v) {
    std::vector<size_t> order(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      order[i] = i;
    llvm::sort(order, [&](size_t x, size_t y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < order.size();) {
      size_t j = i;
      while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
        ++j;
      for (size_t k = i; k <= j; ++k)
        r[order[k]] = (static_cast<double>(i + j) / 2) + 1;
      i = j + 1;
    }
    return r;
  };
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size()), ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ma += ra[i] / n;
    mb += rb[i] / n;
  }
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 1.0;
}

} // namespace coconet::tune
