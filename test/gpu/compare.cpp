//=== compare.cpp - a generated program's results against the simulator's -===//
//
// The GPU check's comparator (test/gpu/README.md). Host-only C++17, linked
// with the runtime's .npy reader (coconet_rt); nothing else, so that it
// builds where the compiler does not.
//
//   compare [--tol SPEC] [--dtypes SPEC] [--tsv FILE] [--label TEXT]
//           EXPECTED_DIR ACTUAL_DIR
//       compares every EXPECTED_DIR/<name>.npy with ACTUAL_DIR/<name>.npy;
//       one line per result; exit 0 when all are within their tolerance,
//       1 when one is not, 2 on a usage or I/O error.
//   compare --self-test [--dtypes SPEC] EXPECTED_DIR
//       checks this comparator on every file of EXPECTED_DIR (in memory):
//       a file against itself, against copies moved by one unit in the last
//       place, with one element grossly wrong, with NaNs of other payloads,
//       with another shape or element type, and a missing file.
//   compare --perturb K [--dtypes SPEC] SRC_DIR DST_DIR
//       writes a copy of every SRC_DIR/<name>.npy with each finite float
//       element moved K units in the last place of its type toward zero
//       (zero moves away from it), integers increased by K and bools
//       flipped (for checking this comparator against `coconetc sim
//       --check-outputs`).
//
// SPEC lists NAME=VALUE pairs separated by commas: --tol gives a result's
// tolerance in ulps (default 0: bitwise), --dtypes its element type (f16,
// bf16, f32, f64, i32, i64, u64, bool; needed for bf16, which .npy holds as
// f32). The units are those of `coconetc sim --check-ulps`
// (compiler/verify/Differential.h): an element passes when its bits equal
// the expected ones (any two NaNs are equal), or when, for a float type and
// a tolerance above 0,
//     |a - b| <= ulps * eps(dtype) * max(|a|, |b|, scale)
// with eps the spacing at 1 (2^-10 f16, 2^-7 bf16, 2^-23 f32, 2^-52 f64)
// and scale the largest finite |expected| of the result: within `ulps`
// roundings of the element, with a floor for values that cancel to near
// zero. Integers and bools are always exact. Each result line also gives
// the largest distance in representable values ("repr ulp"), the plain
// unit-in-the-last-place count.
//
//===----------------------------------------------------------------------===//

#include "coconet/npy.h"
#include "coconet/numeric.h"
#include "coconet/types.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <map>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace coconet::rt;

namespace {

// --- Element types --------------------------------------------------------

bool kindFromName(const std::string &s, DType *out) {
  for (DType k : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I32,
                  DType::I64, DType::U64, DType::Bool})
    if (s == dtypeName(k)) {
      *out = k;
      return true;
    }
  return false;
}

/// The .npy type that holds a kind (bf16 is written as exact f32 values).
NpyType npyTypeOf(DType k) {
  switch (k) {
  case DType::F16:
    return NpyType::F16;
  case DType::BF16:
  case DType::F32:
    return NpyType::F32;
  case DType::F64:
    return NpyType::F64;
  case DType::I32:
    return NpyType::I32;
  case DType::I64:
    return NpyType::I64;
  case DType::U64:
    return NpyType::U64;
  case DType::Bool:
    return NpyType::Bool;
  }
  return NpyType::F32;
}

/// The kind of an .npy type when no --dtypes entry names the result.
DType defaultKind(NpyType t) {
  switch (t) {
  case NpyType::F16:
    return DType::F16;
  case NpyType::F32:
    return DType::F32;
  case NpyType::F64:
    return DType::F64;
  case NpyType::I32:
    return DType::I32;
  case NpyType::I64:
    return DType::I64;
  case NpyType::U64:
    return DType::U64;
  case NpyType::Bool:
    return DType::Bool;
  }
  return DType::F32;
}

