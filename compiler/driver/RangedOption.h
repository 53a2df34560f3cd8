//===- RangedOption.h - numeric options checked in their own type -*- C++
//-*-===//
//
// Internal to driver/. A numeric option keeps its text until the command
// line has been read; checkNumberOptions() then parses every one given in
// the option's own type and refuses, naming the option and the range it
// accepts, a value that is not a number of that type or falls outside the
// range: `--ranks 0`, `--ranks -2` and `--ranks 4294967297` are usage
// errors (exit 2), never a default or a narrowed value.
//
//   static NumberOption<int64_t> ranks("ranks", "Number of ranks ...",
//                                      1, INT32_MAX, 0, simCategory());
//   ... if (!checkNumberOptions()) return 2; ... if (ranks.given()) *ranks
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_DRIVER_RANGEDOPTION_H
#define COCONET_DRIVER_RANGEDOPTION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace coconet::driver {

/// The common part: registration and the error.
class NumberOptionBase {
public:
  NumberOptionBase(llvm::StringRef name, llvm::StringRef desc,
                   llvm::StringRef valueName, llvm::cl::OptionCategory &cat);
  virtual ~NumberOptionBase();
  NumberOptionBase(const NumberOptionBase &) = delete;
  NumberOptionBase &operator=(const NumberOptionBase &) = delete;

  /// Whether the option was on the command line.
  bool given() const { return text_.getNumOccurrences() > 0; }

protected:
  friend bool checkNumberOptions();
  /// Parses text(); false (after reporting) when it is refused.
  virtual bool parse() = 0;
  /// Reports "--NAME expects RANGE, got 'TEXT'"; returns false.
  bool refuse(const std::string &range) const;
  const std::string &text() const { return text_; }

private:
  llvm::cl::opt<std::string> text_;
};

/// An integer option accepting [lo, hi] (decimal, or 0x hexadecimal).
template <typename T> class NumberOption : public NumberOptionBase {
public:
  NumberOption(llvm::StringRef name, llvm::StringRef desc, T lo, T hi, T init,
               llvm::cl::OptionCategory &cat)
      : NumberOptionBase(name, desc, "n", cat), lo_(lo), hi_(hi), value_(init) {
  }
  T operator*() const { return value_; }
  operator T() const { return value_; }

private:
  bool parse() override;
  T lo_, hi_, value_;
};

/// A floating-point option accepting finite values >= 0.
class NonNegativeOption : public NumberOptionBase {
public:
  NonNegativeOption(llvm::StringRef name, llvm::StringRef desc, double init,
                    llvm::cl::OptionCategory &cat)
      : NumberOptionBase(name, desc, "x", cat), value_(init) {}
  double operator*() const { return value_; }
  operator double() const { return value_; }

private:
  bool parse() override;
  double value_;
};

/// Parses every NumberOption given; false after reporting the first that
/// is refused (the caller exits 2).
bool checkNumberOptions();

} // namespace coconet::driver

#endif // COCONET_DRIVER_RANGEDOPTION_H
