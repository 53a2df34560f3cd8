//===- Differential.cpp - a schedule against the unscheduled program ------===//

#include "verify/Differential.h"

#include "support/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
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

/// Unit roundoff of rounding an f64 value to `dtype` (0 for f64 itself),
/// and half the spacing of its subnormals.
static double roundingUnit(ir::DType dtype) {
  return dtype == ir::DType::F64 ? 0 : epsilonOf(dtype) / 2;
}
static double smallestSubnormal(ir::DType dtype) {
  switch (dtype) {
  case ir::DType::F16:
    return std::ldexp(1.0, -24);
  case ir::DType::BF16:
    return std::ldexp(1.0, -133);
  case ir::DType::F32:
    return std::ldexp(1.0, -149);
  case ir::DType::F64: // no term of a bound (roundingUnit is 0)
  case ir::DType::I32:
  case ir::DType::I64:
  case ir::DType::U64:
  case ir::DType::Bool:
    return 0;
  }
  llvm_unreachable("a dtype of no kind");
}

double reassociationBound(ir::ReductionKind kind, int64_t terms,
                          double magnitude, ir::DType dtype, double a,
                          double b) {
  const double u = std::ldexp(1.0, -53);
  const double n = static_cast<double>(std::max<int64_t>(terms, 1));
  const double g = n * u / (1 - n * u);
  const double m = magnitude * (1 + g);
  double bound = 0;
  if (kind == ir::ReductionKind::Norm) {
    if (m > 0)
      bound = g * m / std::sqrt((1 - g) * m) + 2 * u * std::sqrt((1 + g) * m);
  } else {
    bound = 2 * g * m;
  }
  return bound + roundingUnit(dtype) * (std::fabs(a) + std::fabs(b)) +
         smallestSubnormal(dtype);
}

double collectiveReassociationBound(int64_t terms, double magnitude,
                                    ir::DType dtype, double a, double b,
                                    int64_t roundings) {
  const double u = std::ldexp(1.0, -53);
  const double n = static_cast<double>(std::max<int64_t>(terms, 1));
  const double g = n * u / (1 - n * u);
  // Adding the terms in another order, and rounding the partial sums of
  // the first axis once to the type: each moves by at most u_T times its
  // magnitude, together at most u_T times the terms' (or by a subnormal).
  const double uT = roundingUnit(dtype);
  const double k = static_cast<double>(std::max<int64_t>(roundings, 1));
  const double rounded = roundings > 1 ? k * uT / (1 - k * uT) : uT;
  return reassociationBound(ir::ReductionKind::Sum, terms, magnitude, dtype, a,
                            b) +
         rounded * magnitude * (1 + g) + n * smallestSubnormal(dtype);
}

