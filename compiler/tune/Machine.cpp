//===- Machine.cpp - machine files: parsing and printing ------------------===//
//
// One statement per line, words separated by blanks, `#` to the end of the
// line a comment. Numbers carry units, converted to seconds, bytes per
// second and FLOP per second; decimal prefixes are powers of 1000 (GB/s),
// binary ones powers of 1024 (GiB/s).
//
//===----------------------------------------------------------------------===//

#include "tune/Machine.h"

#include "diag/TerminalText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace coconet::tune {

static constexpr Algorithm kAlgorithms[] = {Algorithm::Library, Algorithm::Ring,
                                            Algorithm::Tree,
#define TEAM_ALGORITHM(Name, Printed) Algorithm::Name,
#include "ir/TeamAlgorithms.def"
                                            Algorithm::Direct};
static constexpr Collective kCollectives[] = {
#define STAGE(Name, Printed, Description)
#define COMMUNICATION_STAGE(Name, Printed, Description) Collective::Name,
#include "ir/StageKinds.def"
};

llvm::StringRef algorithmName(Algorithm a) {
  switch (a) {
  case Algorithm::Library:
    return "library";
  case Algorithm::Ring:
    return "ring";
  case Algorithm::Tree:
    return "tree";
#define TEAM_ALGORITHM(Name, Printed)                                          \
  case Algorithm::Name:                                                        \
    return Printed;
#include "ir/TeamAlgorithms.def"
  case Algorithm::Direct:
    return "direct";
  }
  return "?";
}

std::optional<Algorithm> parseAlgorithm(llvm::StringRef name) {
  for (Algorithm a : kAlgorithms)
    if (algorithmName(a) == name)
      return a;
  return std::nullopt;
}

llvm::ArrayRef<Algorithm> allAlgorithms() { return kAlgorithms; }

bool isTeamAlgorithm(Algorithm a) {
  switch (a) {
#define TEAM_ALGORITHM(Name, Printed) case Algorithm::Name:
#include "ir/TeamAlgorithms.def"
    return true;
  case Algorithm::Library:
  case Algorithm::Ring:
  case Algorithm::Tree:
  case Algorithm::Direct:
    return false;
  }
  return false;
}

llvm::StringRef levelName(Level l) {
  return l == Level::Node ? "node" : "network";
}

llvm::StringRef collectiveName(Collective c) {
  switch (c) {
#define STAGE(Name, Printed, Description)
#define COMMUNICATION_STAGE(Name, Printed, Description)                        \
  case Collective::Name:                                                       \
    return Printed;
#include "ir/StageKinds.def"
  }
  return "?";
}

std::optional<Collective> collectiveOf(ir::StageKind kind) {
  switch (kind) {
#define STAGE(Name, Printed, Description)
#define COMPUTE_STAGE(Name, Printed, Description)
#define COMMUNICATION_STAGE(Name, Printed, Description)                        \
  case ir::StageKind::Name:                                                    \
    return Collective::Name;
#include "ir/StageKinds.def"
#define STAGE(Name, Printed, Description)
#define COMPUTE_STAGE(Name, Printed, Description) case ir::StageKind::Name:
#define COMMUNICATION_STAGE(Name, Printed, Description)
#include "ir/StageKinds.def"
  case ir::StageKind::Param:
    break;
  }
  return std::nullopt;
}

const LinkCost *Machine::find(Collective c, Algorithm a, Level l,
                              std::optional<ir::DType> type) const {
  llvm::SmallVector<std::optional<ir::DType>, 3> tries;
  if (type) {
    tries.push_back(type);
    if (*type == ir::DType::BF16)
      tries.push_back(ir::DType::F16);
  }
  tries.push_back(std::nullopt);
  for (std::optional<ir::DType> t : tries)
    if (auto it = collectives.find({c, a, l, t}); it != collectives.end())
      return &it->second;
  return nullptr;
}

std::string Machine::shownName() const { return safeWord(name); }

std::string Machine::shownPath() const {
  return safeWord(path, kMaxMessageColumns / 2);
}