/// The spacing of a float kind at 1.
double epsOf(DType k) {
  switch (k) {
  case DType::F16:
    return std::ldexp(1.0, -10);
  case DType::BF16:
    return std::ldexp(1.0, -7);
  case DType::F32:
    return std::ldexp(1.0, -23);
  case DType::F64:
    return std::ldexp(1.0, -52);
  default:
    return 0;
  }
}

/// The smallest positive normal value of a float kind.
double minNormalOf(DType k) {
  switch (k) {
  case DType::F16:
    return std::ldexp(1.0, -14);
  case DType::BF16:
  case DType::F32:
    return std::ldexp(1.0, -126);
  case DType::F64:
    return std::ldexp(1.0, -1022);
  default:
    return 0;
  }
}

// --- A result: an .npy array and its kind ----------------------------------

struct Result {
  DType kind = DType::F32;
  NpyArray array;

  int64_t size() const { return array.numElements(); }
  unsigned width() const { return npyElementSize(array.type); }
  const uint8_t *at(int64_t i) const {
    return array.data.data() + static_cast<size_t>(i) * width();
  }
  uint8_t *at(int64_t i) {
    return array.data.data() + static_cast<size_t>(i) * width();
  }
  /// The element's bits, zero-extended (little-endian host).
  uint64_t bits(int64_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, at(i), width());
    return v;
  }
  void setBits(int64_t i, uint64_t v) { std::memcpy(at(i), &v, width()); }
  double value(int64_t i) const { return array.getAsDouble(i); }
  void setValue(int64_t i, double v) {
    switch (array.type) {
    case NpyType::F16:
      setBits(i, doubleToHalfBits(v));
      return;
    case NpyType::F32: {
      float f = kind == DType::BF16
                    ? bfloat16BitsToFloat(doubleToBFloat16Bits(v))
                    : static_cast<float>(v);
      setBits(i, floatBits(f));
      return;
    }
    case NpyType::F64:
      setBits(i, doubleBits(v));
      return;
    default:
      setBits(i, static_cast<uint64_t>(static_cast<int64_t>(v)));
      return;
    }
  }
};

/// Sign and magnitude bits of a float kind's element, as stored.
struct FloatBits {
  bool negative;
  uint64_t magnitude; ///< in units of the kind's last place
  uint64_t infinity;  ///< the magnitude of infinity
};

FloatBits floatBitsOf(const Result &r, int64_t i) {
  const uint64_t b = r.bits(i);
  switch (r.kind) {
  case DType::F16:
    return {(b >> 15) != 0, b & 0x7fffu, 0x7c00u};
  case DType::BF16:
    return {(b >> 31) != 0, (b >> 16) & 0x7fffu, 0x7f80u};
  case DType::F32:
    return {(b >> 31) != 0, b & 0x7fffffffu, 0x7f800000u};
  default:
    return {(b >> 63) != 0, b & 0x7fffffffffffffffull, 0x7ff0000000000000ull};
  }
}

void setFloatBits(Result &r, int64_t i, bool negative, uint64_t magnitude) {
  switch (r.kind) {
  case DType::F16:
    r.setBits(i, (negative ? 0x8000u : 0u) | magnitude);
    return;
  case DType::BF16:
    r.setBits(i, ((negative ? 0x8000u : 0u) | magnitude) << 16);
    return;
  case DType::F32:
    r.setBits(i, (negative ? 0x80000000u : 0u) | magnitude);
    return;
  default:
    r.setBits(i, (negative ? 0x8000000000000000ull : 0ull) | magnitude);
    return;
  }
}

