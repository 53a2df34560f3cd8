//===- Diagnostic.cpp - located diagnostics for coconetc ------------------===//
//
// Formatting and printing of diagnostics through llvm::SourceMgr.
//
//===----------------------------------------------------------------------===//

#include "diag/Diagnostic.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"

#include <cctype>

namespace coconet {

namespace {
struct KindInfo {
  const char *name;
  Severity severity;
  const char *format;
};

const KindInfo kKinds[] = {
#define DIAG(Name, Sev, Format) {#Name, Severity::Sev, Format},
#include "diag/DiagnosticKinds.def"
};
} // namespace

Severity diagSeverity(DiagId id) {
  return kKinds[static_cast<unsigned>(id)].severity;
}

llvm::StringRef diagFormat(DiagId id) {
  return kKinds[static_cast<unsigned>(id)].format;
}

std::string diagName(DiagId id) {
  llvm::StringRef name = kKinds[static_cast<unsigned>(id)].name;
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i != 0)
        out += '-';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

std::string formatDiag(llvm::StringRef format,
                       llvm::ArrayRef<std::string> args) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '{' && i + 2 < format.size() &&
        std::isdigit(static_cast<unsigned char>(format[i + 1])) &&
        format[i + 2] == '}') {
      unsigned index = format[i + 1] - '0';
      if (index < args.size())
        out += args[index];
      i += 2;
      continue;
    }
    out += format[i];
  }
  return out;
}

InFlightDiagnostic::InFlightDiagnostic(InFlightDiagnostic &&other) noexcept
    : engine(other.engine), main(std::move(other.main)),
      notes(std::move(other.notes)) {
  other.engine = nullptr;
}

InFlightDiagnostic::~InFlightDiagnostic() {
  if (engine)
    engine->emit(*this);
}

void InFlightDiagnostic::addNote(llvm::SMRange range, DiagId id,
                                 llvm::ArrayRef<std::string> args) {
  notes.push_back({range, id, formatDiag(diagFormat(id), args)});
}

static llvm::SourceMgr::DiagKind toKind(Severity s) {
  switch (s) {
  case Severity::Error:
    return llvm::SourceMgr::DK_Error;
  case Severity::Warning:
    return llvm::SourceMgr::DK_Warning;
  case Severity::Note:
    return llvm::SourceMgr::DK_Note;
  }
  return llvm::SourceMgr::DK_Error;
}

void DiagnosticEngine::emit(const InFlightDiagnostic &diag) {
  Severity severity = diagSeverity(diag.main.id);
  if (severity == Severity::Warning && warningsAsErrors)
    severity = Severity::Error;
  if (severity == Severity::Error)
    ++numErrors;
  else if (severity == Severity::Warning)
    ++numWarnings;
  if (errorLimit != 0 && numErrors > errorLimit) {
    if (!limitReported) {
      os << "coconetc: too many errors emitted, stopping now\n";
      limitReported = true;
    }
    return;
  }

  auto print = [&](const InFlightDiagnostic::Entry &entry, Severity sev,
                   bool withName) {
    std::string message = entry.message;
    if (withName)
      message += " [" + diagName(entry.id) + "]";
    llvm::SMRange range = entry.range;
    llvm::SmallVector<llvm::SMRange, 1> ranges;
    // A single-character range is already shown by the caret.
    if (range.isValid() &&
        range.End.getPointer() > range.Start.getPointer() + 1)
      ranges.push_back(range);
    if (range.Start.isValid())
      sourceMgr.PrintMessage(os, range.Start, toKind(sev), message, ranges, {},
                             showColors);
    else
      sourceMgr.PrintMessage(os, llvm::SMLoc(), toKind(sev), message, {}, {},
                             showColors);
  };
  print(diag.main, severity, true);
  for (const auto &note : diag.notes)
    print(note, Severity::Note, false);
}

} // namespace coconet
