//===- Polynomial.cpp - symbolic byte and FLOP counts ---------------------===//
//
// Rational coefficients are reduced to lowest terms after every operation
// (intermediate products in 128 bits); the counts of the report are small
// integers times size names, so they never come near overflow.
//
//===----------------------------------------------------------------------===//

#include "analysis/Polynomial.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <numeric>
#include <tuple>

namespace coconet::analysis {

//===----------------------------------------------------------------------===//
// Rational
//===----------------------------------------------------------------------===//

static Rational reduce(__int128 num, __int128 den) {
  if (den < 0) {
    num = -num;
    den = -den;
  }
  __int128 a = num < 0 ? -num : num, b = den;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) {
    num /= a;
    den /= a;
  }
  return Rational(static_cast<int64_t>(num), static_cast<int64_t>(den));
}

Rational::Rational(int64_t num, int64_t den) : n(num), d(den) {
  if (d < 0) {
    n = -n;
    d = -d;
  }
  int64_t g = std::gcd(n, d);
  if (g > 1) {
    n /= g;
    d /= g;
  }
}

Rational Rational::operator+(const Rational &o) const {
  return reduce(static_cast<__int128>(n) * o.d + static_cast<__int128>(o.n) * d,
                static_cast<__int128>(d) * o.d);
}

Rational Rational::operator*(const Rational &o) const {
  return reduce(static_cast<__int128>(n) * o.n, static_cast<__int128>(d) * o.d);
}

std::string Rational::str() const {
  std::string s = std::to_string(n);
  if (d != 1)
    s += "/" + std::to_string(d);
  return s;
}

//===----------------------------------------------------------------------===//
// Polynomial
//===----------------------------------------------------------------------===//

void Polynomial::add(const Monomial &monomial, Rational coefficient) {
  if (coefficient.isZero())
    return;
  auto [it, inserted] = termMap.try_emplace(monomial, coefficient);
  if (inserted)
    return;
  it->second = it->second + coefficient;
  if (it->second.isZero())
    termMap.erase(it);
}

Polynomial Polynomial::symbol(llvm::StringRef name, int exponent) {
  Monomial m;
  if (exponent != 0)
    m.emplace(name.str(), exponent);
  return term(1, std::move(m));
}

Polynomial Polynomial::term(Rational coefficient, Monomial monomial) {
  Polynomial p;
  p.add(monomial, coefficient);
  return p;
}

Polynomial Polynomial::fromDim(const ir::Dim &dim) {
  Polynomial p(dim.coefficient());
  for (const std::string &name : dim.symbols())
    p = p * symbol(name);
  return p;
}

Rational Polynomial::coefficient(const Monomial &monomial) const {
  auto it = termMap.find(monomial);
  return it == termMap.end() ? Rational(0) : it->second;
}

Polynomial Polynomial::operator+(const Polynomial &o) const {
  Polynomial sum = *this;
  for (const auto &[m, c] : o.termMap)
    sum.add(m, c);
  return sum;
}

Polynomial Polynomial::operator-(const Polynomial &o) const {
  Polynomial diff = *this;
  for (const auto &[m, c] : o.termMap)
    diff.add(m, -c);
  return diff;
}

/// The product of two monomials: exponents add, zeros vanish.
static Monomial multiply(const Monomial &a, const Monomial &b) {
  Monomial m = a;
  for (const auto &[name, exp] : b) {
    int &e = m[name];
    e += exp;
    if (e == 0)
      m.erase(name);
  }
  return m;
}

Polynomial Polynomial::operator*(const Polynomial &o) const {
  Polynomial product;
  for (const auto &[ma, ca] : termMap)
    for (const auto &[mb, cb] : o.termMap)
      product.add(multiply(ma, mb), ca * cb);
  return product;
}

std::optional<double> Polynomial::evaluate(const ir::DimEnv &env) const {
  double sum = 0;
  for (const auto &[m, c] : termMap) {
    double v = c.toDouble();
    for (const auto &[name, exp] : m) {
      auto it = env.find(name);
      if (it == env.end())
        return std::nullopt;
      v *= std::pow(static_cast<double>(it->second), exp);
    }
    sum += v;
  }
  return sum;
}

/// `N`, `H^2`: one factor of a term.
static std::string factor(llvm::StringRef name, int exponent) {
  std::string s = name.str();
  if (exponent != 1)
    s += "^" + std::to_string(exponent);
  return s;
}

static std::string joinFactors(llvm::ArrayRef<std::string> factors) {
  std::string s;
  for (const std::string &f : factors)
    s += (s.empty() ? "" : "*") + f;
  return s;
}

/// One term without its sign: `2*N/P`, `N/(P*T)`, `1/P`, `20`.
static std::string termText(const Monomial &m, Rational c) {
  llvm::SmallVector<std::string, 4> num, den;
  int64_t cn = c.num() < 0 ? -c.num() : c.num();
  if (cn != 1)
    num.push_back(std::to_string(cn));
  if (c.den() != 1)
    den.push_back(std::to_string(c.den()));
  for (const auto &[name, exp] : m) {
    if (exp > 0)
      num.push_back(factor(name, exp));
    else
      den.push_back(factor(name, -exp));
  }
  std::string s = num.empty() ? "1" : joinFactors(num);
  if (den.size() == 1)
    s += "/" + den.front();
  else if (den.size() > 1)
    s += "/(" + joinFactors(den) + ")";
  return s;
}

/// Sort key of a term: numerator degree (descending), denominator degree,
/// then the monomial itself.
static std::tuple<int, int, const Monomial &> termOrder(const Monomial &m) {
  int up = 0, down = 0;
  for (const auto &entry : m)
    (entry.second > 0 ? up : down) += std::abs(entry.second);
  return {-up, down, m};
}

std::string Polynomial::str() const {
  if (termMap.empty())
    return "0";
  llvm::SmallVector<const Terms::value_type *, 8> order;
  for (const auto &t : termMap)
    order.push_back(&t);
  llvm::stable_sort(order, [](const auto *a, const auto *b) {
    return termOrder(a->first) < termOrder(b->first);
  });
  std::string s;
  for (const auto *t : order) {
    bool negative = t->second.isNegative();
    if (s.empty())
      s += negative ? "-" : "";
    else
      s += negative ? " - " : " + ";
    s += termText(t->first, t->second);
  }
  return s;
}

} // namespace coconet::analysis
