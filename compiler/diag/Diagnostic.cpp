//===- Diagnostic.cpp - located diagnostics for coconetc ------------------===//
//
// Formatting and printing of diagnostics. The layout and colours are
// llvm::SourceMgr's (`file:line:col: error: message`, the source line, the
// caret line), but the text is printed here, made safe first: messages,
// file names and source lines go through TerminalText.h, so no byte of the
// input reaches the terminal raw unless it is printable, and a long line or
// name is cut. A diagnostic without a place (an input file that cannot be
// read) is `coconetc: error: message`, as clang's driver says it.
//
//===----------------------------------------------------------------------===//

#include "diag/Diagnostic.h"
#include "diag/TerminalText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <cctype>
#include <cstring>

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

static const char *label(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error: ";
  case Severity::Warning:
    return "warning: ";
  case Severity::Note:
    return "note: ";
  }
  return "error: ";
}

static llvm::raw_ostream::Colors labelColor(Severity s) {
  switch (s) {
  case Severity::Error:
    return llvm::raw_ostream::RED;
  case Severity::Warning:
    return llvm::raw_ostream::MAGENTA;
  case Severity::Note:
    return llvm::raw_ostream::BLACK;
  }
  return llvm::raw_ostream::RED;
}

const std::vector<size_t> &DiagnosticEngine::lineStarts(unsigned bufferId) {
  if (lineStartCache.size() <= bufferId)
    lineStartCache.resize(bufferId + 1);
  std::vector<size_t> &starts = lineStartCache[bufferId];
  if (starts.empty()) {
    llvm::StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
    starts.push_back(0);
    for (size_t i = text.find('\n'); i != llvm::StringRef::npos;
         i = text.find('\n', i + 1))
      starts.push_back(i + 1);
  }
  return starts;
}

void DiagnosticEngine::print(const InFlightDiagnostic::Entry &entry,
                             Severity severity, bool withName) {
  std::string message = safeMessage(entry.message);
  if (withName)
    message += " [" + diagName(entry.id) + "]";
  llvm::SMLoc loc = entry.range.Start;
  unsigned bufferId =
      loc.isValid() ? sourceMgr.FindBufferContainingLoc(loc) : 0;
  if (showColors)
    os.enable_colors(true);
  auto color = [&](llvm::raw_ostream::Colors c, bool bold) {
    if (showColors)
      os.changeColor(c, bold);
  };
  auto reset = [&] {
    if (showColors)
      os.resetColor();
  };

  // "error: MESSAGE [name]", after the place.
  auto labelAndMessage = [&] {
    color(labelColor(severity), true);
    os << label(severity);
    reset();
    color(llvm::raw_ostream::SAVEDCOLOR, true);
    os << message << '\n';
    reset();
  };

  // No place in a file (the input named on the command line): said as
  // clang's driver says it.
  if (bufferId == 0) {
    os << "coconetc: ";
    labelAndMessage();
    return;
  }

  // The source line, from the last line break before the location to the
  // next; a CR before that line break belongs to it, any other is escaped.
  // The column counts bytes from the line's start (SourceMgr's would count
  // from a lone CR too).
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  const char *bufEnd = buffer->getBufferEnd();
  // The line and its start come from a table of line starts, so that many
  // diagnostics on one long line do not each walk back over it (SourceMgr's
  // line numbers do: they compute the column too).
  const char *at = loc.getPointer();
  const std::vector<size_t> &starts = lineStarts(bufferId);
  size_t atOffset = static_cast<size_t>(at - buffer->getBufferStart());
  size_t line = static_cast<size_t>(
      std::upper_bound(starts.begin(), starts.end(), atOffset) -
      starts.begin());
  const char *lineStart = buffer->getBufferStart() + starts[line - 1];
  // Its end is looked for only as far as the window can reach.
  size_t ahead = std::min<size_t>(static_cast<size_t>(bufEnd - at),
                                  4 * size_t(kMaxSourceColumns) + 16);
  const char *lineEnd = static_cast<const char *>(std::memchr(at, '\n', ahead));
  bool wholeLine = lineEnd || at + ahead == bufEnd;
  if (!lineEnd)
    lineEnd = at + ahead;

  color(llvm::raw_ostream::SAVEDCOLOR, true);
  os << escapeForTerminal(buffer->getBufferIdentifier()) << ':' << line << ':'
     << (at - lineStart + 1) << ": ";
  reset();
  labelAndMessage();

  llvm::StringRef text(lineStart, lineEnd - lineStart);
  if (wholeLine && text.ends_with("\r"))
    text = text.drop_back();
  auto offset = [&](const char *p) {
    return static_cast<size_t>(std::clamp(p, lineStart, lineEnd) - lineStart);
  };
  size_t rangeBegin = offset(entry.range.Start.getPointer());
  size_t rangeEnd = entry.range.End.isValid()
                        ? offset(entry.range.End.getPointer())
                        : rangeBegin;
  ShownSourceLine shown =
      showSourceLine(text, offset(at), rangeBegin, rangeEnd);
  os << shown.text << '\n';
  color(llvm::raw_ostream::GREEN, true);
  os << shown.markers << '\n';
  reset();
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

  print(diag.main, severity, true);
  for (const auto &note : diag.notes)
    print(note, Severity::Note, false);
}

void reportToolError(llvm::StringRef message) {
  llvm::WithColor::error(llvm::errs(), "coconetc")
      << safeMessage(message) << '\n';
}

void reportToolWarning(llvm::StringRef message) {
  llvm::WithColor::warning(llvm::errs(), "coconetc")
      << safeMessage(message) << '\n';
}

} // namespace coconet