namespace {

enum class Quantity { Time, Bandwidth, Rate, Size, Count };

struct Unit {
  llvm::StringRef name;
  Quantity quantity;
  double scale;
};

constexpr double kKi = 1024.0;
const Unit kUnits[] = {
    {"s", Quantity::Time, 1},
    {"ms", Quantity::Time, 1e-3},
    {"us", Quantity::Time, 1e-6},
    {"ns", Quantity::Time, 1e-9},
    {"B/s", Quantity::Bandwidth, 1},
    {"KB/s", Quantity::Bandwidth, 1e3},
    {"MB/s", Quantity::Bandwidth, 1e6},
    {"GB/s", Quantity::Bandwidth, 1e9},
    {"TB/s", Quantity::Bandwidth, 1e12},
    {"KiB/s", Quantity::Bandwidth, kKi},
    {"MiB/s", Quantity::Bandwidth, kKi *kKi},
    {"GiB/s", Quantity::Bandwidth, kKi *kKi *kKi},
    {"FLOP/s", Quantity::Rate, 1},
    {"MFLOP/s", Quantity::Rate, 1e6},
    {"GFLOP/s", Quantity::Rate, 1e9},
    {"TFLOP/s", Quantity::Rate, 1e12},
    {"B", Quantity::Size, 1},
    {"KB", Quantity::Size, 1e3},
    {"MB", Quantity::Size, 1e6},
    {"GB", Quantity::Size, 1e9},
    {"KiB", Quantity::Size, kKi},
    {"MiB", Quantity::Size, kKi *kKi},
    {"GiB", Quantity::Size, kKi *kKi *kKi},
};

const char *quantityText(Quantity q) {
  switch (q) {
  case Quantity::Time:
    return "a time (s, ms, us, ns)";
  case Quantity::Bandwidth:
    return "a bandwidth (B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s)";
  case Quantity::Size:
    return "a size (B, KB, MB, GB, KiB, MiB, GiB)";
  case Quantity::Rate:
    return "a rate (FLOP/s, MFLOP/s, GFLOP/s, TFLOP/s)";
  case Quantity::Count:
    return "a positive integer";
  }
  return "";
}

/// The values a field accepts, in its base unit (docs/tuner.md, "Machine
/// files"): wide enough for any machine from a laptop to a cluster's node
/// (H200: 4.8 TB/s, 1 PFLOP/s of f16; an idle CPU core: 1 GB/s), narrow
/// enough that a step's price stays a finite number of seconds and no
/// field drowns the others (`kernel-launch 1e308 s` priced every schedule
/// the same).
struct Range {
  double low, high;
  const char *text; ///< as a machine file writes the bounds
};
constexpr Range kLaunchRange{0, 1, "0 s to 1 s"};
constexpr Range kLatencyRange{0, 1, "0 s to 1 s"};
constexpr Range kPerElementRange{0, 1e-3, "0 s to 1 ms"};
constexpr Range kBandwidthRange{1e3, 1e15, "1 KB/s to 1000 TB/s"};
constexpr Range kRateRange{1e6, 1e17, "1 MFLOP/s to 100000 TFLOP/s"};
constexpr Range kCacheRange{1e3, 1024.0 * 1024 * 1024 * 1024,
                            "1 KB to 1024 GiB"};
constexpr int64_t kMaxRanksPerNode = 65536;
constexpr int64_t kMaxThreadsPerRank = 4096;

struct Word {
  llvm::StringRef text;
  llvm::SMRange range;
};

/// One line's words, or the place after its last word (for "missing").
struct Line {
  llvm::SmallVector<Word, 12> words;
  llvm::SMRange end;
};

const char *const kKeys[] = {"machine",          "target",
                             "ranks-per-node",   "threads-per-rank",
                             "kernel-launch",    "memory-bandwidth",
                             "matmul",           "ordered-sum",
                             "random-draw",      "libm-call",
                             "rounding",         "matmul-pack",
                             "fused-collective", "overlap",
                             "write-allocate",   "cache",
                             "collective"};

class Parser {
public:
  explicit Parser(DiagnosticEngine &diags) : diags(diags) {}

