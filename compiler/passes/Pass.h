//===- Pass.h - the interface of a pass over the typed IR -------*- C++ -*-===//
//
// A pass transforms one program in place. Schedule transformations are
// passes created from a directive; cleanup passes take no arguments. A pass
// that refuses (a precondition does not hold) reports a located diagnostic
// and returns failure *before* changing anything, so the program is still
// the valid program it was.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_PASSES_PASS_H
#define COCONET_PASSES_PASS_H

#include "diag/Diagnostic.h"
#include "ir/Program.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace coconet::passes {

/// An `apply` directive through which a transformation was reached.
struct AppliedFrom {
  std::string schedule; ///< The applied schedule.
  llvm::SMRange loc;    ///< The `apply` directive.
};

class Pass {
public:
  virtual ~Pass() = default;
  /// The name used by --print-after and --time-passes, e.g. "split".
  virtual llvm::StringRef getName() const = 0;
  /// Transforms `program`, or reports why not and returns failure with the
  /// program unchanged.
  virtual LogicalResult run(ir::Program &program, DiagnosticEngine &diags) = 0;
  /// A one-line description for --print-after headers and --time-passes,
  /// e.g. "split(gs)".
  virtual std::string describe() const { return getName().str(); }
};

/// A schedule transformation: a directive of a schedule.
class DirectivePass : public Pass {
public:
  DirectivePass(ir::Schedule::Directive directive,
                llvm::SmallVector<AppliedFrom, 2> appliedFrom)
      : directive(std::move(directive)), appliedFrom(std::move(appliedFrom)) {}

protected:
  /// A refusal being built: notes may be attached; the `apply` notes come
  /// last, when it goes out of scope.
  class Refusal {
  public:
    Refusal(InFlightDiagnostic diag, const DirectivePass &pass)
        : diag(std::move(diag)), pass(pass) {}
    Refusal(Refusal &&) = default;
    ~Refusal() {
      for (auto it = pass.appliedFrom.rbegin(); it != pass.appliedFrom.rend();
           ++it)
        diag.note(it->loc, DiagId::AppliedHere, it->schedule);
    }
    template <typename... Args>
    Refusal &note(llvm::SMRange range, DiagId id, Args &&...args) {
      diag.note(range, id, std::forward<Args>(args)...);
      return *this;
    }

  private:
    InFlightDiagnostic diag;
    const DirectivePass &pass;
  };

  /// Reports a refusal at the directive (or at its argument `arg`, if
  /// valid), with a note for every `apply` that led here.
  template <typename... Args>
  Refusal refuse(DiagnosticEngine &diags, int arg, DiagId id,
                 Args &&...args) const {
    llvm::SMRange at = directive.loc;
    if (arg >= 0 && static_cast<size_t>(arg) < directive.argLocs.size())
      at = directive.argLocs[arg];
    return Refusal(diags.report(at, id, std::forward<Args>(args)...), *this);
  }
  /// The stage named by argument `i`, or null after reporting that an
  /// earlier transformation removed it.
  ir::Stage *lookup(ir::Program &program, DiagnosticEngine &diags,
                    unsigned i) const;

  ir::Schedule::Directive directive;
  llvm::SmallVector<AppliedFrom, 2> appliedFrom;
};

} // namespace coconet::passes

#endif // COCONET_PASSES_PASS_H