/// Representable values between two elements of a float kind (+-0 are 0
/// apart; NaN against anything else is infinitely far).
double reprDistance(const Result &a, int64_t i, const Result &b, int64_t j) {
  const FloatBits x = floatBitsOf(a, i), y = floatBitsOf(b, j);
  const bool xNaN = x.magnitude > x.infinity, yNaN = y.magnitude > y.infinity;
  if (xNaN || yNaN)
    return xNaN && yNaN ? 0 : INFINITY;
  const double ox = x.negative ? -double(x.magnitude) : double(x.magnitude);
  const double oy = y.negative ? -double(y.magnitude) : double(y.magnitude);
  // Exact below 2^53 units; only a report beyond.
  if (x.negative == y.negative)
    return double(x.magnitude > y.magnitude ? x.magnitude - y.magnitude
                                            : y.magnitude - x.magnitude);
  return std::fabs(ox - oy);
}

// --- Comparing two results ---------------------------------------------------

struct Diff {
  std::string problem; ///< structural: type, shape, a missing file
  int64_t elements = 0;
  int64_t differing = 0;
  int64_t failing = 0;
  double maxAbs = 0;
  double maxUlps = 0; ///< the units of --tol
  double maxRepr = 0; ///< representable values apart (floats)
  double tolerance = 0;
  std::string firstFailure;
  bool ok() const { return problem.empty() && failing == 0; }
};

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool sameElement(const Result &e, const Result &a, int64_t i) {
  if (e.bits(i) == a.bits(i))
    return true;
  if (!isFloat(e.kind))
    return false;
  return std::isnan(e.value(i)) && std::isnan(a.value(i));
}

/// `expected` against `actual`, as compiler/verify/Differential.cpp's
/// compareTensors does.
Diff compareResults(const Result &expected, const Result &actual,
                    double tolerance) {
  Diff d;
  d.tolerance = tolerance;
  d.elements = expected.size();
  if (expected.array.type != actual.array.type) {
    d.problem = std::string("element type ") + npyDescr(actual.array.type) +
                ", expected " + npyDescr(expected.array.type);
    return d;
  }
  if (expected.array.shape != actual.array.shape) {
    d.problem = "shape " + shapeText(actual.array.shape) + ", expected " +
                shapeText(expected.array.shape);
    return d;
  }
  const bool isF = isFloat(expected.kind);
  double scale = 0;
  if (isF)
    for (int64_t i = 0; i < expected.size(); ++i) {
      const double v = expected.value(i);
      if (std::isfinite(v))
        scale = std::max(scale, std::fabs(v));
    }
  const double eps = epsOf(expected.kind);
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (sameElement(expected, actual, i))
      continue;
    ++d.differing;
    double x, y;
    if (isF) {
      x = expected.value(i);
      y = actual.value(i);
    } else {
      x = double(expected.array.getAsInt(i));
      y = double(actual.array.getAsInt(i));
    }
    const double diff = std::fabs(x - y);
    if (!std::isnan(diff))
      d.maxAbs = std::max(d.maxAbs, diff);
    const double unit =
        eps * std::max({std::fabs(x), std::fabs(y), scale, 1e-300});
    double u = isF ? diff / unit : INFINITY;
    if (std::isnan(u))
      u = INFINITY;
    d.maxUlps = std::max(d.maxUlps, u);
    if (isF)
      d.maxRepr = std::max(d.maxRepr, reprDistance(expected, i, actual, i));
    const bool within = isF && tolerance > 0 && u <= tolerance;
    if (!within && d.failing++ == 0) {
      if (isF)
        d.firstFailure = "element " + std::to_string(i) + ": " + number(y) +
                         ", expected " + number(x);
      else
        d.firstFailure = "element " + std::to_string(i) + ": " +
                         std::to_string(actual.array.getAsInt(i)) +
                         ", expected " +
                         std::to_string(expected.array.getAsInt(i));
    }
  }
  return d;
}

std::string ulpText(double u) {
  if (std::isinf(u))
    return "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", u);
  return buf;
}

