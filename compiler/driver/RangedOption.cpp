//===- RangedOption.cpp - numeric options checked in their own type -------===//

#include "driver/RangedOption.h"

#include "diag/Diagnostic.h"
#include "diag/TerminalText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace coconet::driver {

namespace {

/// Every NumberOption, in the order they were created.
llvm::SmallVector<NumberOptionBase *, 8> &registry() {
  static llvm::SmallVector<NumberOptionBase *, 8> options;
  return options;
}

/// A bound as text: the largest values as the powers of 2 they are.
template <typename T> std::string boundText(T v) {
  if (v == std::numeric_limits<T>::max())
    return "2^" + std::to_string(8 * sizeof(T) - std::is_signed_v<T>) + "-1";
  if (std::is_signed_v<T> && v == std::numeric_limits<T>::min())
    return "-2^" + std::to_string(8 * sizeof(T) - 1);
  if constexpr (std::is_same_v<T, int64_t>)
    if (v == INT32_MAX)
      return "2^31-1";
  return std::to_string(v);
}

} // namespace

NumberOptionBase::NumberOptionBase(llvm::StringRef name, llvm::StringRef desc,
                                   llvm::StringRef valueName,
                                   llvm::cl::OptionCategory &cat)
    : text_(name, llvm::cl::desc(desc), llvm::cl::value_desc(valueName),
            llvm::cl::cat(cat)) {
  registry().push_back(this);
}

NumberOptionBase::~NumberOptionBase() { llvm::erase(registry(), this); }

bool NumberOptionBase::refuse(const std::string &range) const {
  reportToolError("--" + text_.ArgStr.str() + " expects " + range + ", got '" +
                  text_ + "'");
  return false;
}

template <typename T> bool NumberOption<T>::parse() {
  llvm::StringRef s = llvm::StringRef(text()).trim();
  bool bad;
  if constexpr (std::is_signed_v<T>) {
    long long v = 0;
    bad = llvm::getAsSignedInteger(s, 0, v) || v < lo_ || v > hi_;
    value_ = static_cast<T>(v);
  } else {
    // No sign is accepted: "-1" is refused, not wrapped.
    unsigned long long v = 0;
    bad = llvm::getAsUnsignedInteger(s, 0, v) || v < lo_ || v > hi_;
    value_ = static_cast<T>(v);
  }
  if (bad)
    return refuse("an integer from " + boundText(lo_) + " to " +
                  boundText(hi_));
  return true;
}

template class NumberOption<int64_t>;
template class NumberOption<uint64_t>;
template class NumberOption<unsigned>;

bool NonNegativeOption::parse() {
  double v = 0;
  if (llvm::StringRef(text()).trim().getAsDouble(v, /*AllowInexact=*/true) ||
      !std::isfinite(v) || v < 0)
    return refuse("a finite number >= 0");
  value_ = v;
  return true;
}

bool checkNumberOptions() {
  for (NumberOptionBase *option : registry())
    if (option->given() && !option->parse())
      return false;
  return true;
}

} // namespace coconet::driver