static bool sameBits(double a, double b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool withinReassociationBound(ir::ReductionKind kind, int64_t terms,
                              double magnitude, ir::DType dtype, double a,
                              double b) {
  if (sameBits(a, b))
    return true;
  if (!std::isfinite(a) || !std::isfinite(b))
    return false;
  return std::fabs(a - b) <=
         reassociationBound(kind, terms, magnitude, dtype, a, b);
}

bool Comparison::ok() const {
  if (!structural.empty())
    return false;
  if (substituted) {
    for (const ReassociatedValue &r : reassociated)
      if (r.failing)
        return false;
    for (const ResultDiff &r : substitutedResults)
      if (r.failing)
        return false;
    return true;
  }
  for (const ResultDiff &r : results)
    if (r.failing)
      return false;
  return true;
}

static void printResult(llvm::raw_ostream &os, const ResultDiff &r,
                        bool verdict) {
  os << "  " << r.name << ": ";
  if (!r.differing) {
    os << "bitwise equal (" << r.elements
       << (r.elements == 1 ? " element)\n" : " elements)\n");
    return;
  }
  os << llvm::formatv("{0} of {1} elements differ, max |diff| {2:e}, "
                      "{3:f2} ulp{4}\n",
                      r.differing, r.elements, r.maxAbs, r.maxUlps,
                      verdict && r.failing
                          ? llvm::formatv(", {0} outside the tolerance; "
                                          "first: {1}",
                                          r.failing, r.firstFailure)
                                .str()
                          : std::string(""));
}

void Comparison::print(llvm::raw_ostream &os) const {
  if (!structural.empty()) {
    os << "results differ in structure: " << structural << '\n';
    return;
  }
  for (const ResultDiff &r : results)
    printResult(os, r, !substituted);
  if (substituted) {
    for (const ReassociatedValue &r : reassociated) {
      os << llvm::formatv("  reassociated '{0}' ({1} of {2} terms): ", r.name,
                          ir::reductionKindName(r.kind), r.terms);
      if (!r.differing)
        os << "bitwise equal (" << r.elements
           << (r.elements == 1 ? " element)\n" : " elements)\n");
      else if (!r.failing)
        os << llvm::formatv("{0} of {1} elements differ, at most {2:f3} of "
                            "the bound\n",
                            r.differing, r.elements, r.maxOfBound);
      else
        os << llvm::formatv("{0} of {1} elements differ, {2} outside the "
                            "bound; first: {3}\n",
                            r.differing, r.elements, r.failing, r.firstFailure);
    }
    if (reassociated.empty())
      os << "  no float sum or norm of the unscheduled program is computed "
            "by the scheduled one (under its name or a split's)\n";
    bool equal = llvm::all_of(substitutedResults,
                              [](const ResultDiff &r) { return !r.differing; });
    os << "  with the reassociated values as the unscheduled program "
          "computes them: "
       << (equal ? "every result bitwise equal\n" : "\n");
    if (!equal)
      for (const ResultDiff &r : substitutedResults)
        printResult(os, r, true);
  }
  if (!bitwise)
    for (const std::string &why : reasons) {
      if (toleranceUlps > 0)
        os << "  tolerance " << llvm::format("%g", toleranceUlps)
           << " ulp: " << why << '\n';
      else
        os << "  reassociates: " << why << '\n';
    }
}

/// Compares the results of two runs positionally; sets c.structural on a
/// mismatch of count, type or shape.
static std::vector<ResultDiff> compareResults(const ir::Program &reference,
                                              const sim::SimResult &ref,
                                              const ir::Program &candidate,
                                              const sim::SimResult &cand,
                                              Comparison &c) {
  std::vector<ResultDiff> diffs;
  auto refResults = reference.getResults();
  auto candResults = candidate.getResults();
  if (refResults.size() != candResults.size()) {
    c.structural = llvm::formatv("{0} results against {1}", refResults.size(),
                                 candResults.size());
    return diffs;
  }
  for (size_t i = 0; i < refResults.size(); ++i) {
    sim::Tensor a = ref.assembled(reference, *refResults[i]);
    sim::Tensor b = cand.assembled(candidate, *candResults[i]);
    std::string name = sim::resultName(reference, i);
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
      c.structural = "result '" + name + "' has a different type or shape";
      return diffs;
    }
    diffs.push_back(compareTensors(name, a, b, 0));
  }
  return diffs;
}

/// The reference stage whose value the candidate's `stage` holds as a
/// reassociated reduction, whole or a block of it on every rank (a split's
/// reducescatter): a float sum or norm of the same name (Stage::valueName),
/// type and global shape, each rank's block inside the reference's; else
/// null.
static const ir::Stage *reassociatedOf(const ir::Program &reference,
                                       const sim::SimResult &ref,
                                       const ir::Program &candidate,
                                       const ir::Stage &stage,
                                       const sim::SimResult &cand) {
  const ir::Stage *r = reference.findStage(stage.valueName());
  if (!r || !ir::isFloat(r->type.dtype) || r->type.dtype != stage.type.dtype ||
      ref.termSums[r->id].empty())
    return nullptr;
  const bool reduction = r->kind == ir::StageKind::Reduction &&
                         (r->reduction == ir::ReductionKind::Sum ||
                          r->reduction == ir::ReductionKind::Norm);
  // A float sum allreduce that a hierarchical schedule adds axis by axis,
  // or an allreduce or reducescatter an algorithm file adds in its order.
  const bool collective =
      (r->kind == ir::StageKind::AllReduce ||
       r->kind == ir::StageKind::ReduceScatter) &&
      r->reduceOp == ir::ReduceOp::Sum &&
      llvm::is_contained(candidate.reassociatedCollectives, r->name);
  if (!reduction && !collective)
    return nullptr;
  for (int64_t rank = 0; rank < ref.numRanks(); ++rank) {
    const sim::Placement &p = ref.placement(*r, rank),
                         &q = cand.placement(stage, rank);
    if (p.globalShape != q.globalShape)
      return nullptr;
    for (size_t d = 0; d < p.globalShape.size(); ++d)
      if (q.offset[d] < p.offset[d] ||
          q.offset[d] + q.localShape[d] > p.offset[d] + p.localShape[d])
        return nullptr;
  }
  return r;
}

/// The index in `p`'s block of element `k` of `q`'s block (row-major), `q`
/// lying inside `p`.
static int64_t indexIn(const sim::Placement &p, const sim::Placement &q,
                       int64_t k) {
  int64_t index = 0, stride = 1;
  for (size_t d = q.localShape.size(); d-- > 0;) {
    const int64_t c = k % q.localShape[d] + q.offset[d] - p.offset[d];
    k /= q.localShape[d];
    index += c * stride;
    stride *= p.localShape[d];
  }
  return index;
}