std::string diffLine(const std::string &name, const Result &expected,
                     const Diff &d) {
  std::string s = name + ": " + dtypeName(expected.kind) +
                  shapeText(expected.array.shape) + ": ";
  if (!d.problem.empty())
    return s + "FAILED: " + d.problem;
  if (d.differing == 0) {
    s += "bitwise equal (" + std::to_string(d.elements) + " elements)";
  } else {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%lld of %lld elements differ, max |diff| %.3e, max %s ulp",
                  static_cast<long long>(d.differing),
                  static_cast<long long>(d.elements), d.maxAbs,
                  ulpText(d.maxUlps).c_str());
    s += buf;
    if (isFloat(expected.kind))
      s += " (" + ulpText(d.maxRepr).substr(0, ulpText(d.maxRepr).find('.')) +
           " repr ulp)";
  }
  s += ", tolerance " +
       ulpText(d.tolerance).substr(0, ulpText(d.tolerance).find(".00")) + ": " +
       (d.ok() ? "ok" : "FAILED");
  if (d.failing)
    s += " (" + std::to_string(d.failing) + " outside; first " +
         d.firstFailure + ")";
  return s;
}

// --- Files -------------------------------------------------------------------

using Spec = std::map<std::string, std::string>;

bool parseSpec(const std::string &text, Spec *out) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos)
      comma = text.size();
    const std::string item = text.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return false;
    (*out)[item.substr(0, eq)] = item.substr(eq + 1);
    pos = comma + 1;
  }
  return true;
}

/// The *.npy names (without the suffix) of a directory, sorted.
bool listResults(const std::string &dir, std::vector<std::string> *out) {
  DIR *d = opendir(dir.c_str());
  if (!d)
    return false;
  while (const dirent *e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".npy") == 0)
      out->push_back(n.substr(0, n.size() - 4));
  }
  closedir(d);
  std::sort(out->begin(), out->end());
  return true;
}

bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

/// Reads DIR/NAME.npy as a result of the kind --dtypes gives (else the
/// file's own); a declared kind the file cannot hold is an error.
Status readResult(const std::string &dir, const std::string &name,
                  const Spec &dtypes, Result *out) {
  COCONET_RETURN_IF_ERROR(readNpyFile(dir + "/" + name + ".npy", &out->array));
  out->kind = defaultKind(out->array.type);
  auto it = dtypes.find(name);
  if (it != dtypes.end()) {
    DType k;
    if (!kindFromName(it->second, &k))
      return Status::error(StatusCode::InvalidArgument,
                           "unknown element type '" + it->second + "'");
    if (npyTypeOf(k) != out->array.type)
      return Status::error(StatusCode::InvalidArgument,
                           dir + "/" + name + ".npy holds " +
                               npyDescr(out->array.type) + ", not " +
                               it->second);
    out->kind = k;
  }
  return Status::success();
}

int usage() {
  std::fprintf(stderr,
               "usage: compare [--tol SPEC] [--dtypes SPEC] [--tsv FILE] "
               "[--label TEXT] EXPECTED_DIR ACTUAL_DIR\n"
               "       compare --self-test [--dtypes SPEC] EXPECTED_DIR\n"
               "       compare --perturb K [--dtypes SPEC] SRC_DIR DST_DIR\n");
  return 2;
}

