//===- Diagnostic.h - located diagnostics for coconetc ----------*- C++ -*-===//
//
// The diagnostic engine: every user error goes through here, is printed as
// llvm::SourceMgr prints, `file:line:col: error: message [kind]` with the
// source line and a caret (escaped and cut as TerminalText.h says), and is
// counted so phases can return failure.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_DIAG_DIAGNOSTIC_H
#define COCONET_DIAG_DIAGNOSTIC_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace coconet {

/// The identity of a diagnostic, one per line of DiagnosticKinds.def.
enum class DiagId : unsigned {
#define DIAG(Name, Severity, Format) Name,
#include "diag/DiagnosticKinds.def"
  NumDiagIds
};

enum class Severity { Error, Warning, Note };

/// The severity a kind is declared with.
Severity diagSeverity(DiagId id);
/// The format string a kind is declared with.
llvm::StringRef diagFormat(DiagId id);
/// The kebab-case name of a kind, e.g. "unknown-name".
std::string diagName(DiagId id);

/// A success/failure result of a phase, after MLIR's LogicalResult.
class LogicalResult {
public:
  static LogicalResult success() { return LogicalResult(true); }
  static LogicalResult failure() { return LogicalResult(false); }
  bool succeeded() const { return ok; }
  bool failed() const { return !ok; }

private:
  explicit LogicalResult(bool ok) : ok(ok) {}
  bool ok;
};
inline LogicalResult success() { return LogicalResult::success(); }
inline LogicalResult failure() { return LogicalResult::failure(); }
inline bool failed(LogicalResult r) { return r.failed(); }
inline bool succeeded(LogicalResult r) { return r.succeeded(); }

/// Formats "{0} ... {1}" with the given argument strings.
std::string formatDiag(llvm::StringRef format,
                       llvm::ArrayRef<std::string> args);

/// A message of the tool itself, with no place in a source file (a
/// command-line value, a file that cannot be read, a .npy header): printed
/// as "coconetc: error: MESSAGE" (or "warning") on stderr, MESSAGE made
/// safe and short as every diagnostic's is (safeMessage: escaped, words
/// over kMaxWordColumns and the whole over kMaxMessageColumns cut). Every
/// such message goes through these.
void reportToolError(llvm::StringRef message);
void reportToolWarning(llvm::StringRef message);

class DiagnosticEngine;

/// A diagnostic being built; it is printed when it goes out of scope so that
/// notes attached with note() come right after it.
class InFlightDiagnostic {
public:
  InFlightDiagnostic(InFlightDiagnostic &&other) noexcept;
  InFlightDiagnostic(const InFlightDiagnostic &) = delete;
  InFlightDiagnostic &operator=(const InFlightDiagnostic &) = delete;
  ~InFlightDiagnostic();

  /// Attaches a note at another place.
  template <typename... Args>
  InFlightDiagnostic &note(llvm::SMRange range, DiagId id, Args &&...args) {
    addNote(range, id, {toDiagString(std::forward<Args>(args))...});
    return *this;
  }

  static std::string toDiagString(llvm::StringRef s) { return s.str(); }
  static std::string toDiagString(const std::string &s) { return s; }
  static std::string toDiagString(const char *s) { return s; }
  static std::string toDiagString(int64_t v) { return std::to_string(v); }
  static std::string toDiagString(int v) { return std::to_string(v); }
  static std::string toDiagString(unsigned v) { return std::to_string(v); }
  static std::string toDiagString(size_t v) { return std::to_string(v); }

private:
  friend class DiagnosticEngine;
  struct Entry {
    llvm::SMRange range;
    DiagId id;
    std::string message;
  };
  InFlightDiagnostic(DiagnosticEngine *engine, Entry main)
      : engine(engine), main(std::move(main)) {}
  void addNote(llvm::SMRange range, DiagId id,
               llvm::ArrayRef<std::string> args);

  DiagnosticEngine *engine;
  Entry main;
  llvm::SmallVector<Entry, 2> notes;
};

/// Collects and prints diagnostics. Not a global: each compilation owns one.
class DiagnosticEngine {
public:
  DiagnosticEngine(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os)
      : sourceMgr(sourceMgr), os(os) {}

  /// Reports a diagnostic of the given kind at `range`; its severity comes
  /// from DiagnosticKinds.def.
  template <typename... Args>
  InFlightDiagnostic report(llvm::SMRange range, DiagId id, Args &&...args) {
    return InFlightDiagnostic(
        this, {range, id,
               formatDiag(diagFormat(id), {InFlightDiagnostic::toDiagString(
                                              std::forward<Args>(args))...})});
  }

  /// Number of errors reported so far.
  unsigned errorCount() const { return numErrors; }
  bool hadError() const { return numErrors != 0; }
  unsigned warningCount() const { return numWarnings; }

  /// Colours on or off (off by default; the driver turns them on for a tty).
  void setShowColors(bool on) { showColors = on; }
  /// Stop printing after this many errors (0 = no limit).
  void setErrorLimit(unsigned limit) { errorLimit = limit; }
  /// Treat warnings as errors.
  void setWarningsAsErrors(bool on) { warningsAsErrors = on; }

  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }

private:
  friend class InFlightDiagnostic;
  void emit(const InFlightDiagnostic &diag);
  void print(const InFlightDiagnostic::Entry &entry, Severity severity,
             bool withName);
  /// The byte offsets where the lines of a buffer start, found once.
  const std::vector<size_t> &lineStarts(unsigned bufferId);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned numErrors = 0;
  unsigned numWarnings = 0;
  unsigned errorLimit = 0;
  bool showColors = false;
  bool warningsAsErrors = false;
  bool limitReported = false;
  std::vector<std::vector<size_t>> lineStartCache;
};

} // namespace coconet

#endif // COCONET_DIAG_DIAGNOSTIC_H
