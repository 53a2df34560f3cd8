//===- Milp.cpp - mixed-integer linear programs, solved by COIN-OR CBC ----===//

#include "synth/Milp.h"

#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

namespace coconet::synth {

unsigned Milp::addVar(double l, double u, double o, bool integer) {
  lb.push_back(l);
  ub.push_back(u);
  obj.push_back(o);
  isInteger.push_back(integer);
  return unsigned(lb.size() - 1);
}

void Milp::addRow(llvm::ArrayRef<Term> terms, double lo, double hi) {
  unsigned row = unsigned(rowLo.size());
  rowLo.push_back(lo);
  rowHi.push_back(hi);
  for (const Term &t : terms)
    entries.push_back({row, t});
}

void Milp::fix(unsigned var, double value) { lb[var] = ub[var] = value; }

unsigned Milp::integers() const {
  return unsigned(std::count(isInteger.begin(), isInteger.end(), 1));
}

std::string milpSolverVersion() { return Cbc_getVersion(); }

Milp::Result Milp::solve(const Options &options) const {
  // Column-major, a column's repeated rows summed (CBC wants each
  // (row, column) once).
  std::vector<unsigned> idx(entries.size());
  for (unsigned i = 0; i < entries.size(); ++i)
    idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](unsigned a, unsigned b) {
    const auto &ea = entries[a], &eb = entries[b];
    return std::pair(ea.second.first, ea.first) <
           std::pair(eb.second.first, eb.first);
  });
  std::vector<CoinBigIndex> start(vars() + 1, 0);
  std::vector<int> index;
  std::vector<double> value;
  for (size_t k = 0; k < idx.size(); ++k) {
    const auto &[row, term] = entries[idx[k]];
    if (k > 0 && !index.empty() &&
        entries[idx[k - 1]].second.first == term.first &&
        entries[idx[k - 1]].first == row) {
      value.back() += term.second;
      continue;
    }
    index.push_back(int(row));
    value.push_back(term.second);
    ++start[term.first + 1];
  }
  for (unsigned c = 0; c < vars(); ++c)
    start[c + 1] += start[c];

  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)> m(Cbc_newModel(),
                                                      Cbc_deleteModel);
  Cbc_loadProblem(m.get(), int(vars()), int(rows()), start.data(), index.data(),
                  value.data(), lb.data(), ub.data(), obj.data(), rowLo.data(),
                  rowHi.data());
  for (unsigned c = 0; c < vars(); ++c)
    if (isInteger[c])
      Cbc_setInteger(m.get(), int(c));
  Cbc_setObjSense(m.get(), 1);
  // One thread: the same program gives the same answer (unless the time
  // limit cuts the search short).
  Cbc_setParameter(m.get(), "threads", "1");
  Cbc_setParameter(m.get(), "log", options.log ? "1" : "0");
  Cbc_setParameter(m.get(), "slog", options.log ? "1" : "0");
  Cbc_setMaximumSeconds(m.get(), options.seconds);
  if (options.start.size() == vars()) {
    std::vector<int> cols(vars());
    for (unsigned c = 0; c < vars(); ++c)
      cols[c] = int(c);
    Cbc_setMIPStartI(m.get(), int(vars()), cols.data(), options.start.data());
  }
  auto t0 = std::chrono::steady_clock::now();
  Cbc_solve(m.get());
  Result r;
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (Cbc_isProvenInfeasible(m.get())) {
    r.status = Result::Infeasible;
    return r;
  }
  const double *sol = Cbc_getColSolution(m.get());
  bool have =
      Cbc_numberSavedSolutions(m.get()) > 0 || Cbc_isProvenOptimal(m.get());
  if (!sol || !have) {
    r.status = Result::NoSolution;
    return r;
  }
  r.values.assign(sol, sol + vars());
  r.objective = Cbc_getObjValue(m.get());
  r.bound = Cbc_getBestPossibleObjValue(m.get());
  r.status =
      Cbc_isProvenOptimal(m.get()) ? Result::Optimal : Result::LimitReached;
  if (r.status == Result::Optimal)
    r.bound = r.objective;
  return r;
}

} // namespace coconet::synth
