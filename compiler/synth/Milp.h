//===- Milp.h - mixed-integer linear programs, solved by COIN-OR CBC -*- C++
//-*-===//
//
// The one place that sees the solver (docs/synth.md, "The solver"): a
// program is built a variable and a row at a time, then solved by CBC
// (COIN-OR Branch and Cut, EPL-2.0, Debian's coinor-libcbc-dev) on one
// thread, with a time limit; when the limit expires the best solution
// found so far is returned, marked as such.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_MILP_H
#define COCONET_SYNTH_MILP_H

#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <utility>
#include <vector>

namespace coconet::synth {

class Milp {
public:
  using Term = std::pair<unsigned, double>;

  /// A new variable in [lb, ub] with objective coefficient `obj`
  /// (minimised); integer when `integer`.
  unsigned addVar(double lb, double ub, double obj, bool integer);
  unsigned binary(double obj = 0) { return addVar(0, 1, obj, true); }
  /// lo <= sum(terms) <= hi (a term's variable may repeat: they add).
  void addRow(llvm::ArrayRef<Term> terms, double lo, double hi);
  void fix(unsigned var, double value);

  unsigned vars() const { return unsigned(lb.size()); }
  unsigned rows() const { return unsigned(rowLo.size()); }
  unsigned integers() const;

  struct Options {
    double seconds = 60;
    /// Let CBC print its own log (to standard output).
    bool log = false;
    /// A feasible solution to start from (one value per variable), or
    /// empty.
    std::vector<double> start;
  };
  struct Result {
    enum Status { Optimal, LimitReached, Infeasible, NoSolution } status;
    std::vector<double> values;
    double objective = 0;
    /// The best bound CBC proved (equal to objective when optimal).
    double bound = 0;
    double seconds = 0;
  };
  Result solve(const Options &options) const;

private:
  std::vector<double> lb, ub, obj;
  std::vector<char> isInteger;
  std::vector<double> rowLo, rowHi;
  /// (row, column, value), in the order added.
  std::vector<std::pair<unsigned, Term>> entries;
};

/// CBC's version ("2.10.8").
std::string milpSolverVersion();

} // namespace coconet::synth

#endif // COCONET_SYNTH_MILP_H
