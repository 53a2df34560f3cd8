//===- CodeWriter.h - indented text for the code generators -----*- C++ -*-===//
//
// Printers write generated code line by line through a CodeWriter, which
// keeps the indentation (two spaces per level) so no printer concatenates
// "\n" by hand.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SUPPORT_CODEWRITER_H
#define COCONET_SUPPORT_CODEWRITER_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

namespace coconet::support {

class CodeWriter {
public:
  explicit CodeWriter(llvm::raw_ostream &os) : os(os) {}

  /// One line at the current indentation (an empty text prints an empty
  /// line, without trailing spaces).
  CodeWriter &line(const llvm::Twine &text = "") {
    std::string s = text.str();
    if (!s.empty())
      os.indent(2 * level) << s;
    os << '\n';
    return *this;
  }
  /// "text {" and one level deeper.
  CodeWriter &open(const llvm::Twine &text) {
    line(text + " {");
    ++level;
    return *this;
  }
  /// One level up and "}" followed by `suffix` ("" or ";" or " else {").
  CodeWriter &close(const llvm::Twine &suffix = "") {
    --level;
    line("}" + suffix);
    return *this;
  }
  void indent() { ++level; }
  void dedent() { --level; }
  /// A block of `//` comment lines, one per line of `text`.
  CodeWriter &comment(llvm::StringRef text) {
    llvm::SmallVector<llvm::StringRef, 8> lines;
    text.split(lines, '\n');
    for (llvm::StringRef l : lines)
      line(l.empty() ? llvm::Twine("//") : "// " + l);
    return *this;
  }
  llvm::raw_ostream &raw() { return os; }

private:
  llvm::raw_ostream &os;
  unsigned level = 0;
};

} // namespace coconet::support

#endif // COCONET_SUPPORT_CODEWRITER_H