int compareDirs(const std::string &expectedDir, const std::string &actualDir,
                const Spec &tols, const Spec &dtypes, const std::string &tsv,
                const std::string &label) {
  std::vector<std::string> names;
  if (!listResults(expectedDir, &names)) {
    std::fprintf(stderr, "compare: cannot read the directory %s\n",
                 expectedDir.c_str());
    return 2;
  }
  if (names.empty()) {
    std::fprintf(stderr, "compare: no .npy files in %s\n", expectedDir.c_str());
    return 2;
  }
  for (const auto &[name, _] : tols)
    if (!std::binary_search(names.begin(), names.end(), name)) {
      std::fprintf(stderr,
                   "compare: --tol names '%s', which %s does not hold\n",
                   name.c_str(), expectedDir.c_str());
      return 2;
    }
  FILE *table = nullptr;
  if (!tsv.empty() && !(table = std::fopen(tsv.c_str(), "a"))) {
    std::fprintf(stderr, "compare: cannot append to %s\n", tsv.c_str());
    return 2;
  }
  int failed = 0;
  for (const std::string &name : names) {
    Result expected, actual;
    Status st = readResult(expectedDir, name, dtypes, &expected);
    if (!st.ok()) {
      std::fprintf(stderr, "compare: %s\n", st.toString().c_str());
      if (table)
        std::fclose(table);
      return 2;
    }
    double tol = 0;
    if (auto it = tols.find(name); it != tols.end())
      tol = std::atof(it->second.c_str());
    Diff d;
    d.tolerance = tol;
    d.elements = expected.size();
    if (!exists(actualDir + "/" + name + ".npy")) {
      d.problem = "missing: the program did not write " + actualDir + "/" +
                  name + ".npy";
    } else {
      actual.kind = expected.kind;
      Status rs = readNpyFile(actualDir + "/" + name + ".npy", &actual.array);
      if (!rs.ok())
        d.problem = rs.toString();
      else
        d = compareResults(expected, actual, tol);
    }
    std::printf("  %s\n", diffLine(name, expected, d).c_str());
    if (!d.ok())
      ++failed;
    if (table)
      std::fprintf(table, "%s\t%s\t%s\t%lld\t%lld\t%.6g\t%s\t%s\t%s\t%s\n",
                   label.c_str(), name.c_str(), dtypeName(expected.kind),
                   static_cast<long long>(d.elements),
                   static_cast<long long>(d.differing), d.maxAbs,
                   ulpText(d.maxUlps).c_str(), ulpText(d.maxRepr).c_str(),
                   ulpText(tol).c_str(), d.ok() ? "ok" : "FAILED");
  }
  std::vector<std::string> actualNames;
  if (listResults(actualDir, &actualNames))
    for (const std::string &n : actualNames)
      if (!std::binary_search(names.begin(), names.end(), n))
        std::printf("  note: %s/%s.npy has no expected counterpart\n",
                    actualDir.c_str(), n.c_str());
  if (table)
    std::fclose(table);
  return failed ? 1 : 0;
}

// --- Perturbing --------------------------------------------------------------

/// Moves every finite float element `k` units in the last place toward zero
/// (zero away from it, keeping its sign), adds `k` to integers (wrapping)
/// and flips bools. Returns the number of elements changed.
int64_t perturb(Result &r, uint64_t k) {
  int64_t changed = 0;
  for (int64_t i = 0; i < r.size(); ++i) {
    if (isFloat(r.kind)) {
      FloatBits f = floatBitsOf(r, i);
      if (f.magnitude >= f.infinity)
        continue; // inf and NaN stay
      const uint64_t m = f.magnitude == 0  ? k
                         : f.magnitude > k ? f.magnitude - k
                                           : 0;
      setFloatBits(r, i, f.negative, m);
    } else if (r.kind == DType::Bool) {
      r.setBits(i, r.bits(i) ? 0 : 1);
    } else {
      const uint64_t mask =
          r.width() == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * r.width())) - 1;
      r.setBits(i, (r.bits(i) + k) & mask);
    }
    ++changed;
  }
  return changed;
}

int perturbDirs(const std::string &src, const std::string &dst, uint64_t k,
                const Spec &dtypes) {
  std::vector<std::string> names;
  if (!listResults(src, &names) || names.empty()) {
    std::fprintf(stderr, "compare: no .npy files in %s\n", src.c_str());
    return 2;
  }
  mkdir(dst.c_str(), 0777);
  for (const std::string &name : names) {
    Result r;
    Status st = readResult(src, name, dtypes, &r);
    if (st.ok()) {
      const int64_t changed = perturb(r, k);
      st = writeNpyFile(dst + "/" + name + ".npy", r.array);
      std::printf("  %s: %lld of %lld elements moved\n", name.c_str(),
                  static_cast<long long>(changed),
                  static_cast<long long>(r.size()));
    }
    if (!st.ok()) {
      std::fprintf(stderr, "compare: %s\n", st.toString().c_str());
      return 2;
    }
  }
  return 0;
}

