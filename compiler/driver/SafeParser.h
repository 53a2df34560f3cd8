//===- SafeParser.h - cl::opt parsers that quote values safely -*- C++ -*-===//
//
// Internal to driver/. cl::parser's own refusal of a value it does not know
// ("Cannot find option named 'x'!", "'x' is invalid value for boolean
// argument!") quotes the value raw, straight onto stderr: an ESC in it
// reaches the terminal and a 1 MB value is printed whole. SafeParser<T>
// leaves a value that is short and printable to cl::parser<T> (its wording
// and its matching) and refuses any other with the value escaped and cut,
// as every message quoting user text is (diag/TerminalText.h):
//
//   static cl::opt<EmitKind, false, SafeParser<EmitKind>> emit(...);
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_DRIVER_SAFEPARSER_H
#define COCONET_DRIVER_SAFEPARSER_H

#include "diag/TerminalText.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace coconet::driver {

template <class DataType> class SafeParser : public llvm::cl::parser<DataType> {
public:
  using llvm::cl::parser<DataType>::parser;

  bool parse(llvm::cl::Option &option, llvm::StringRef argName,
             llvm::StringRef arg, DataType &value) {
    const std::string shown = safeMessage(arg);
    if (shown == arg)
      return llvm::cl::parser<DataType>::parse(option, argName, arg, value);
    return option.error("'" + shown + "' is not a value of this option (see " +
                        "--help)");
  }
};

} // namespace coconet::driver

#endif // COCONET_DRIVER_SAFEPARSER_H