  std::optional<Machine> parse(llvm::StringRef text, llvm::SMLoc start);

private:
  void statement(Line &line);
  /// The word at `i`, or a "missing" error naming `what`.
  const Word *word(const Line &line, size_t i, llvm::StringRef key,
                   llvm::StringRef what);
  /// A number and its unit at `i`, `i + 1`, converted to the base unit.
  /// Refused outside `range` too.
  std::optional<double> value(const Line &line, size_t i, llvm::StringRef key,
                              Quantity quantity, bool zeroAllowed,
                              const Range &range);
  /// A positive integer of at most `most`.
  std::optional<int64_t> count(const Line &line, size_t i, llvm::StringRef key,
                               int64_t most);
  bool end(const Line &line, size_t i, llvm::StringRef key);
  /// False (after reporting) when `key` was given before.
  bool first(llvm::StringRef key, const Line &line);
  void bad(const Word &w, llvm::StringRef key, llvm::StringRef expected) {
    diags.report(w.range, DiagId::MachineBadValue, key, expected,
                 "'" + w.text.str() + "'");
  }

  DiagnosticEngine &diags;
  Machine machine;
  llvm::StringMap<llvm::SMRange> seen;
  llvm::SMRange fileStart;
};

const Word *Parser::word(const Line &line, size_t i, llvm::StringRef key,
                         llvm::StringRef what) {
  if (i < line.words.size())
    return &line.words[i];
  diags.report(line.end, DiagId::MachineBadValue, key, what,
               "the end of the line");
  return nullptr;
}

std::optional<double> Parser::value(const Line &line, size_t i,
                                    llvm::StringRef key, Quantity quantity,
                                    bool zeroAllowed, const Range &range) {
  const Word *number = word(line, i, key, quantityText(quantity));
  if (!number)
    return std::nullopt;
  double v = 0;
  // getAsDouble returns true on failure.
  if (number->text.getAsDouble(v) || !std::isfinite(v) || v < 0 ||
      (!zeroAllowed && v == 0)) {
    bad(*number, key,
        std::string(zeroAllowed ? "a number >= 0" : "a number > 0") +
            " and its unit");
    return std::nullopt;
  }
  const Word *unit = word(line, i + 1, key, quantityText(quantity));
  if (!unit)
    return std::nullopt;
  for (const Unit &u : kUnits) {
    if (u.name != unit->text || u.quantity != quantity)
      continue;
    const double base = v * u.scale;
    if (base < range.low || base > range.high) {
      diags.report(llvm::SMRange(number->range.Start, unit->range.End),
                   DiagId::MachineImplausible, key,
                   (number->text + " " + unit->text).str(), range.text);
      return std::nullopt;
    }
    return base;
  }
  bad(*unit, key, quantityText(quantity));
  return std::nullopt;
}

std::optional<int64_t> Parser::count(const Line &line, size_t i,
                                     llvm::StringRef key, int64_t most) {
  const Word *w = word(line, i, key, quantityText(Quantity::Count));
  if (!w)
    return std::nullopt;
  int64_t v = 0;
  if (w->text.getAsInteger(10, v) || v <= 0) {
    bad(*w, key, quantityText(Quantity::Count));
    return std::nullopt;
  }
  if (v > most) {
    diags.report(w->range, DiagId::MachineImplausible, key, w->text,
                 "1 to " + std::to_string(most));
    return std::nullopt;
  }
  return v;
}

bool Parser::end(const Line &line, size_t i, llvm::StringRef key) {
  if (i >= line.words.size())
    return true;
  diags.report(line.words[i].range, DiagId::MachineExtraWord,
               line.words[i].text, key);
  return false;
}

bool Parser::first(llvm::StringRef key, const Line &line) {
  auto [it, inserted] = seen.try_emplace(key, line.words[0].range);
  if (inserted)
    return true;
  diags.report(line.words[0].range, DiagId::MachineDuplicate, key)
      .note(it->second, DiagId::MachinePreviousValue);
  return false;
}

/// Chooses one of `names` at word `i`; -1 after reporting.
int choose(DiagnosticEngine &diags, const Line &line, size_t i,
           llvm::StringRef key, llvm::ArrayRef<llvm::StringRef> names,
           llvm::StringRef what) {
  std::string expected =
      std::string(what) + " (" + llvm::join(names, ", ") + ")";
  if (i >= line.words.size()) {
    diags.report(line.end, DiagId::MachineBadValue, key, expected,
                 "the end of the line");
    return -1;
  }
  for (size_t n = 0; n < names.size(); ++n)
    if (names[n] == line.words[i].text)
      return static_cast<int>(n);
  diags.report(line.words[i].range, DiagId::MachineBadValue, key, expected,
               "'" + line.words[i].text.str() + "'");
  return -1;
}

void Parser::statement(Line &line) {
  llvm::StringRef key = line.words[0].text;
  if (key == "machine" || key == "target" || key == "fused-collective" ||
      key == "overlap" || key == "write-allocate") {
    if (!first(key, line))
      return;
    int choice = 0;
    if (key == "machine") {
      const Word *w = word(line, 1, key, "a name");
      if (!w)
        return;
      machine.name = w->text.str();
    } else if (key == "target") {
      if ((choice = choose(diags, line, 1, key, {"cpu", "cuda"}, "a target")) <
          0)
        return;
      machine.target = choice == 0 ? "cpu" : "cuda";
    } else if (key == "fused-collective") {
      if ((choice = choose(diags, line, 1, key, {"overlapped", "shared"},
                           "how its communication meets its memory "
                           "traffic")) < 0)
        return;
      machine.fusedOverlaps = choice == 0;
    } else if (key == "write-allocate") {
      if ((choice = choose(diags, line, 1, key, {"yes", "no"},
                           "whether a store reads the line it misses")) < 0)
        return;
      machine.writeAllocate = choice == 0;
    } else {
      if ((choice = choose(diags, line, 1, key, {"concurrent", "alternating"},
                           "whether a matmul runs while its collective "
                           "moves data")) < 0)
        return;
      machine.overlapConcurrent = choice == 0;
    }
    end(line, 2, key);
    return;
  }
  if (key == "ranks-per-node" || key == "threads-per-rank") {
    if (!first(key, line))
      return;
    if (auto v = count(line, 1, key,
                       key == "ranks-per-node" ? kMaxRanksPerNode
                                               : kMaxThreadsPerRank)) {
      (key == "ranks-per-node" ? machine.ranksPerNode
                               : machine.threadsPerRank) = *v;
      end(line, 2, key);
    }
    return;
  }
  if (key == "kernel-launch" || key == "memory-bandwidth") {
    if (!first(key, line))
      return;
    bool time = key == "kernel-launch";
    if (auto v =
            value(line, 1, key, time ? Quantity::Time : Quantity::Bandwidth,
                  time, time ? kLaunchRange : kBandwidthRange)) {
      (time ? machine.kernelLaunch : machine.memoryBandwidth) = *v;
      end(line, 3, key);
    }
    return;
  }
  if (key == "ordered-sum" || key == "random-draw" || key == "libm-call" ||
      key == "rounding" || key == "matmul-pack") {
    // A time per element.
    if (!first(key, line))
      return;
    if (auto v = value(line, 1, key, Quantity::Time, true, kPerElementRange)) {
      (key == "ordered-sum"   ? machine.orderedSum
       : key == "random-draw" ? machine.randomDraw
       : key == "libm-call"   ? machine.libmCall
       : key == "rounding"    ? machine.rounding
                              : machine.matmulPack) = *v;
      end(line, 3, key);
    }
    return;
  }
  if (key == "cache") {
    // cache SIZE UNIT bandwidth NUMBER UNIT
    if (!first(key, line))
      return;
    std::optional<double> size =
        value(line, 1, key, Quantity::Size, false, kCacheRange);
    if (!size ||
        choose(diags, line, 3, key, {"bandwidth"}, "its bandwidth") < 0)
      return;
    std::optional<double> bandwidth =
        value(line, 4, key, Quantity::Bandwidth, false, kBandwidthRange);
    if (!bandwidth || !end(line, 6, key))
      return;
    machine.cacheSize = *size;
    machine.cacheBandwidth = *bandwidth;
    return;
  }
  if (key == "matmul") {
    const Word *w = word(line, 1, key, "an element type (f16, bf16, f32, f64)");
    if (!w)
      return;
    std::optional<ir::DType> dtype = ir::parseDType(w->text);
    if (!dtype || !ir::isFloat(*dtype)) {
      bad(*w, key, "an element type (f16, bf16, f32, f64)");
      return;
    }
    const std::string full = ("matmul " + w->text).str();
    if (!first(full, line))
      return;
    if (auto v = value(line, 2, full, Quantity::Rate, false, kRateRange)) {
      machine.matmulRate[*dtype] = *v;
      end(line, 4, key);
    }
    return;
  }
  if (key == "collective") {
    llvm::SmallVector<llvm::StringRef, 6> kinds, algorithms;
    for (Collective c : kCollectives)
      kinds.push_back(collectiveName(c));
    for (Algorithm a : kAlgorithms)
      algorithms.push_back(algorithmName(a));
    int c = choose(diags, line, 1, key, kinds, "a collective");
    if (c < 0)
      return;
    int a = choose(diags, line, 2, key, algorithms, "an algorithm");
    if (a < 0)
      return;
    int l = choose(diags, line, 3, key, {"node", "network"}, "a level");
    if (l < 0)
      return;
    std::string full = (key + " " + line.words[1].text + " " +
                        line.words[2].text + " " + line.words[3].text)
                           .str();
    // An optional element type: the line prices that type's elements.
    std::optional<ir::DType> type;
    size_t i = 4;
    if (i < line.words.size() && line.words[i].text != "latency") {
      type = ir::parseDType(line.words[i].text);
      if (!type) {
        bad(line.words[i], full,
            "an element type (" + ir::allDTypeNames() +
                ") or its latency per step (latency)");
        return;
      }
      full += " " + line.words[i++].text.str();
    }
    if (!first(full, line))
      return;
    if (choose(diags, line, i, full, {"latency"}, "its latency per step") < 0)
      return;
    std::optional<double> latency =
        value(line, i + 1, full, Quantity::Time, true, kLatencyRange);
    if (!latency)
      return;
    if (choose(diags, line, i + 3, full, {"bandwidth"}, "its bandwidth") < 0)
      return;
    std::optional<double> bandwidth =
        value(line, i + 4, full, Quantity::Bandwidth, false, kBandwidthRange);
    if (!bandwidth)
      return;
    // An optional bandwidth for the bytes the cache does not hold.
    std::optional<double> beyond = 0.0;
    if (i + 6 < line.words.size()) {
      if (choose(diags, line, i + 6, full, {"beyond-cache"},
                 "the end of the line or its bandwidth beyond the cache") < 0)
        return;
      beyond =
          value(line, i + 7, full, Quantity::Bandwidth, false, kBandwidthRange);
      if (!beyond)
        return;
    }
    if (!end(line, *beyond > 0 ? i + 9 : i + 6, full))
      return;
    machine.collectives[{kCollectives[c], kAlgorithms[a],
                         l == 0 ? Level::Node : Level::Network, type}] = {
        *latency, *bandwidth, *beyond};
    return;
  }
  std::string keys;
  for (const char *k : kKeys)
    keys += std::string(keys.empty() ? "" : ", ") + k;
  diags.report(line.words[0].range, DiagId::MachineUnknownKey, key, keys);
}

std::optional<Machine> Parser::parse(llvm::StringRef text, llvm::SMLoc start) {
  unsigned errors = diags.errorCount();
  fileStart = llvm::SMRange(start, start);
  size_t offset = 0;
  while (offset <= text.size()) {
    size_t eol = text.find('\n', offset);
    if (eol == llvm::StringRef::npos)
      eol = text.size();
    llvm::StringRef body = text.slice(offset, eol);
    body = body.take_until([](char c) { return c == '#'; });
    Line line;
    size_t pos = 0;
    while (true) {
      while (pos < body.size() && llvm::isSpace(body[pos]))
        ++pos;
      if (pos >= body.size())
        break;
      size_t stop = pos;
      while (stop < body.size() && !llvm::isSpace(body[stop]))
        ++stop;
      const char *p = body.data() + pos;
      line.words.push_back(
          {body.slice(pos, stop),
           llvm::SMRange(llvm::SMLoc::getFromPointer(p),
                         llvm::SMLoc::getFromPointer(p + (stop - pos)))});
      pos = stop;
    }
    const char *after = line.words.empty()
                            ? body.data()
                            : line.words.back().range.End.getPointer();
    // "missing" points just past the last word.
    line.end = llvm::SMRange(llvm::SMLoc::getFromPointer(after),
                             llvm::SMLoc::getFromPointer(after));
    if (!line.words.empty())
      statement(line);
    offset = eol + 1;
  }
  struct Required {
    const char *key;
    const char *what;
  };
  static const Required kRequired[] = {
      {"machine", "its name"},
      {"target", "cpu or cuda"},
      {"ranks-per-node", "how many ranks share a node"},
      {"kernel-launch", "the time a launch costs"},
      {"memory-bandwidth", "the bytes per second one rank reads and writes"},
      {"fused-collective", "overlapped or shared"},
      {"overlap", "concurrent or alternating"},
  };
  for (const Required &r : kRequired)
    if (!seen.count(r.key))
      diags.report(fileStart, DiagId::MachineMissing, r.key, r.what);
  if (diags.errorCount() != errors)
    return std::nullopt;
  return std::move(machine);
}

/// "%.6g" of a value in its base unit.
std::string number(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.6g", v);
  return s;
}

} // namespace