/// Checks the candidate's value of `stage` (the whole of `r`'s value or a
/// block of it) against the reference's `r` within the reassociation
/// bound, and replaces it by the reference's.
static void substitute(const sim::SimResult &ref, const ir::Stage &r,
                       const ir::Stage &stage, sim::SimResult &cand,
                       ReassociatedValue &out) {
  out.name = stage.name == r.name
                 ? stage.name
                 : llvm::formatv("{0}' as '{1}", r.name, stage.name).str();
  const bool collective = r.kind == ir::StageKind::AllReduce ||
                          r.kind == ir::StageKind::ReduceScatter;
  out.kind = collective ? ir::ReductionKind::Sum : r.reduction;
  const ir::Stage &x = *r.operands[0];
  for (int64_t rank = 0; rank < ref.numRanks(); ++rank) {
    const sim::Placement &p = ref.placement(r, rank),
                         &q = cand.placement(stage, rank);
    const sim::Tensor &want = ref.value(r, rank);
    const sim::Tensor &sums = ref.termSums[r.id][rank];
    sim::Tensor &got = cand.values[stage.id][rank];
    const sim::Tensor &operand = ref.value(x, rank);
    // A collective's terms are its members' values.
    int64_t pos = 0;
    const int64_t terms =
        collective
            ? static_cast<int64_t>(ref.grid.group(rank, r.axis, pos).size())
        : r.dim < 0 ? operand.size()
                    : operand.shape()[static_cast<size_t>(r.dim)];
    out.terms = std::max(out.terms, terms);
    for (int64_t k = 0; k < got.size(); ++k) {
      ++out.elements;
      const int64_t i = indexIn(p, q, k);
      const double a = want.get(i), b = got.get(k);
      if (sameBits(a, b))
        continue;
      ++out.differing;
      const double bound =
          collective
              ? collectiveReassociationBound(terms, sums.get(i), r.type.dtype,
                                             a, b, stage.table ? terms - 1 : 1)
              : reassociationBound(r.reduction, terms, sums.get(i),
                                   r.type.dtype, a, b);
      const bool within =
          collective ? std::isfinite(a) && std::isfinite(b) &&
                           std::fabs(a - b) <= bound
                     : withinReassociationBound(r.reduction, terms, sums.get(i),
                                                r.type.dtype, a, b);
      if (within) {
        out.maxOfBound =
            std::max(out.maxOfBound, bound > 0 ? std::fabs(a - b) / bound : 0);
      } else if (out.failing++ == 0) {
        out.firstFailure = llvm::formatv(
            "rank {0}, element {1}: {2} vs {3}, |diff| {4:e} > bound {5:e} "
            "({6} terms, sum of magnitudes {7:e})",
            rank, k, a, b, std::fabs(a - b), bound, terms, sums.get(i));
      }
      got.set(k, a);
    }
  }
}

llvm::Expected<Comparison> comparePrograms(const ir::Program &reference,
                                           const ir::Program &candidate,
                                           const sim::SimOptions &options) {
  Comparison c;
  c.reasons.assign(candidate.reassociations.begin(),
                   candidate.reassociations.end());
  c.bitwise = c.reasons.empty();
  sim::SimOptions refOptions = options;
  refOptions.recordTermSums = !c.bitwise;
  auto ref = sim::simulate(reference, refOptions);
  if (!ref)
    return llvm::createStringError("unscheduled program: " +
                                   llvm::toString(ref.takeError()));
  auto cand = sim::simulate(candidate, options);
  if (!cand)
    return llvm::createStringError("scheduled program: " +
                                   llvm::toString(cand.takeError()));
  c.results = compareResults(reference, *ref, candidate, *cand, c);
  if (!c.structural.empty() || c.bitwise ||
      llvm::all_of(c.results, [](const ResultDiff &r) { return !r.differing; }))
    return c;

  // The reassociation check: the candidate again, with every reassociated
  // value checked against the bound and replaced by the reference's.
  c.substituted = true;
  sim::SimOptions again = options;
  again.afterStage = [&](const ir::Stage &stage,
                         sim::SimResult &run) -> llvm::Error {
    if (const ir::Stage *r =
            reassociatedOf(reference, *ref, candidate, stage, run)) {
      c.reassociated.emplace_back();
      substitute(*ref, *r, stage, run, c.reassociated.back());
    }
    return llvm::Error::success();
  };
  auto held = sim::simulate(candidate, again);
  if (!held)
    return llvm::createStringError("scheduled program: " +
                                   llvm::toString(held.takeError()));
  c.substitutedResults = compareResults(reference, *ref, candidate, *held, c);
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
