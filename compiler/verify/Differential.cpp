//===- Differential.cpp - a schedule against the unscheduled program ------===//

#include "verify/Differential.h"

#include "support/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

namespace coconet::verify {

double epsilonOf(ir::DType dtype) {
  switch (dtype) {
  case ir::DType::F16:
    return std::ldexp(1.0, -10);
  case ir::DType::BF16:
    return std::ldexp(1.0, -7);
  case ir::DType::F32:
    return std::ldexp(1.0, -23);
  case ir::DType::F64:
    return std::ldexp(1.0, -52);
  case ir::DType::I32:
  case ir::DType::I64:
  case ir::DType::U64:
  case ir::DType::Bool:
    break;
  }
  return 0;
}

bool Comparison::ok() const {
  if (!structural.empty())
    return false;
  for (const ResultDiff &r : results)
    if (r.failing)
      return false;
  return true;
}

void Comparison::print(llvm::raw_ostream &os) const {
  if (!structural.empty()) {
    os << "results differ in structure: " << structural << '\n';
    return;
  }
  for (const ResultDiff &r : results) {
    os << "  " << r.name << ": ";
    if (!r.differing)
      os << "bitwise equal (" << r.elements
         << (r.elements == 1 ? " element)\n" : " elements)\n");
    else
      os << llvm::formatv(
          "{0} of {1} elements differ, max |diff| {2:e}, "
          "{3:f2} ulp{4}\n",
          r.differing, r.elements, r.maxAbs, r.maxUlps,
          r.failing ? llvm::formatv(", {0} outside the tolerance; first: {1}",
                                    r.failing, r.firstFailure)
                          .str()
                    : std::string(""));
  }
  if (!bitwise)
    for (const std::string &why : reasons)
      os << "  tolerance " << llvm::format("%g", toleranceUlps)
         << " ulp: " << why << '\n';
}

static bool sameBits(double a, double b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

llvm::Expected<Comparison> comparePrograms(const ir::Program &reference,
                                           const ir::Program &candidate,
                                           const sim::SimOptions &options) {
  auto ref = sim::simulate(reference, options);
  if (!ref)
    return llvm::createStringError("unscheduled program: " +
                                   llvm::toString(ref.takeError()));
  auto cand = sim::simulate(candidate, options);
  if (!cand)
    return llvm::createStringError("scheduled program: " +
                                   llvm::toString(cand.takeError()));
  Comparison c;
  c.reasons.assign(candidate.reassociations.begin(),
                   candidate.reassociations.end());
  c.bitwise = c.reasons.empty();
  auto refResults = reference.getResults();
  auto candResults = candidate.getResults();
  if (refResults.size() != candResults.size()) {
    c.structural = llvm::formatv("{0} results against {1}", refResults.size(),
                                 candResults.size());
    return c;
  }
  for (size_t i = 0; i < refResults.size(); ++i) {
    const ir::Stage &rs = *refResults[i], &cs = *candResults[i];
    sim::Tensor a = ref->assembled(reference, rs);
    sim::Tensor b = cand->assembled(candidate, cs);
    std::string name = sim::resultName(reference, i);
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
      c.structural = "result '" + name + "' has a different type or shape";
      return c;
    }
    c.results.push_back(
        compareTensors(name, a, b, c.bitwise ? 0 : kReassociationUlps));
  }
  return c;
}

ResultDiff compareTensors(llvm::StringRef name, const sim::Tensor &a,
                          const sim::Tensor &b, double ulps) {
  ResultDiff d;
  d.name = name.str();
  d.dtype = a.dtype();
  d.elements = a.size();
  const bool isF = ir::isFloat(d.dtype);
  double scale = 0;
  if (isF)
    for (int64_t k = 0; k < a.size(); ++k)
      if (std::isfinite(a.get(k)))
        scale = std::max(scale, std::fabs(a.get(k)));
  const double eps = epsilonOf(d.dtype);
  for (int64_t k = 0; k < a.size(); ++k) {
    bool equal = isF ? sameBits(a.get(k), b.get(k))
                     : a.getScalar(k).i == b.getScalar(k).i;
    if (equal)
      continue;
    ++d.differing;
    double x = isF ? a.get(k) : double(a.getInt(k));
    double y = isF ? b.get(k) : double(b.getInt(k));
    double diff = std::fabs(x - y);
    if (!std::isnan(diff))
      d.maxAbs = std::max(d.maxAbs, diff);
    double unit = eps * std::max({std::fabs(x), std::fabs(y), scale, 1e-300});
    double u = isF ? diff / unit : INFINITY;
    if (std::isnan(u))
      u = INFINITY;
    d.maxUlps = std::max(d.maxUlps, u);
    bool within = isF && ulps > 0 && u <= ulps;
    if (!within && d.failing++ == 0)
      d.firstFailure = llvm::formatv("element {0}: {1} vs {2}", k, x, y);
  }
  return d;
}

llvm::Expected<Comparison> compareWithFiles(const ir::Program &program,
                                            const sim::SimResult &result,
                                            llvm::StringRef dir, double ulps) {
  Comparison c;
  c.bitwise = ulps == 0;
  c.toleranceUlps = ulps;
  if (!c.bitwise)
    c.reasons.push_back("as asked (--check-ulps)");
  for (size_t i = 0; i < program.getResults().size(); ++i) {
    const ir::Stage &stage = *program.getResults()[i];
    sim::Tensor expected = result.assembled(program, stage);
    std::string name = sim::resultName(program, i);
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name + ".npy");
    auto file = support::readNpyFile(path);
    if (!file)
      return file.takeError();
    if (llvm::ArrayRef<int64_t>(file->shape) != expected.shape()) {
      c.structural =
          "'" + std::string(path) + "' has shape [" +
          llvm::join(
              llvm::map_range(file->shape,
                              [](int64_t v) { return std::to_string(v); }),
              ", ") +
          "], the simulator's '" + name + "' has [" +
          llvm::join(
              llvm::map_range(expected.shape(),
                              [](int64_t v) { return std::to_string(v); }),
              ", ") +
          "]";
      return c;
    }
    sim::Tensor actual(expected.dtype(), expected.shape());
    const bool isF = ir::isFloat(expected.dtype());
    for (int64_t k = 0; k < actual.size(); ++k) {
      sim::Scalar v;
      if (isF)
        v.f = file->getAsDouble(k);
      else
        v.i = static_cast<uint64_t>(file->getAsInt(k));
      actual.setScalar(k, v);
    }
    c.results.push_back(compareTensors(name, expected, actual, ulps));
  }
  return c;
}

} // namespace coconet::verify