std::optional<Machine> parseMachine(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                    llvm::SourceMgr &sourceMgr,
                                    DiagnosticEngine &diags) {
  std::string path = buffer->getBufferIdentifier().str();
  llvm::StringRef text = buffer->getBuffer();
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::optional<Machine> machine =
      Parser(diags).parse(text, llvm::SMLoc::getFromPointer(text.data()));
  if (machine)
    machine->path = path;
  return machine;
}

void printMachine(const Machine &machine, llvm::StringRef header,
                  llvm::raw_ostream &os) {
  llvm::SmallVector<llvm::StringRef, 8> lines;
  header.split(lines, '\n');
  for (llvm::StringRef l : lines)
    if (!l.empty())
      os << "# " << l << '\n';
  os << "machine " << machine.name << '\n'
     << "target " << machine.target << '\n'
     << "ranks-per-node " << machine.ranksPerNode << '\n'
     << "threads-per-rank " << machine.threadsPerRank << '\n'
     << "kernel-launch " << number(machine.kernelLaunch) << " s\n"
     << "memory-bandwidth " << number(machine.memoryBandwidth) << " B/s\n";
  for (const auto &[dtype, rate] : machine.matmulRate)
    os << "matmul " << ir::dtypeName(dtype) << ' ' << number(rate)
       << " FLOP/s\n";
  if (machine.orderedSum > 0)
    os << "ordered-sum " << number(machine.orderedSum) << " s\n";
  if (machine.randomDraw > 0)
    os << "random-draw " << number(machine.randomDraw) << " s\n";
  if (machine.libmCall > 0)
    os << "libm-call " << number(machine.libmCall) << " s\n";
  if (machine.rounding > 0)
    os << "rounding " << number(machine.rounding) << " s\n";
  if (machine.matmulPack > 0)
    os << "matmul-pack " << number(machine.matmulPack) << " s\n";
  os << "fused-collective " << (machine.fusedOverlaps ? "overlapped" : "shared")
     << '\n'
     << "overlap " << (machine.overlapConcurrent ? "concurrent" : "alternating")
     << '\n';
  if (machine.writeAllocate)
    os << "write-allocate yes\n";
  if (machine.cacheSize > 0)
    os << "cache " << number(machine.cacheSize) << " B bandwidth "
       << number(machine.cacheBandwidth) << " B/s\n";
  for (const auto &[key, cost] : machine.collectives) {
    auto [c, a, l, type] = key;
    os << "collective " << collectiveName(c) << ' ' << algorithmName(a) << ' '
       << levelName(l);
    if (type)
      os << ' ' << ir::dtypeName(*type);
    os << " latency " << number(cost.latency) << " s bandwidth "
       << number(cost.bandwidth) << " B/s";
    if (cost.beyondCache > 0)
      os << " beyond-cache " << number(cost.beyondCache) << " B/s";
    os << '\n';
  }
}

} // namespace coconet::tune
