//===- Polynomial.h - symbolic byte and FLOP counts -------------*- C++ -*-===//
//
// The formulas of the cost report: sums of terms, each a rational
// coefficient times a product of size names with integer exponents
// (negative for division), e.g. `4*N + 2*N/P - 3`. Terms are kept in a map
// with no zero coefficients, so equal polynomials compare equal and print
// the same way.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_ANALYSIS_POLYNOMIAL_H
#define COCONET_ANALYSIS_POLYNOMIAL_H

#include "ir/Types.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace coconet::analysis {

/// An exact fraction num/den with den > 0, in lowest terms.
class Rational {
public:
  Rational(int64_t value = 0) : n(value) {}
  Rational(int64_t num, int64_t den);

  int64_t num() const { return n; }
  int64_t den() const { return d; }
  bool isZero() const { return n == 0; }
  bool isNegative() const { return n < 0; }
  double toDouble() const {
    return static_cast<double>(n) / static_cast<double>(d);
  }

  Rational operator+(const Rational &o) const;
  Rational operator-() const { return Rational(-n, d); }
  Rational operator-(const Rational &o) const { return *this + -o; }
  Rational operator*(const Rational &o) const;
  bool operator==(const Rational &o) const { return n == o.n && d == o.d; }
  bool operator!=(const Rational &o) const { return !(*this == o); }
  /// "3", "-1/2".
  std::string str() const;

private:
  int64_t n = 0;
  int64_t d = 1;
};

/// A product of size names: name -> nonzero exponent, sorted by name.
/// `N*P^-1` is {N: 1, P: -1}; the empty map is the constant 1.
using Monomial = std::map<std::string, int, std::less<>>;

/// A sum of rational multiples of monomials.
class Polynomial {
public:
  using Terms = std::map<Monomial, Rational>;

  Polynomial() = default;
  Polynomial(Rational constant) { add(Monomial(), constant); }
  static Polynomial symbol(llvm::StringRef name, int exponent = 1);
  static Polynomial term(Rational coefficient, Monomial monomial);
  /// A symbolic dimension: its coefficient times its names.
  static Polynomial fromDim(const ir::Dim &dim);

  const Terms &terms() const { return termMap; }
  bool isZero() const { return termMap.empty(); }
  /// The coefficient of `monomial` (0 if absent).
  Rational coefficient(const Monomial &monomial) const;

  Polynomial operator+(const Polynomial &o) const;
  Polynomial operator-(const Polynomial &o) const;
  Polynomial operator*(const Polynomial &o) const;
  Polynomial &operator+=(const Polynomial &o) { return *this = *this + o; }
  bool operator==(const Polynomial &o) const { return termMap == o.termMap; }
  bool operator!=(const Polynomial &o) const { return !(*this == o); }

  /// The value with every name bound by `env`; nullopt if a name is not.
  std::optional<double> evaluate(const ir::DimEnv &env) const;
  /// Readable and deterministic: terms by decreasing degree of the
  /// numerator, then increasing degree of the denominator, then by names:
  /// `2*N - 2*N/P`, `8*B*H^2/P`, `N/(P*T) + 20`, `0`.
  std::string str() const;

private:
  void add(const Monomial &monomial, Rational coefficient);
  Terms termMap;
};

} // namespace coconet::analysis

#endif // COCONET_ANALYSIS_POLYNOMIAL_H