// --- Self-test ---------------------------------------------------------------

struct SelfTest {
  std::string file;
  int checks = 0, failures = 0;
  void expect(bool ok, const std::string &what, const Diff &d) {
    ++checks;
    if (ok)
      return;
    ++failures;
    std::printf("  FAILED: self-test %s: %s (differing %lld, failing %lld, "
                "max %s ulp, %s repr ulp%s%s)\n",
                file.c_str(), what.c_str(), static_cast<long long>(d.differing),
                static_cast<long long>(d.failing), ulpText(d.maxUlps).c_str(),
                ulpText(d.maxRepr).c_str(), d.problem.empty() ? "" : "; ",
                d.problem.c_str());
  }
};

/// Checks the comparator on one expected result.
void selfTest(const Result &e, SelfTest &t) {
  const bool isF = isFloat(e.kind);
  int64_t finite = 0, largest = -1;
  double scale = 0;
  for (int64_t i = 0; i < e.size(); ++i) {
    if (isF && !std::isfinite(e.value(i)))
      continue;
    ++finite;
    const double v = std::fabs(isF ? e.value(i) : double(e.array.getAsInt(i)));
    if (largest < 0 || v > scale) {
      scale = v;
      largest = i;
    }
  }

  // Itself: bitwise equal.
  Diff d = compareResults(e, e, 0);
  t.expect(d.ok() && d.differing == 0, "a result against itself", d);

  // One unit in the last place (floats), +1 (integers), flipped (bools).
  Result p = e;
  const int64_t moved = perturb(p, 1);
  d = compareResults(e, p, 0);
  t.expect(moved == finite && d.differing == moved,
           "every finite element moved counts as differing", d);
  if (moved > 0)
    t.expect(!d.ok(), "moved elements fail a bitwise comparison", d);
  if (isF && moved > 0)
    t.expect(d.maxRepr == 1, "moved by exactly one representable value", d);
  if (isF && moved > 0 && scale >= minNormalOf(e.kind)) {
    // One place is at most eps * |x| for a normal x and eps * the smallest
    // normal for a subnormal or zero: within 1 ulp in --tol's units.
    d = compareResults(e, p, 1);
    t.expect(d.ok() && d.maxUlps <= 1, "one place is within 1 ulp", d);
  }
  if (!isF && moved > 0) {
    d = compareResults(e, p, 1e9);
    t.expect(!d.ok(), "integers are exact whatever the tolerance", d);
  }

  // One element grossly wrong: the largest negated (or, when it is zero,
  // set to 1): 2 / eps ulp or more, so it fails a tolerance of 1 / eps
  // (128 for bf16, 1000 at most), above any tolerance used here (prepare.py
  // refuses one that is not).
  if (e.size() > 0) {
    Result g = e;
    const int64_t at = largest >= 0 ? largest : 0;
    if (isF) {
      const double v = e.value(at);
      g.setValue(at, std::isfinite(v) && v != 0 ? -v : 1.0);
    } else if (e.kind == DType::Bool) {
      g.setBits(at, e.bits(at) ? 0 : 1);
    } else {
      g.setBits(at, e.bits(at) ^ 1);
    }
    const double gross = isF ? std::min(1000.0, 1 / epsOf(e.kind)) : 1000;
    d = compareResults(e, g, gross);
    t.expect(!d.ok() && d.failing == 1 && d.differing == 1,
             "one wrong element fails a " + std::to_string(int(gross)) +
                 " ulp tolerance",
             d);
  }

  // NaNs: any two are equal; a NaN against a number is not.
  if (isF && e.size() > 0) {
    Result n1 = e, n2 = e;
    const FloatBits f = floatBitsOf(e, 0);
    setFloatBits(n1, 0, false, f.infinity + 1); // a signalling payload
    setFloatBits(n2, 0, true, f.infinity | (f.infinity >> 1)); // a quiet -NaN
    d = compareResults(n1, n2, 0);
    t.expect(d.ok() && d.differing == 0, "NaNs of other payloads are equal", d);
    Result one = e;
    one.setValue(0, 1.0);
    d = compareResults(one, n2, 1e9);
    t.expect(!d.ok(), "a NaN against a number fails", d);
  }

  // Structure: another shape, another element type.
  Result s = e;
  s.array.shape.insert(s.array.shape.begin(), 1);
  if (s.array.shape == e.array.shape) // cannot happen; keeps the check honest
    s.array.shape.push_back(1);
  d = compareResults(e, s, 1e9);
  t.expect(!d.ok() && !d.problem.empty(), "another shape fails", d);
  Result other = e;
  other.array.type = e.array.type == NpyType::F64 ? NpyType::F32 : NpyType::F64;
  d = compareResults(e, other, 1e9);
  t.expect(!d.ok() && !d.problem.empty(), "another element type fails", d);
}

int selfTestDir(const std::string &dir, const Spec &dtypes) {
  std::vector<std::string> names;
  if (!listResults(dir, &names) || names.empty()) {
    std::fprintf(stderr, "compare: no .npy files in %s\n", dir.c_str());
    return 2;
  }
  int failures = 0, checks = 0;
  for (const std::string &name : names) {
    Result e;
    Status st = readResult(dir, name, dtypes, &e);
    if (!st.ok()) {
      std::fprintf(stderr, "compare: %s\n", st.toString().c_str());
      return 2;
    }
    SelfTest t;
    t.file = dir + "/" + name + ".npy";
    selfTest(e, t);
    checks += t.checks;
    failures += t.failures;
  }
  // A missing file fails (with the file's name), it is not skipped.
  {
    ++checks;
    std::string nowhere = dir + "/no-such-directory";
    std::printf("  (a missing result, on purpose:)\n");
    const int rc = compareDirs(dir, nowhere, {}, dtypes, "", "");
    if (rc != 1) {
      ++failures;
      std::printf("  FAILED: self-test %s: a missing result gives %d, not 1\n",
                  dir.c_str(), rc);
    }
  }
  std::printf("  self-test of the comparator on %s: %d checks, %d failed\n",
              dir.c_str(), checks, failures);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> positional;
  Spec tols, dtypes;
  std::string tsv, label, mode = "compare";
  uint64_t k = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string *out) {
      if (i + 1 >= argc)
        return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--tol" || a == "--dtypes") {
      if (!value(&v))
        return usage();
      if (v != "-" && !parseSpec(v, a == "--tol" ? &tols : &dtypes)) {
        std::fprintf(stderr, "compare: %s expects NAME=VALUE,...: '%s'\n",
                     a.c_str(), v.c_str());
        return 2;
      }
    } else if (a == "--tsv") {
      if (!value(&tsv))
        return usage();
    } else if (a == "--label") {
      if (!value(&label))
        return usage();
    } else if (a == "--self-test") {
      mode = "self-test";
    } else if (a == "--perturb") {
      if (!value(&v))
        return usage();
      mode = "perturb";
      k = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a.size() > 1 && a[0] == '-') {
      return usage();
    } else {
      positional.push_back(a);
    }
  }
  for (const auto &[name, text] : tols) {
    char *end = nullptr;
    const double t = std::strtod(text.c_str(), &end);
    if (!end || *end || !(t >= 0)) {
      std::fprintf(stderr, "compare: bad tolerance %s=%s\n", name.c_str(),
                   text.c_str());
      return 2;
    }
  }
  if (mode == "self-test")
    return positional.size() == 1 ? selfTestDir(positional[0], dtypes)
                                  : usage();
  if (positional.size() != 2)
    return usage();
  if (mode == "perturb")
    return perturbDirs(positional[0], positional[1], k, dtypes);
  return compareDirs(positional[0], positional[1], tols, dtypes, tsv, label);
}
