//===- ProgramGenerator.cpp - random CoCoNet programs and schedules -------===//
//
// Programs are built statement by statement over a model of their stages
// (Node: element type, shape, per-axis layout, operands). Every statement
// is one stage (non-elementwise operations always take a name, never an
// expression), so a schedule can name every stage. Shapes come from a small
// fixed set ([], [N], [B, N], [B, H], [H, N]); every value is compatible
// with the layout rules by construction: an elementwise expression only
// reads values that are replicated or in the statement's own state on each
// axis, a collective only reads the states it accepts.
//
// Reassociation. A schedule may compute a float sum or norm from per-rank
// partial values; the differential check then allows a few units of
// rounding (verify/Differential.h). For f16/bf16/f32 results that is almost
// always bitwise equal (the f64 partial sums round to the same value); an
// f64 result typically differs in its last bits. So values computed from a
// float sum or norm ("tainted") are never compared or cast to an integer
// (a flipped comparison is not a rounding difference), and f64 ones
// ("fuzzy") are only scaled, never added, reduced or communicated
// (cancellation would amplify their last-bit differences).
//
// Schedules are planned on a copy of the model that follows the rules of
// docs/schedules.md: split, reorder (with completed reductions and the
// allgathers of leaving values), shard and fuse change the copy as the
// passes change the IR, so later directives can name what earlier ones
// produced (the allgather `ag` that a reorder moved, a sharded parameter).
//
//===----------------------------------------------------------------------===//

#include "ProgramGenerator.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace coconet::randomtest {

std::string GeneratedFile::source() const {
  std::string text;
  for (const GeneratedProgram &p : programs)
    text += p.text + "\n";
  return text;
}

namespace {

//===----------------------------------------------------------------------===//
// Types, shapes and layouts
//===----------------------------------------------------------------------===//

enum class DT { F16, BF16, F32, F64, I32 };

const char *dtName(DT t) {
  switch (t) {
  case DT::F16:
    return "f16";
  case DT::BF16:
    return "bf16";
  case DT::F32:
    return "f32";
  case DT::F64:
    return "f64";
  case DT::I32:
    return "i32";
  }
  return "f32";
}
bool isFloat(DT t) { return t != DT::I32; }

/// Scalar [], V [N], M [B, N], X [B, H], W [H, N]; K [K]: one value per
/// segment of the table `tb` (a program whose V tensors are segmented).
enum class Sh { Scalar, V, M, X, W, K };

int rankOf(Sh s) {
  return s == Sh::Scalar ? 0 : s == Sh::V || s == Sh::K ? 1 : 2;
}
const char *shapeText(Sh s) {
  switch (s) {
  case Sh::Scalar:
    return "";
  case Sh::K:
    return "[K]";
  case Sh::V:
    return "[N]";
  case Sh::M:
    return "[B, N]";
  case Sh::X:
    return "[B, H]";
  case Sh::W:
    return "[H, N]";
  }
  return "";
}
/// Does a value of shape `from` broadcast to `to`?
bool broadcasts(Sh from, Sh to) {
  return from == to || from == Sh::Scalar || (from == Sh::V && to == Sh::M);
}
Sh widest(Sh a, Sh b) {
  if (a == Sh::Scalar)
    return b;
  if (b == Sh::Scalar || a == b)
    return a;
  return Sh::M; // V with M
}

struct Lay {
  char st = 'R'; ///< R, L or S
  int dim = 0;   ///< for S
  bool operator==(const Lay &o) const {
    return st == o.st && (st != 'S' || dim == o.dim);
  }
  bool operator!=(const Lay &o) const { return !(*this == o); }
};
using Layout = std::vector<Lay>;

Layout replicated(unsigned axes) { return Layout(axes); }
bool allReplicated(const Layout &l) {
  return std::all_of(l.begin(), l.end(),
                     [](const Lay &a) { return a.st == 'R'; });
}
bool anyState(const Layout &l, char st) {
  return std::any_of(l.begin(), l.end(),
                     [&](const Lay &a) { return a.st == st; });
}
/// Is some dimension sliced over more than one axis?
bool doubleSliced(const Layout &l) {
  for (size_t a = 0; a < l.size(); ++a)
    for (size_t b = a + 1; b < l.size(); ++b)
      if (l[a].st == 'S' && l[a] == l[b])
        return true;
  return false;
}
bool slicesDim(const Layout &l, int d) {
  return std::any_of(l.begin(), l.end(),
                     [&](const Lay &a) { return a.st == 'S' && a.dim == d; });
}
/// S(d) of a rank-`from` value read in a rank-`to` result is S(d + to -
/// from) (trailing alignment).
Layout align(Layout l, int from, int to) {
  for (Lay &a : l)
    if (a.st == 'S')
      a.dim += to - from;
  return l;
}
std::optional<Layout> join(const Layout &a, const Layout &b) {
  Layout out = a;
  for (size_t i = 0; i < a.size(); ++i) {
    if (b[i].st == 'R')
      continue;
    if (a[i].st == 'R') {
      out[i] = b[i];
      continue;
    }
    if (a[i] != b[i])
      return std::nullopt;
  }
  return out;
}
/// The reduction rule; dim -1 reduces every element.
Layout reduceLayout(Layout l, int dim) {
  for (Lay &a : l) {
    if (a.st != 'S')
      continue;
    if (dim < 0 || a.dim == dim)
      a = {'L', 0};
    else if (a.dim > dim)
      --a.dim;
  }
  return l;
}

//===----------------------------------------------------------------------===//
// The model of a program
//===----------------------------------------------------------------------===//

enum class Op {
  Param,
  Elementwise,
  Reduction,
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  SendRecv,
  AllToAll,
  MatMul
};

struct Node {
  /// Empty when a schedule cannot name it (stages a pass created).
  std::string name;
  Op op = Op::Param;
  DT dt = DT::F32;
  Sh sh = Sh::V;
  Layout lay;
  std::vector<int> ops;
  int axis = -1;    ///< communication: the axis, -1 for all
  std::string red;  ///< Reduction: sum max min norm
  int redDim = -1;  ///< Reduction: the dimension, -1 for all
  int updates = -1; ///< the parameter node this stage writes
  int returned = 0; ///< times it is returned
  bool tainted = false, fuzzy = false;
  int kernel = -1;
  bool live = true;
};

bool isReducing(Op op) {
  return op == Op::AllReduce || op == Op::ReduceScatter;
}
bool isCommunication(Op op) {
  return op == Op::AllReduce || op == Op::ReduceScatter ||
         op == Op::AllGather || op == Op::Broadcast || op == Op::SendRecv ||
         op == Op::AllToAll;
}

struct Model {
  std::vector<Node> nodes;
  std::vector<int> order;
  unsigned axes = 1;
  bool mesh = false;
  int kernels = 0;
  std::vector<std::pair<int, int>> overlaps;

  int add(Node n) {
    nodes.push_back(std::move(n));
    order.push_back(static_cast<int>(nodes.size()) - 1);
    return order.back();
  }
  int position(int id) const {
    return static_cast<int>(std::find(order.begin(), order.end(), id) -
                            order.begin());
  }
  int insertAfter(int after, Node n) {
    nodes.push_back(std::move(n));
    int id = static_cast<int>(nodes.size()) - 1;
    order.insert(order.begin() + position(after) + 1, id);
    return id;
  }
  void erase(int id) {
    nodes[id].live = false;
    order.erase(order.begin() + position(id));
  }
  std::vector<int> users(int id) const {
    std::vector<int> out;
    for (int o : order) {
      const auto &ops = nodes[o].ops;
      if (std::find(ops.begin(), ops.end(), id) != ops.end())
        out.push_back(o);
    }
    return out;
  }
  bool reads(int user, int id) const {
    const auto &ops = nodes[user].ops;
    return std::find(ops.begin(), ops.end(), id) != ops.end();
  }
  int find(const std::string &name) const {
    for (int o : order)
      if (nodes[o].name == name)
        return o;
    return -1;
  }
  bool isResult(int id) const {
    return nodes[id].returned > 0 || nodes[id].updates >= 0;
  }
  std::set<int> downstream(int id) const {
    std::set<int> out{id};
    for (int o : order)
      for (int x : nodes[o].ops)
        if (out.count(x)) {
          out.insert(o);
          break;
        }
    return out;
  }
  void replaceUses(int from, int to, const std::function<bool(int)> &keep) {
    for (int o : order)
      if (o != to && keep(o))
        for (int &x : nodes[o].ops)
          if (x == from)
            x = to;
  }
  /// Moves results and updates from `from` to `to`.
  void moveResult(int from, int to) {
    nodes[to].returned += nodes[from].returned;
    nodes[from].returned = 0;
    nodes[to].updates = nodes[from].updates;
    nodes[from].updates = -1;
  }
  /// Named live stages satisfying `pred`.
  std::vector<int> named(const std::function<bool(const Node &)> &pred) const {
    std::vector<int> out;
    for (int o : order)
      if (!nodes[o].name.empty() && pred(nodes[o]))
        out.push_back(o);
    return out;
  }
  int axisOf(const Node &n) const { return n.axis < 0 ? 0 : n.axis; }
  /// A collective over every axis of a multi-axis mesh.
  bool overAllAxes(const Node &n) const { return n.axis < 0 && axes > 1; }
};

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

struct Ctx {
  bool tainted = true; ///< may read values computed from a float sum/norm
  bool fuzzy = true;   ///< may read f64 such values
};

struct Expr {
  std::string text;
  Sh sh = Sh::Scalar;
  Layout lay; ///< in the frame of the target's rank
  bool tainted = false, fuzzy = false, typed = false;
  std::set<int> reads;
};

/// One candidate directive sequence for an illegal schedule.
struct Illegal {
  std::string text;
  std::string kind;
  std::string intent;
};

class Generator {
public:
  Generator(uint64_t seed, const GeneratorOptions &options)
      : rng(seed), options(options) {}
  GeneratedFile run(uint64_t seed);

private:
  // Randomness.
  bool chance(double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
  }
  int range(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[static_cast<size_t>(range(0, static_cast<int>(v.size()) - 1))];
  }
  DT randomDT() {
    int r = range(0, 99);
    return r < 35   ? DT::F32
           : r < 55 ? DT::F16
           : r < 72 ? DT::BF16
           : r < 90 ? DT::F64
                    : DT::I32;
  }
  DT randomFloat() {
    DT t = randomDT();
    return t == DT::I32 ? DT::F32 : t;
  }
  /// Prefers later (more recently defined) entries.
  int pickRecent(const std::vector<int> &ids) {
    std::vector<double> w;
    for (size_t i = 0; i < ids.size(); ++i)
      w.push_back(1.0 + static_cast<double>(i * i));
    std::discrete_distribution<size_t> d(w.begin(), w.end());
    return ids[d(rng)];
  }

  // Programs.
  GeneratedProgram program(const std::string &name, bool mesh);
  void params(GeneratedProgram &out);
  std::string newName() { return "t" + std::to_string(++counter); }
  void statement();
  bool elementwise();
  bool mixLocal();
  bool reduction();
  bool collective(Op op);
  bool update(bool force);
  std::string axisArg(int axis) const {
    return axis < 0 ? "" : axisNames[static_cast<size_t>(axis)];
  }
  int emit(Node n, const std::string &text) {
    body += "    " + text + "\n";
    return m.add(std::move(n));
  }

  // Expressions.
  bool fits(const Node &v, Sh sh, const Layout &lay) const;
  bool allowed(const Node &v, DT t, Ctx ctx) const;
  Expr literal(DT t);
  Expr leaf(DT t, Sh sh, const Layout &lay, Ctx ctx, bool needTyped,
            int &forced);
  Expr expr(DT t, Sh sh, const Layout &lay, int depth, Ctx ctx, bool needTyped,
            int &forced, bool root = false);
  static void merge(Expr &into, const Expr &from, DT t) {
    into.sh = widest(into.sh, from.sh);
    if (auto j = join(into.lay, from.lay))
      into.lay = *j;
    into.tainted |= from.tainted;
    into.fuzzy |= from.fuzzy && t == DT::F64;
    into.typed |= from.typed;
    into.reads.insert(from.reads.begin(), from.reads.end());
  }

  // Schedules.
  GeneratedSchedule plausible(const std::string &name, int64_t &chunks,
                              Model &final);
  /// `apply` of an earlier plausible schedule, then more fusion.
  GeneratedSchedule applied(const std::string &name,
                            const GeneratedSchedule &earlier,
                            const Model &after);
  GeneratedSchedule illegal(const std::string &name);
  /// A plausible prefix on `s`: split, reorder, shard (each maybe).
  void splitAndReorder(Model &s, std::vector<std::string> &dirs, bool certain);
  int split(Model &s, int ar, const std::string &rs, const std::string &ag);
  /// Allreduces that split accepts.
  static std::vector<int> splittableOf(const Model &s) {
    return s.named([&](const Node &n) {
      if (n.op != Op::AllReduce || n.sh == Sh::Scalar || n.kernel >= 0 ||
          s.overAllAxes(n))
        return false;
      const Node &in = s.nodes[n.ops[0]];
      for (int d = 0; d < rankOf(in.sh); ++d)
        if (!slicesDim(in.lay, d))
          return true;
      return false;
    });
  }
  std::vector<int> planReorder(const Model &s, int ag,
                               std::map<int, Layout> &newLay,
                               std::set<int> &completes, double p);
  void applyReorder(Model &s, int ag, const std::vector<int> &listed,
                    const std::map<int, Layout> &newLay,
                    const std::set<int> &completes);
  /// The layout `p` would get, or the kind of the refusal.
  std::string planShard(const Model &s, int p, Layout &layout,
                        int &gather) const;
  void applyShard(Model &s, int p, const Layout &layout, int gather);
  std::vector<int> planFuse(const Model &s);
  bool convex(const Model &s, const std::set<int> &group) const;
  void applyFuse(Model &s, const std::vector<int> &group);
  bool overlap(Model &s, std::vector<std::string> &dirs, int64_t &chunks);
  std::vector<Illegal> illegalOptions(const Model &s);
  std::string list(const Model &s, const std::vector<int> &ids) const {
    std::string text;
    for (int id : ids)
      text += (text.empty() ? "" : ", ") + s.nodes[id].name;
    return text;
  }
  static std::string scheduleText(const std::string &name,
                                  const std::string &program,
                                  const std::vector<std::string> &dirs) {
    std::string text = "schedule " + name + " for " + program + " {\n";
    for (const std::string &d : dirs)
      text += "    " + d + "\n";
    return text + "}\n";
  }

  std::mt19937_64 rng;
  GeneratorOptions options;

  // The program being generated.
  Model m;
  std::string programName, body;
  std::vector<std::string> axisNames;
  int counter = 0, splits = 0;
  Sh mainSh = Sh::V;
  /// The [N] tensors are segmented by a table `tb` of K segments.
  bool segmented = false;
  int matmul = -1, lr = -1;
  std::vector<int> weights;
  /// A batched matmul off to the side (experts [E, N, N]): the value it
  /// returns, "" when the program has none.
  std::string expertResult;
  /// topk, cumsum, gather and scatter off to the side: the value they
  /// return, "" when the program has none.
  std::string indexResult;
  /// alltoallv and grouped_matmul off to the side: the rows back.
  std::string dispatchResult;
};

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

void Generator::params(GeneratedProgram &out) {
  std::vector<std::string> text;
  auto param = [&](const std::string &name, DT dt, Sh sh, Layout lay,
                   const std::string &layoutText) {
    Node n;
    n.name = name;
    n.op = Op::Param;
    n.dt = dt;
    n.sh = sh;
    n.lay = std::move(lay);
    int id = m.add(std::move(n));
    std::string t = name + ": " + dtName(dt) + shapeText(sh);
    if (!layoutText.empty())
      t += " " + layoutText;
    // Every [N] tensor of a program with a table is a list of segments.
    if (segmented && sh == Sh::V)
      t += " segmented(tb)";
    text.push_back(t);
    return id;
  };
  if (segmented)
    text.push_back("tb: segments[K]");
  const unsigned A = m.axes;
  Layout R = replicated(A), L(A, Lay{'L', 0});
  // Gradients: local (on the data-parallel axis of a mesh).
  int grads = range(1, 2);
  for (int i = 0; i < grads; ++i) {
    if (!m.mesh || chance(0.3)) {
      param("g" + std::to_string(i), randomDT(), mainSh, L, "local");
    } else {
      Layout l = R;
      l[0] = {'L', 0};
      param("g" + std::to_string(i), randomDT(), mainSh, l, "local(dp)");
    }
  }
  // Weights: replicated.
  int nw = range(1, 3);
  for (int i = 0; i < nw; ++i)
    weights.push_back(param("w" + std::to_string(i), randomDT(), mainSh, R,
                            chance(0.3) ? "replicated" : ""));
  // A sliced tensor.
  if (chance(0.4)) {
    Layout l = R;
    std::string t = "sliced";
    if (!m.mesh) {
      if (mainSh == Sh::M && chance(0.25)) {
        l[0] = {'S', 1};
        t = "sliced(1)";
      } else {
        l[0] = {'S', 0};
      }
    } else {
      int r = range(0, 3);
      if (r == 0) {
        l[1] = {'S', 0};
        t = "sliced(0, tp)";
      } else if (r == 1) {
        l[0] = {'S', 0};
        t = "sliced(0, dp)";
      } else if (r == 2) {
        l[0] = {'S', 0};
        l[1] = {'S', 0};
        t = "sliced(0, dp, tp)";
      } else {
        l[0] = {'L', 0};
        l[1] = {'S', 0};
        t = "local(dp) sliced(0, tp)";
      }
    }
    param("s0", randomDT(), mainSh, l, t);
  }
  if (mainSh == Sh::M && chance(0.4))
    param("b0", randomDT(), Sh::V, R, "");
  lr = param("lr", chance(0.7) ? DT::F32 : randomFloat(), Sh::Scalar, R, "");
  if (chance(0.3))
    param("k0", DT::I32, Sh::Scalar, R, "");
  if (chance(0.08))
    param("u0", randomDT(), mainSh, R, "");
  if (matmul >= 0) {
    // x0 [B, H] local times wm [H, N] replicated: partial sums, local.
    DT t = randomFloat();
    Layout l = R;
    l[0] = {'L', 0};
    int x = param("x0", t, Sh::X, l, m.mesh ? "local(dp)" : "local");
    int wm = param("wm", t, Sh::W, R, "");
    Node n;
    n.name = "ym";
    n.op = Op::MatMul;
    n.dt = t;
    n.sh = Sh::M;
    n.lay = l;
    n.ops = {x, wm};
    matmul = emit(n, "ym = matmul(x0, wm);");
  }
  expertResult.clear();
  if (!m.mesh && chance(0.25)) {
    // A batched matmul off to the side (the model's values are vectors and
    // matrices): experts [E, N, N] after a dispatch alltoall and before a
    // combine one (a mixture-of-experts layer), on batches sliced over the
    // ranks by a batched or a shared weight, or replicated. The schedules
    // leave it alone; it is returned.
    const DT t = randomFloat();
    const std::string dt = dtName(t);
    const std::string act = chance(0.5) ? "gelu" : "";
    const int form = range(0, 3);
    const char *xLay[] = {"sliced(1)", "sliced(0)", "sliced(0)", ""};
    const char *wShape[] = {"[E, N, N]", "[E, N, N]", "[N, N]", "[E, N, N]"};
    const char *wLay[] = {"sliced(0)", "sliced(0)", "", ""};
    auto withLayout = [](std::string t, const char *layout) {
      return *layout ? t + " " + layout : t;
    };
    text.push_back(withLayout("xe: " + dt + "[E, N, N]", xLay[form]));
    text.push_back(withLayout("we: " + dt + wShape[form], wLay[form]));
    std::string x = "xe";
    if (form == 0) {
      body += "    de = alltoall(xe, dim=0);\n";
      x = "de";
    }
    body += "    ye = " +
            (act.empty() ? "matmul(" + x + ", we)"
                         : act + "(matmul(" + x + ", we))") +
            ";\n";
    expertResult = "ye";
    if (form == 0) {
      body += "    ce = alltoall(ye, dim=1);\n";
      expertResult = "ce";
    }
  }
  indexResult.clear();
  if (!m.mesh && chance(0.3)) {
    // topk, cumsum, gather and scatter off to the side, along the second
    // dimension of xi [Q, N]: its rows replicated, sliced over the ranks or
    // local, and the positions ii alike (generated 0..15, so some are
    // negative or past N once shifted). Their combination is returned; the
    // plausible schedules fuse its last gather with the sum that reads it
    // (a kernel that reads sc through ti).
    const DT t = chance(0.3) ? DT::I32 : randomFloat();
    const std::string dt = dtName(t);
    const char *lays[] = {"", " sliced(0)", " local"};
    const std::string lay = lays[range(0, 2)];
    text.push_back("xi: " + dt + "[Q, N]" + lay);
    text.push_back("ii: " + std::string(chance(0.5) ? "i32" : "i64") +
                   "[Q, N]" + lay);
    // k = 1: the sizes can be 1 (an i32 xi still meets ties: 0..15).
    body += std::string("    (tv, ti) = topk(xi, 1, dim=") +
            (chance(0.5) ? "1" : "-1") + ");\n";
    body += "    cs = cumsum(xi, dim=1);\n";
    body += "    ga = gather(cs, ii * 3 - 8, dim=1);\n";
    body += "    sc = scatter(ga, ii - 2, 1, xi);\n";
    body += "    gg = gather(sc, ti, dim=1);\n";
    body += "    gt = gg + tv;\n";
    indexResult = "gt";
  }
  dispatchResult.clear();
  if (!m.mesh && chance(0.25)) {
    // Dropless routing off to the side: each rank's N rows of xv to the
    // 2 experts of every rank by counts cv - 4 (generated 0..15: negative,
    // zero, more than the rows sent and more than the 2 * N received),
    // the experts' grouped matmul (floats) and the rows back.
    const DT t = chance(0.3) ? DT::I32 : randomFloat();
    const std::string dt = dtName(t);
    text.push_back("xv: " + dt + "[P, N, 2] sliced(0)");
    text.push_back("cv: i32[P, 2 * P] sliced(0)");
    body += "    (yv, rv) = alltoallv(xv, cv - 4, 2 * N);\n";
    std::string rows = "yv";
    if (t != DT::I32) {
      text.push_back("wv: " + dt + "[2 * P, 2, 3] sliced(0)");
      body += "    hv = grouped_matmul(yv, wv, rv);\n";
      rows = "hv";
    }
    body += "    (bv, sv) = alltoallv(" + rows + ", rv, N);\n";
    dispatchResult = "bv";
  }
  std::string header = "program " + out.name + "(";
  if (m.mesh)
    header += "mesh [dp: D, tp: T], ";
  for (size_t i = 0; i < text.size(); ++i)
    header += (i ? ", " : "") + text[i];
  out.text = header + ") {\n";
}

GeneratedProgram Generator::program(const std::string &name, bool mesh) {
  GeneratedProgram out;
  out.name = name;
  m = Model();
  m.mesh = mesh;
  m.axes = mesh ? 2 : 1;
  axisNames = mesh ? std::vector<std::string>{"dp", "tp"}
                   : std::vector<std::string>{"world"};
  body.clear();
  counter = 0;
  splits = 0;
  weights.clear();
  programName = name;
  mainSh = chance(0.55) ? Sh::V : Sh::M;
  matmul = mainSh == Sh::M && chance(0.3) ? 0 : -1;
  segmented = mainSh == Sh::V && chance(0.3);
  params(out);
  out.meshSizes =
      mesh ? std::vector<std::string>{"D", "T"} : std::vector<std::string>{"P"};
  out.sizeNames = {"N"};
  if (mainSh == Sh::M)
    out.sizeNames.push_back("B");
  if (matmul >= 0)
    out.sizeNames.push_back("H");
  if (segmented)
    out.sizeNames.push_back("K");
  if (!expertResult.empty())
    out.sizeNames.push_back("E");
  if (!indexResult.empty())
    out.sizeNames.push_back("Q");

  // The matmul's partial sums are completed first.
  if (matmul >= 0) {
    Node n;
    n.name = "yr";
    n.op = Op::AllReduce;
    n.red = "sum";
    n.dt = m.nodes[matmul].dt;
    n.sh = Sh::M;
    n.lay = replicated(m.axes);
    n.axis = 0;
    n.ops = {matmul};
    emit(n,
         std::string("yr = allreduce(sum, ym") + (mesh ? ", dp" : "") + ");");
  }
  // A gradient allreduce, so that there is something to split.
  collective(Op::AllReduce);
  // In a mesh, an allreduce over dp of a tensor sliced over tp (a split
  // finds no free dimension in [N]).
  int s0 = m.find("s0");
  if (s0 >= 0 && mesh && m.nodes[s0].lay[0].st == 'L' && chance(0.7)) {
    Node n;
    n.name = newName();
    n.op = Op::AllReduce;
    n.red = "sum";
    n.dt = m.nodes[s0].dt;
    n.sh = m.nodes[s0].sh;
    n.lay = m.nodes[s0].lay;
    n.lay[0] = {'R', 0};
    n.axis = 0;
    n.ops = {s0};
    emit(n, n.name + " = allreduce(sum, s0, dp);");
  }
  int statements = range(3, 9);
  for (int i = 0; i < statements; ++i)
    statement();
  for (size_t i = 0; i < weights.size(); ++i)
    if (chance(0.5))
      update(true);

  // Return one or two values that are not results yet.
  // (An update only rarely: sharding its parameter is then refused.)
  bool updates = chance(0.1);
  std::vector<int> candidates = m.named([&](const Node &n) {
    return n.op != Op::Param && (n.updates < 0 || updates);
  });
  bool anyUpdate = std::any_of(m.order.begin(), m.order.end(),
                               [&](int o) { return m.nodes[o].updates >= 0; });
  int returns = candidates.empty() ? 0 : anyUpdate ? range(0, 2) : range(1, 2);
  std::vector<int> chosen;
  for (int i = 0; i < returns; ++i) {
    int c = pickRecent(candidates);
    if (std::find(chosen.begin(), chosen.end(), c) == chosen.end())
      chosen.push_back(c);
  }
  if (!chosen.empty() || !expertResult.empty() || !indexResult.empty() ||
      !dispatchResult.empty()) {
    std::string text = "return ";
    for (size_t i = 0; i < chosen.size(); ++i) {
      text += (i ? ", " : "") + m.nodes[chosen[i]].name;
      m.nodes[chosen[i]].returned++;
    }
    for (const std::string &side : {expertResult, indexResult, dispatchResult})
      if (!side.empty())
        text += (text == "return " ? "" : ", ") + side;
    body += "    " + text + ";\n";
  }
  out.text += body + "}\n";
  return out;
}

void Generator::statement() {
  for (int attempt = 0; attempt < 8; ++attempt) {
    int r = range(0, 99);
    bool done = r < 36   ? elementwise()
                : r < 40 ? mixLocal()
                : r < 52 ? reduction()
                : r < 62 ? collective(Op::AllReduce)
                : r < 66 ? collective(Op::AllToAll)
                : r < 72 ? collective(Op::ReduceScatter)
                : r < 80 ? collective(Op::AllGather)
                : r < 84 ? collective(Op::Broadcast)
                : r < 88 ? collective(Op::SendRecv)
                         : update(false);
    if (done)
      return;
  }
}

bool Generator::mixLocal() {
  // A local value times a replicated one computed by a collective (a
  // stage a reorder cannot move: it reads a local value).
  std::vector<int> locals, shared;
  for (int o : m.order) {
    const Node &n = m.nodes[o];
    if (n.sh == Sh::Scalar || n.fuzzy)
      continue;
    if (anyState(n.lay, 'L') && !anyState(n.lay, 'S'))
      locals.push_back(o);
    else if (n.op != Op::Param && allReplicated(n.lay))
      shared.push_back(o);
  }
  if (locals.empty() || shared.empty())
    return false;
  int l = pickRecent(locals), r = pickRecent(shared);
  const Node a = m.nodes[l], b = m.nodes[r];
  if (!fits(b, a.sh, a.lay) || (b.tainted && a.dt == DT::I32))
    return false;
  Node n;
  n.name = newName();
  n.op = Op::Elementwise;
  n.dt = a.dt;
  n.sh = a.sh;
  n.lay = a.lay;
  n.ops = {l, r};
  n.tainted = b.tainted;
  std::string rhs =
      b.dt == a.dt ? b.name : std::string(dtName(a.dt)) + "(" + b.name + ")";
  emit(n, n.name + " = (" + a.name + " * " + rhs + ");");
  return true;
}

bool Generator::elementwise() {
  int anchor = pickRecent(m.order);
  const Node &a = m.nodes[anchor];
  DT t = chance(0.75) ? a.dt : randomDT();
  if (a.tainted && t == DT::I32 && a.dt != DT::I32)
    t = a.dt;
  Sh sh = a.sh;
  Layout lay = align(a.lay, rankOf(a.sh), rankOf(sh));
  int forced = anchor;
  Expr e = expr(t, sh, lay, range(1, 3), Ctx(), true, forced, true);
  Node n;
  n.name = newName();
  n.op = Op::Elementwise;
  n.dt = t;
  n.sh = e.sh;
  n.lay = align(e.lay, rankOf(sh), rankOf(e.sh));
  n.ops.assign(e.reads.begin(), e.reads.end());
  n.tainted = e.tainted;
  n.fuzzy = e.fuzzy && t == DT::F64;
  emit(n, n.name + " = " + e.text + ";");
  return true;
}

bool Generator::reduction() {
  std::vector<int> pool;
  for (int o : m.order) {
    const Node &n = m.nodes[o];
    if (n.sh != Sh::Scalar && !n.fuzzy)
      pool.push_back(o);
  }
  if (pool.empty())
    return false;
  int v = pickRecent(pool);
  const Node in = m.nodes[v];
  bool sliced = anyState(in.lay, 'S');
  bool withDim = in.sh == Sh::M && !sliced && chance(0.3);
  // Per segment of the table: one value per segment, [K].
  const bool bySegment = segmented && in.sh == Sh::V && chance(0.5);
  std::vector<std::string> kinds = {"sum"};
  if (!withDim) {
    kinds.push_back("max");
    kinds.push_back("min");
  }
  if (isFloat(in.dt) && !sliced)
    kinds.push_back("norm");
  Node n;
  n.name = newName();
  n.op = Op::Reduction;
  n.red = pick(kinds);
  n.redDim = withDim ? 0 : -1;
  n.dt = in.dt;
  n.sh = withDim ? Sh::V : bySegment ? Sh::K : Sh::Scalar;
  n.lay = reduceLayout(in.lay, n.redDim);
  n.ops = {v};
  bool adds = isFloat(in.dt) && (n.red == "sum" || n.red == "norm");
  n.tainted = in.tainted || adds;
  n.fuzzy = in.dt == DT::F64 && adds;
  std::string text = n.name + " = " + n.red + "(" + in.name +
                     (withDim     ? ", 0"
                      : bySegment ? ", by=tb"
                                  : "") +
                     ");";
  int id = emit(n, text);
  if (allReplicated(m.nodes[id].lay) || anyState(m.nodes[id].lay, 'S'))
    return true;
  // A per-rank partial value: complete it over every axis.
  Node c;
  c.name = newName();
  c.op = Op::AllReduce;
  c.red = n.red == "norm" ? "sum" : n.red;
  c.dt = n.dt;
  c.sh = n.sh;
  c.lay = replicated(m.axes);
  c.axis = m.mesh ? -1 : 0;
  c.ops = {id};
  c.tainted = n.tainted;
  // A partial value is never reassociated (a reorder cannot list a
  // reduction of a local value), so it and its completion are exact.
  m.nodes[id].fuzzy = false;
  emit(c, c.name + " = allreduce(" + c.red + ", " + n.name + ");");
  return true;
}

bool Generator::collective(Op op) {
  // The axis: the only one, or one of the mesh's (-1: all, where allowed).
  int axis = 0;
  if (m.mesh) {
    bool allAllowed = op == Op::AllReduce || op == Op::Broadcast;
    axis = allAllowed && chance(0.2) ? -1 : range(0, 1);
  }
  auto stateOk = [&](const Layout &l, char want) {
    for (unsigned a = 0; a < m.axes; ++a) {
      if (axis >= 0 && static_cast<int>(a) != axis)
        continue;
      bool ok = want == 'S' ? l[a].st == 'S' : l[a].st != 'S';
      if (!ok)
        return false;
    }
    return true;
  };
  std::vector<int> pool, preferred;
  for (int o : m.order) {
    const Node &n = m.nodes[o];
    if (n.fuzzy || (n.op == Op::Param && n.sh == Sh::Scalar))
      continue;
    bool ok = false;
    switch (op) {
    case Op::AllReduce:
    case Op::Broadcast:
    case Op::SendRecv:
      ok = stateOk(n.lay, 'R');
      break;
    case Op::ReduceScatter:
      ok = n.sh != Sh::Scalar && stateOk(n.lay, 'R') && !slicesDim(n.lay, 0);
      break;
    case Op::AllGather:
      ok = stateOk(n.lay, 'S');
      // Gathering the outer axis of a dimension sliced over both axes is
      // refused (docs/language.md): gather the inner one first.
      if (axis == 0 && m.axes == 2 && n.lay[0].st == 'S' &&
          n.lay[0] == n.lay[1])
        ok = false;
      break;
    case Op::AllToAll: {
      // A matrix sliced along one dimension on the axis, the other
      // dimension sliced nowhere (and, as for allgather, not the outer axis
      // of a dimension sliced over both).
      const int a = axis < 0 ? 0 : axis;
      ok = rankOf(n.sh) == 2 && n.lay[a].st == 'S' &&
           !slicesDim(n.lay, 1 - n.lay[a].dim);
      if (a == 0 && m.axes == 2 && n.lay[0] == n.lay[1])
        ok = false;
      break;
    }
    default:
      break;
    }
    if (!ok)
      continue;
    pool.push_back(o);
    if (axis >= 0 ? n.lay[axis].st == 'L' : anyState(n.lay, 'L'))
      preferred.push_back(o);
  }
  if (pool.empty())
    return false;
  if ((op == Op::AllReduce || op == Op::ReduceScatter) && !preferred.empty() &&
      chance(0.8))
    pool = preferred;
  int v = op == Op::AllReduce && counter == 0 ? pool.front() : pickRecent(pool);
  const Node in = m.nodes[v];
  Node n;
  n.name = newName();
  n.op = op;
  n.dt = in.dt;
  n.sh = in.sh;
  n.lay = in.lay;
  n.axis = axis;
  n.ops = {v};
  n.tainted = in.tainted;
  for (unsigned a = 0; a < m.axes; ++a) {
    if (axis >= 0 && static_cast<int>(a) != axis)
      continue;
    switch (op) {
    case Op::AllReduce:
    case Op::Broadcast:
    case Op::AllGather:
      n.lay[a] = {'R', 0};
      break;
    case Op::ReduceScatter:
      n.lay[a] = {'S', 0};
      break;
    case Op::SendRecv:
      n.lay[a] = {'L', 0};
      break;
    case Op::AllToAll:
      n.lay[a] = {'S', 1 - in.lay[a].dim};
      break;
    default:
      break;
    }
  }
  std::string ax = axisArg(axis);
  std::string text;
  auto reduceOp = [&] {
    int r = range(0, 99);
    if (!isFloat(in.dt))
      return std::string(r < 55   ? "sum"
                         : r < 75 ? "max"
                         : r < 95 ? "min"
                                  : "prod");
    return std::string(r < 50   ? "sum"
                       : r < 65 ? "avg"
                       : r < 80 ? "max"
                       : r < 95 ? "min"
                                : "prod");
  };
  switch (op) {
  case Op::AllReduce:
    n.red = reduceOp();
    text = "allreduce(" + n.red + ", " + in.name +
           (m.mesh && axis >= 0 ? ", " + ax : "") + ")";
    break;
  case Op::ReduceScatter:
    n.red = reduceOp();
    text = "reducescatter(" + n.red + ", " + in.name +
           (m.mesh ? ", " + ax : "") + ")";
    break;
  case Op::AllGather:
    text = "allgather(" + in.name + (m.mesh ? ", " + ax : "") + ")";
    break;
  case Op::Broadcast:
    text = "broadcast(" + in.name + ", 0" +
           (m.mesh && axis >= 0 ? ", " + ax : "") + ")";
    break;
  case Op::SendRecv:
    text = "sendrecv(" + in.name + (m.mesh ? ", " + ax : "") + ", " +
           (chance(0.5) ? "1" : "-1") + ")";
    break;
  case Op::AllToAll:
    text = "alltoall(" + in.name + (m.mesh ? ", " + ax : "") +
           ", dim=" + std::to_string(1 - in.lay[axis < 0 ? 0 : axis].dim) + ")";
    break;
  default:
    break;
  }
  emit(n, n.name + " = " + text + ";");
  return true;
}

bool Generator::update(bool force) {
  std::vector<int> free;
  for (int w : weights) {
    bool updated = std::any_of(m.order.begin(), m.order.end(),
                               [&](int o) { return m.nodes[o].updates == w; });
    if (!updated)
      free.push_back(w);
  }
  if (free.empty() || (!force && chance(0.3)))
    return false;
  int p = pick(free);
  const Node w = m.nodes[p];
  // Prefer a recent replicated value of the weight's shape as the anchor.
  std::vector<int> pool;
  for (int o : m.order)
    if (o != p && m.nodes[o].op != Op::Param && fits(m.nodes[o], w.sh, w.lay))
      pool.push_back(o);
  int forced = pool.empty() ? -1 : pickRecent(pool);
  int r = range(0, 4);
  Ctx ctx;
  ctx.fuzzy = r >= 2; // no cancellation of last-bit differences
  Expr e = expr(w.dt, w.sh, w.lay, range(1, 2), ctx, true, forced);
  std::string text;
  switch (r) {
  case 0:
    text = "(" + w.name + " - " + e.text + ")";
    break;
  case 1:
    text = "(" + e.text + " + " + w.name + ")";
    break;
  case 2:
    text = "(" + w.name + " * " + e.text + ")";
    break;
  case 3:
    text = "max(" + w.name + ", " + e.text + ")";
    break;
  default:
    text = "min(" + e.text + ", " + w.name + ")";
    break;
  }
  Node n;
  n.name = newName();
  n.op = Op::Elementwise;
  n.dt = w.dt;
  n.sh = w.sh;
  n.lay = w.lay;
  e.reads.insert(p);
  n.ops.assign(e.reads.begin(), e.reads.end());
  n.updates = p;
  n.tainted = e.tainted;
  n.fuzzy = e.fuzzy && w.dt == DT::F64;
  emit(n, n.name + " = update(" + w.name + ", " + text + ");");
  return true;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

bool Generator::fits(const Node &v, Sh sh, const Layout &lay) const {
  if (!broadcasts(v.sh, sh))
    return false;
  Layout a = align(v.lay, rankOf(v.sh), rankOf(sh));
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].st != 'R' && a[i] != lay[i])
      return false;
  // A value sliced over the inner axis only cannot be read where the
  // dimension is sliced over both axes (the prefix rule of the join).
  if (a.size() == 2 && a[0].st == 'R' && a[1].st == 'S' && lay[0] == a[1])
    return false;
  return true;
}

bool Generator::allowed(const Node &v, DT t, Ctx ctx) const {
  if (v.tainted && !ctx.tainted)
    return false;
  if (v.fuzzy && !ctx.fuzzy)
    return false;
  // Truncation to an integer is not continuous.
  if (v.tainted && t == DT::I32 && v.dt != DT::I32)
    return false;
  return true;
}

Expr Generator::literal(DT t) {
  static const char *const floats[] = {"0.5", "2.0",   "0.25", "1.5",
                                       "3.0", "0.125", "0.75"};
  static const char *const ints[] = {"1", "2", "3", "5", "7"};
  Expr e;
  e.text = isFloat(t) ? floats[range(0, 6)] : ints[range(0, 4)];
  e.lay = replicated(m.axes);
  return e;
}

Expr Generator::leaf(DT t, Sh sh, const Layout &lay, Ctx ctx, bool needTyped,
                     int &forced) {
  int chosen = -1;
  if (forced >= 0 && fits(m.nodes[forced], sh, lay) &&
      allowed(m.nodes[forced], t, ctx)) {
    chosen = forced;
    forced = -1;
  }
  if (chosen < 0 && !needTyped && chance(0.25)) {
    Expr e = literal(t);
    if (chance(0.2) && isFloat(t))
      e.text = "-" + e.text;
    return e;
  }
  if (chosen < 0) {
    std::vector<int> all, same;
    for (int o : m.order) {
      const Node &v = m.nodes[o];
      if (!fits(v, sh, lay) || !allowed(v, t, ctx))
        continue;
      all.push_back(o);
      if (v.dt == t)
        same.push_back(o);
    }
    if (all.empty())
      chosen = lr; // a scalar parameter fits everywhere
    else
      chosen = !same.empty() && chance(0.7) ? pick(same) : pick(all);
  }
  const Node &v = m.nodes[chosen];
  Expr e;
  e.text = v.dt == t ? v.name : std::string(dtName(t)) + "(" + v.name + ")";
  e.sh = v.sh;
  e.lay = align(v.lay, rankOf(v.sh), rankOf(sh));
  e.tainted = v.tainted;
  e.fuzzy = v.fuzzy && t == DT::F64;
  e.typed = true;
  e.reads.insert(chosen);
  return e;
}

Expr Generator::expr(DT t, Sh sh, const Layout &lay, int depth, Ctx ctx,
                     bool needTyped, int &forced, bool root) {
  if (depth <= 0 || (!root && chance(0.3)))
    return leaf(t, sh, lay, ctx, needTyped, forced);
  Expr out;
  out.lay = replicated(m.axes);
  int r = range(0, 99);
  if (r < 42) {
    static const char ops[] = {'+', '-', '*', '/'};
    char op = ops[range(0, 3)];
    Ctx c = ctx;
    if (op == '+' || op == '-')
      c.fuzzy = false;
    Expr a = expr(t, sh, lay, depth - 1, c, true, forced);
    Expr b = expr(t, sh, lay, depth - 1, c, false, forced);
    if (op == '/' && isFloat(t) && b.typed && chance(0.7))
      b.text = "(abs(" + b.text + ") + 1)";
    if (op != '/' && chance(0.5))
      std::swap(a, b);
    out.text = "(" + a.text + " " + op + " " + b.text + ")";
    merge(out, a, t);
    merge(out, b, t);
    return out;
  }
  if (r < 64) {
    Expr a = expr(t, sh, lay, depth - 1, ctx, true, forced);
    int k = isFloat(t) ? range(0, 10) : range(0, 2);
    switch (k) {
    case 0:
      out.text = "-" + a.text;
      break;
    case 1:
      out.text = "abs(" + a.text + ")";
      break;
    case 2:
      out.text = "relu(" + a.text + ")";
      break;
    case 3:
      out.text = "sqrt(abs(" + a.text + "))";
      break;
    case 4:
      out.text = "tanh(" + a.text + ")";
      break;
    case 5:
      out.text = "exp(tanh(" + a.text + "))";
      break;
    case 6:
      out.text = "erf(" + a.text + ")";
      break;
    case 7:
      out.text = "silu(" + a.text + ")";
      break;
    case 8:
      out.text = "gelu(" + a.text + ")";
      break;
    case 9:
      out.text = "log(abs(" + a.text + ") + 1)";
      break;
    default:
      out.text = "rsqrt(abs(" + a.text + ") + 1)";
      break;
    }
    merge(out, a, t);
    return out;
  }
  if (r < 74) {
    Expr a = expr(t, sh, lay, depth - 1, ctx, true, forced);
    Expr b = expr(t, sh, lay, depth - 1, ctx, false, forced);
    if (chance(0.5))
      std::swap(a, b);
    out.text = std::string(chance(0.5) ? "max(" : "min(") + a.text + ", " +
               b.text + ")";
    merge(out, a, t);
    merge(out, b, t);
    return out;
  }
  if (r < 88) {
    DT t2 = chance(0.6) ? t : randomDT();
    Ctx exact;
    exact.tainted = false;
    exact.fuzzy = false;
    Expr c1 = expr(t2, sh, lay, depth - 1, exact, true, forced);
    Expr c2 = expr(t2, sh, lay, depth - 1, exact, false, forced);
    Expr x = expr(t, sh, lay, depth - 1, ctx, true, forced);
    Expr y = expr(t, sh, lay, depth - 1, ctx, false, forced);
    static const char *const cmps[] = {"<", "<=", ">", ">=", "==", "!="};
    out.text = "select(" + c1.text + " " + cmps[range(0, 5)] + " " + c2.text +
               ", " + x.text + ", " + y.text + ")";
    for (const Expr *e : {&c1, &c2, &x, &y})
      merge(out, *e, t);
    return out;
  }
  DT t2 = randomDT();
  while (t2 == t)
    t2 = randomDT();
  Ctx c = ctx;
  if (t == DT::I32)
    c.tainted = false;
  Expr a = expr(t2, sh, lay, depth - 1, c, true, forced);
  out.text = std::string(dtName(t)) + "(" + a.text + ")";
  merge(out, a, t);
  out.fuzzy = false; // a was not f64, or t is not
  return out;
}

//===----------------------------------------------------------------------===//
// Schedules: the model of each transformation
//===----------------------------------------------------------------------===//

int Generator::split(Model &s, int ar, const std::string &rsName,
                     const std::string &agName) {
  const Node a = s.nodes[ar];
  const Node &in = s.nodes[a.ops[0]];
  int axis = s.axisOf(a);
  int dim = -1;
  for (int d = 0; d < rankOf(in.sh) && dim < 0; ++d)
    if (!slicesDim(in.lay, d))
      dim = d;
  Node rs;
  rs.name = rsName;
  rs.op = Op::ReduceScatter;
  rs.dt = a.dt;
  rs.sh = a.sh;
  rs.lay = in.lay;
  rs.lay[axis] = {'S', dim};
  rs.axis = axis;
  rs.ops = {a.ops[0]};
  rs.tainted = a.tainted;
  int rsId = s.insertAfter(ar, rs);
  Node ag;
  ag.name = agName;
  ag.op = Op::AllGather;
  ag.dt = a.dt;
  ag.sh = a.sh;
  ag.lay = a.lay;
  ag.axis = axis;
  ag.ops = {rsId};
  ag.tainted = a.tainted;
  int agId = s.insertAfter(rsId, ag);
  s.replaceUses(ar, agId, [](int) { return true; });
  s.moveResult(ar, agId);
  for (auto &o : s.overlaps)
    if (o.second == ar)
      o.second = rsId;
  s.erase(ar);
  return agId;
}

std::vector<int> Generator::planReorder(const Model &s, int ag,
                                        std::map<int, Layout> &newLay,
                                        std::set<int> &completes, double p) {
  const int rs = s.nodes[ag].ops[0];
  const int axis = s.axisOf(s.nodes[ag]);
  std::set<int> down = s.downstream(ag), listed;
  std::vector<int> out;
  auto layOf = [&](int o) {
    if (o == ag)
      return s.nodes[rs].lay;
    auto it = newLay.find(o);
    return it == newLay.end() ? s.nodes[o].lay : it->second;
  };
  for (int id : s.order) {
    const Node &n = s.nodes[id];
    if (id == ag || !down.count(id) || n.name.empty() || n.kernel >= 0)
      continue;
    bool movable = n.op == Op::Elementwise || n.op == Op::Reduction ||
                   (n.op == Op::SendRecv && n.axis >= 0 && n.axis != axis);
    if (!movable)
      continue;
    bool connected = std::any_of(n.ops.begin(), n.ops.end(), [&](int o) {
      return o == ag || listed.count(o);
    });
    if (!connected)
      continue;
    bool local = std::any_of(n.ops.begin(), n.ops.end(),
                             [&](int o) { return layOf(o)[axis].st == 'L'; });
    if (local)
      continue;
    Layout l = n.lay;
    bool completing = false;
    if (n.op == Op::Elementwise) {
      std::optional<Layout> j = replicated(s.axes);
      for (int o : n.ops) {
        if (!j)
          break;
        j = join(*j, align(layOf(o), rankOf(s.nodes[o].sh), rankOf(n.sh)));
      }
      if (!j)
        continue;
      l = *j;
    } else if (n.op == Op::Reduction) {
      const Layout in = layOf(n.ops[0]);
      Layout r = reduceLayout(in, n.redDim);
      // Only a reduction whose input becomes sliced here is completed; of
      // an input that was sliced already it stays a partial value.
      if (in[axis].st == 'S' && r[axis].st == 'L' &&
          s.nodes[n.ops[0]].lay[axis].st != 'S') {
        completing = true;
      } else {
        l = r;
      }
    } else {
      Layout in = layOf(n.ops[0]);
      if (in[n.axis].st == 'S')
        continue;
      l = in;
      l[n.axis] = {'L', 0};
    }
    // The model does not predict the join's prefix rule for a dimension
    // sliced over both axes, so it lists no stage that would slice one so.
    if (doubleSliced(l))
      continue;
    if (!chance(p))
      continue;
    listed.insert(id);
    out.push_back(id);
    newLay[id] = l;
    if (completing)
      completes.insert(id);
  }
  return out;
}

void Generator::applyReorder(Model &s, int ag, const std::vector<int> &listed,
                             const std::map<int, Layout> &newLay,
                             const std::set<int> &completes) {
  const int rs = s.nodes[ag].ops[0];
  const int axis = s.axisOf(s.nodes[ag]);
  const std::string agName = s.nodes[ag].name;
  std::set<int> inList(listed.begin(), listed.end());
  std::map<int, Layout> oldLay;
  for (int id : listed)
    oldLay[id] = s.nodes[id].lay;
  s.replaceUses(ag, rs, [&](int u) { return inList.count(u) > 0; });
  for (int id : listed)
    if (!completes.count(id))
      s.nodes[id].lay = newLay.at(id);
  for (int id : listed) {
    if (!completes.count(id))
      continue;
    // partial (the old stage, unnamed) -> allreduce -> [elementwise]
    Node &r = s.nodes[id];
    const std::string name = r.name;
    const Node type = r;
    bool adds = isFloat(type.dt) && (type.red == "sum" || type.red == "norm");
    // Float sums accumulate their partial values in f64; anything but an
    // f64 sum needs a conversion (and a norm its square root) after.
    bool finish = type.red == "norm" || (adds && type.dt != DT::F64);
    r.name = "";
    r.lay = reduceLayout(s.nodes[r.ops[0]].lay, r.redDim);
    Layout combined = r.lay;
    combined[axis] = {'R', 0};
    Node ar;
    ar.name = finish ? "" : name;
    ar.op = Op::AllReduce;
    ar.red = type.red == "max" ? "max" : type.red == "min" ? "min" : "sum";
    ar.dt = adds ? DT::F64 : type.dt;
    ar.sh = type.sh;
    ar.lay = combined;
    ar.axis = axis;
    ar.ops = {id};
    ar.tainted = true;
    int arId = s.insertAfter(id, ar);
    int result = arId;
    if (finish) {
      Node e;
      e.name = name;
      e.op = Op::Elementwise;
      e.dt = type.dt;
      e.sh = type.sh;
      e.lay = type.lay;
      e.ops = {arId};
      e.tainted = true;
      result = s.insertAfter(arId, e);
    }
    s.replaceUses(id, result, [&](int u) { return u != arId; });
    s.moveResult(id, result);
  }
  std::vector<int> leaving;
  for (int id : listed) {
    if (completes.count(id) || s.nodes[id].lay[axis].st != 'S' ||
        oldLay[id][axis].st == 'S')
      continue;
    std::vector<int> users = s.users(id);
    bool outside = std::any_of(users.begin(), users.end(),
                               [&](int u) { return !inList.count(u); });
    if (outside || s.isResult(id))
      leaving.push_back(id);
  }
  bool agFree = s.users(ag).empty() && !s.isResult(ag);
  if (agFree)
    s.erase(ag);
  for (size_t i = 0; i < leaving.size(); ++i) {
    int id = leaving[i];
    Node g;
    g.name = agFree && i + 1 == leaving.size() ? agName : "";
    g.op = Op::AllGather;
    g.dt = s.nodes[id].dt;
    g.sh = s.nodes[id].sh;
    g.lay = oldLay[id];
    g.axis = axis;
    g.ops = {id};
    g.tainted = s.nodes[id].tainted;
    int gId = s.insertAfter(id, g);
    s.replaceUses(id, gId, [&](int u) { return !inList.count(u); });
    s.moveResult(id, gId);
  }
}

std::string Generator::planShard(const Model &s, int p, Layout &layout,
                                 int &gather) const {
  const Node &n = s.nodes[p];
  if (n.op != Op::Param)
    return "shard-not-param";
  if (n.sh == Sh::Scalar || !allReplicated(n.lay))
    return "shard-not-replicated-tensor";
  std::vector<int> users = s.users(p);
  if (users.empty())
    return "shard-unused";
  std::optional<Layout> chosen;
  for (int u : users) {
    const Node &x = s.nodes[u];
    if (x.op != Op::Elementwise || !anyState(x.lay, 'S'))
      return "shard-full-use";
    Layout l = replicated(s.axes);
    int lead = rankOf(x.sh) - rankOf(n.sh);
    for (unsigned a = 0; a < s.axes; ++a) {
      if (x.lay[a].st != 'S')
        continue;
      int d = x.lay[a].dim - lead;
      // Shapes are equal by name: dimension d of p against x.lay[a].dim
      // of x; both come from the same size names only when aligned.
      if (d < 0)
        return "shard-full-use";
      l[a] = {'S', d};
    }
    if (chosen && *chosen != l)
      return "shard-mixed-slices";
    chosen = l;
  }
  layout = *chosen;
  gather = -1;
  for (int o : s.order)
    if (s.nodes[o].updates == p) {
      const Node &u = s.nodes[o];
      if (u.op != Op::AllGather || s.nodes[u.ops[0]].lay != layout)
        return "shard-update-full";
      if (!s.users(o).empty())
        return "shard-update-read";
      const Node &slice = s.nodes[u.ops[0]];
      if (u.returned != 0 || slice.updates >= 0 || slice.op == Op::Param ||
          s.isResult(u.ops[0]))
        return "shard-update-shared";
      gather = o;
    }
  return "";
}

void Generator::applyShard(Model &s, int p, const Layout &layout, int gather) {
  s.nodes[p].lay = layout;
  if (gather >= 0) {
    int slice = s.nodes[gather].ops[0];
    s.nodes[slice].updates = p;
    s.nodes[gather].updates = -1;
    s.erase(gather);
  }
}

bool Generator::convex(const Model &s, const std::set<int> &group) const {
  std::set<int> tainted; // outside stages depending on a member
  for (int o : s.order) {
    const Node &n = s.nodes[o];
    if (group.count(o)) {
      for (int x : n.ops)
        if (tainted.count(x))
          return false;
      continue;
    }
    for (int x : n.ops)
      if (group.count(x) || tainted.count(x)) {
        tainted.insert(o);
        break;
      }
  }
  return true;
}

std::vector<int> Generator::planFuse(const Model &s) {
  auto loopLay = [&](int id) {
    const Node &n = s.nodes[id];
    return n.op == Op::AllGather ? s.nodes[n.ops[0]] : n;
  };
  std::vector<int> seeds = s.named(
      [](const Node &n) { return n.op == Op::Elementwise && n.kernel < 0; });
  if (seeds.empty())
    return {};
  int seed = pick(seeds);
  const Node key = s.nodes[seed];
  auto sameLoop = [&](int id) {
    const Node l = loopLay(id);
    return l.sh == key.sh && l.lay == key.lay;
  };
  std::set<int> group{seed};
  int want = range(1, 5);
  for (int round = 0; round < 6 && static_cast<int>(group.size()) < want;
       ++round) {
    std::vector<int> next;
    for (int g : group) {
      std::vector<int> around = s.nodes[g].ops;
      for (int u : s.users(g))
        around.push_back(u);
      for (int x : around) {
        const Node &n = s.nodes[x];
        if (!group.count(x) && !n.name.empty() && n.op == Op::Elementwise &&
            n.kernel < 0 && sameLoop(x))
          next.push_back(x);
      }
    }
    if (next.empty())
      break;
    std::set<int> bigger = group;
    bigger.insert(pick(next));
    if (convex(s, bigger))
      group = bigger;
  }
  // A reducing collective to start the kernel and an allgather to end it.
  if (chance(0.5)) {
    std::vector<int> starts;
    for (int g : group)
      for (int x : s.nodes[g].ops) {
        const Node &n = s.nodes[x];
        if (isReducing(n.op) && !n.name.empty() && n.kernel < 0 &&
            !s.overAllAxes(n) && sameLoop(x) && !group.count(n.ops[0]))
          starts.push_back(x);
      }
    if (!starts.empty()) {
      std::set<int> bigger = group;
      bigger.insert(pick(starts));
      if (convex(s, bigger))
        group = bigger;
    }
  }
  if (chance(0.5)) {
    std::vector<int> ends;
    for (int g : group)
      for (int u : s.users(g)) {
        const Node &n = s.nodes[u];
        if (n.op != Op::AllGather || n.name.empty() || n.kernel >= 0 ||
            s.overAllAxes(n) || !sameLoop(u))
          continue;
        std::vector<int> readers = s.users(u);
        if (std::none_of(readers.begin(), readers.end(),
                         [&](int r) { return group.count(r) > 0; }))
          ends.push_back(u);
      }
    if (!ends.empty()) {
      std::set<int> bigger = group;
      bigger.insert(pick(ends));
      if (convex(s, bigger))
        group = bigger;
    }
  }
  std::vector<int> out(group.begin(), group.end());
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

void Generator::applyFuse(Model &s, const std::vector<int> &group) {
  int k = s.kernels++;
  for (int g : group)
    s.nodes[g].kernel = k;
}

bool Generator::overlap(Model &s, std::vector<std::string> &dirs,
                        int64_t &chunks) {
  int mm = s.find("ym");
  if (mm < 0)
    return false;
  for (int u : s.users(mm)) {
    const Node &c = s.nodes[u];
    if ((c.op == Op::AllReduce || c.op == Op::ReduceScatter ||
         c.op == Op::AllGather) &&
        !c.name.empty()) {
      int k = pick(std::vector<int>{1, 2, 2, 4});
      chunks = std::max<int64_t>(chunks, k);
      dirs.push_back("overlap(ym, " + c.name + ") chunks " + std::to_string(k) +
                     ";");
      s.overlaps.push_back({mm, u});
      return true;
    }
  }
  return false;
}

void Generator::splitAndReorder(Model &s, std::vector<std::string> &dirs,
                                bool certain) {
  std::vector<int> splittable = splittableOf(s);
  std::vector<int> gathers = s.named([&](const Node &n) {
    return n.op == Op::AllGather && !s.overAllAxes(n) && n.kernel < 0;
  });
  if (splittable.empty() && gathers.empty())
    return;
  if (!certain && !chance(0.85))
    return;
  int ag;
  if (!splittable.empty() && (gathers.empty() || chance(0.85))) {
    int a = pick(splittable);
    int k = splits++;
    std::string rs = "rs" + std::to_string(k),
                agName = "ag" + std::to_string(k);
    dirs.push_back("(" + rs + ", " + agName + ") = split(" + s.nodes[a].name +
                   ");");
    ag = split(s, a, rs, agName);
  } else {
    ag = pick(gathers);
  }
  if (!chance(0.85))
    return;
  std::map<int, Layout> newLay;
  std::set<int> completes;
  std::vector<int> listed =
      planReorder(s, ag, newLay, completes, chance(0.5) ? 1.0 : 0.7);
  if (listed.empty())
    return;
  std::vector<int> shuffled = listed;
  if (chance(0.3))
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
  dirs.push_back("reorder(" + s.nodes[ag].name + ", " + list(s, shuffled) +
                 ");");
  applyReorder(s, ag, listed, newLay, completes);
  if (!chance(0.75))
    return;
  std::vector<int> shard;
  std::vector<std::pair<Layout, int>> plans;
  for (int o : s.order) {
    if (s.nodes[o].op != Op::Param)
      continue;
    Layout l;
    int g = -1;
    if (planShard(s, o, l, g).empty() && chance(0.8)) {
      shard.push_back(o);
      plans.push_back({l, g});
    }
  }
  if (shard.empty())
    return;
  dirs.push_back("shard(" + list(s, shard) + ");");
  for (size_t i = 0; i < shard.size(); ++i)
    applyShard(s, shard[i], plans[i].first, plans[i].second);
}

GeneratedSchedule Generator::plausible(const std::string &name, int64_t &chunks,
                                       Model &final) {
  GeneratedSchedule out;
  out.name = name;
  out.legal = true;
  Model s = m;
  std::vector<std::string> dirs;
  bool early = chance(0.3);
  if (early)
    overlap(s, dirs, chunks);
  splitAndReorder(s, dirs, false);
  if (chance(0.15))
    splitAndReorder(s, dirs, false);
  int fuses = range(0, 2);
  for (int i = 0; i < fuses; ++i) {
    std::vector<int> group = planFuse(s);
    if (group.empty())
      break;
    dirs.push_back("fuse(" + list(s, group) + ");");
    applyFuse(s, group);
  }
  if (!early && chance(0.6))
    overlap(s, dirs, chunks);
  // (No draw: the programs and schedules of every seed stay as they were.)
  if (!indexResult.empty())
    dirs.push_back("fuse(gg, gt);");
  if (dirs.empty()) {
    std::vector<int> group = planFuse(s);
    if (!group.empty()) {
      dirs.push_back("fuse(" + list(s, group) + ");");
      applyFuse(s, group);
    }
  }
  out.intent = "plausible";
  out.text = scheduleText(name, programName, dirs);
  final = std::move(s);
  return out;
}

GeneratedSchedule Generator::applied(const std::string &name,
                                     const GeneratedSchedule &earlier,
                                     const Model &after) {
  GeneratedSchedule out;
  out.name = name;
  out.legal = true;
  out.intent = "plausible, with apply";
  Model s = after;
  std::vector<std::string> dirs = {"apply " + earlier.name + ";"};
  int fuses = range(1, 2);
  for (int i = 0; i < fuses; ++i) {
    std::vector<int> group = planFuse(s);
    if (group.empty())
      break;
    dirs.push_back("fuse(" + list(s, group) + ");");
    applyFuse(s, group);
  }
  out.text = earlier.text + scheduleText(name, programName, dirs);
  return out;
}

std::vector<Illegal> Generator::illegalOptions(const Model &s) {
  std::vector<Illegal> out;
  auto add = [&](std::string text, std::string kind, std::string intent) {
    out.push_back({std::move(text), std::move(kind), std::move(intent)});
  };
  auto any = s.named([](const Node &) { return true; });
  auto name = [&](int id) { return s.nodes[id].name; };

  // split
  auto notAr = s.named([](const Node &n) { return n.op != Op::AllReduce; });
  if (!notAr.empty())
    add("split(" + name(pick(notAr)) + ");", "split-not-all-reduce",
        "split of a non-allreduce");
  auto scalarAr = s.named([](const Node &n) {
    return n.op == Op::AllReduce && n.sh == Sh::Scalar;
  });
  if (!scalarAr.empty())
    add("split(" + name(pick(scalarAr)) + ");", "split-scalar",
        "split of a scalar allreduce");
  auto allAxes = s.named([&](const Node &n) {
    return n.op == Op::AllReduce && n.sh != Sh::Scalar && s.overAllAxes(n) &&
           n.kernel < 0;
  });
  if (!allAxes.empty())
    add("split(" + name(pick(allAxes)) + ");", "split-all-axes",
        "split of an allreduce over every axis");
  auto fusable = s.named([&](const Node &n) {
    return n.op == Op::AllReduce && n.sh != Sh::Scalar && n.kernel < 0 &&
           !s.overAllAxes(n);
  });
  if (!fusable.empty()) {
    std::string a = name(pick(fusable));
    add("fuse(" + a + ");\n    split(" + a + ");", "split-fused",
        "split after fuse");
  }
  auto splittable = splittableOf(s);
  if (!splittable.empty()) {
    std::string a = name(pick(splittable));
    add("split(" + a + ");\n    split(" + a + ");", "schedule-stage-gone",
        "split twice");
  }
  if (s.mesh) {
    auto noFree = s.named([&](const Node &n) {
      if (n.op != Op::AllReduce || n.sh != Sh::V || s.overAllAxes(n) ||
          n.kernel >= 0)
        return false;
      return slicesDim(s.nodes[n.ops[0]].lay, 0);
    });
    if (!noFree.empty())
      add("split(" + name(pick(noFree)) + ");", "split-no-free-dim",
          "split with every dimension sliced");
  }

  // reorder
  auto notAg = s.named([](const Node &n) { return n.op != Op::AllGather; });
  if (!notAg.empty() && any.size() > 1) {
    int x = pick(notAg), y = pick(any);
    if (x != y)
      add("reorder(" + name(x) + ", " + name(y) + ");",
          "reorder-not-all-gather", "reorder of a non-allgather");
  }
  auto gathers = s.named([&](const Node &n) {
    return n.op == Op::AllGather && !s.overAllAxes(n);
  });
  if (!gathers.empty()) {
    int g = pick(gathers);
    int axis = s.axisOf(s.nodes[g]);
    std::set<int> down = s.downstream(g);
    std::vector<int> indep, badKind, notConn, local, sendSame, fusedOk;
    for (int id : any) {
      const Node &n = s.nodes[id];
      if (!down.count(id)) {
        indep.push_back(id);
        continue;
      }
      if (id == g)
        continue;
      bool movable = n.op == Op::Elementwise || n.op == Op::Reduction ||
                     n.op == Op::SendRecv;
      if (!movable) {
        badKind.push_back(id);
        continue;
      }
      if (n.kernel >= 0)
        continue;
      if (!s.reads(id, g)) {
        notConn.push_back(id);
        continue;
      }
      bool hasLocal = false;
      for (int o : n.ops)
        if (o != g && s.nodes[o].lay[axis].st == 'L')
          hasLocal = true;
      if (hasLocal) {
        local.push_back(id);
        continue;
      }
      if (n.op == Op::SendRecv && (n.axis < 0 || n.axis == axis))
        sendSame.push_back(id);
      else if (n.op == Op::Elementwise)
        fusedOk.push_back(id);
    }
    std::string gn = name(g);
    if (!indep.empty())
      add("reorder(" + gn + ", " + name(pick(indep)) + ");",
          "reorder-independent", "reorder past an independent stage");
    if (!badKind.empty())
      add("reorder(" + gn + ", " + name(pick(badKind)) + ");",
          "reorder-stage-kind", "reorder past a collective or matmul");
    if (!notConn.empty())
      add("reorder(" + gn + ", " + name(pick(notConn)) + ");",
          "reorder-not-connected", "reorder skipping a stage");
    if (!local.empty())
      add("reorder(" + gn + ", " + name(pick(local)) + ");",
          "reorder-local-operand", "reorder past a stage reading a local");
    if (!sendSame.empty())
      add("reorder(" + gn + ", " + name(pick(sendSame)) + ");",
          "reorder-send-same-axis", "reorder past a send on its axis");
    if (!fusedOk.empty()) {
      std::string y = name(pick(fusedOk));
      add("fuse(" + y + ");\n    reorder(" + gn + ", " + y + ");",
          "reorder-layout-mismatch", "reorder past a fused stage");
      add("reorder(" + gn + ", " + y + ", " + y + ");", "listed-twice",
          "reorder listing a stage twice");
    }
  }

  // shard
  auto nonParam = s.named([](const Node &n) { return n.op != Op::Param; });
  if (!nonParam.empty())
    add("shard(" + name(pick(nonParam)) + ");", "shard-not-param",
        "shard of a stage");
  for (int o : s.order) {
    const Node &n = s.nodes[o];
    if (n.op != Op::Param)
      continue;
    Layout l;
    int g;
    std::string kind = planShard(s, o, l, g);
    if (!kind.empty() && chance(0.5))
      add("shard(" + n.name + ");", kind, "shard of " + kind.substr(6));
  }

  // fuse
  auto notFusable = s.named([&](const Node &n) {
    bool ok =
        n.op == Op::Elementwise || isReducing(n.op) || n.op == Op::AllGather;
    return !ok || (isCommunication(n.op) && s.overAllAxes(n));
  });
  if (!notFusable.empty())
    add("fuse(" + name(pick(notFusable)) + ");", "fuse-not-fusable",
        "fuse of a reduction, matmul, parameter or other collective");
  auto fuseGathers = s.named([&](const Node &n) {
    return n.op == Op::AllGather && !s.overAllAxes(n);
  });
  auto fuseReducing = s.named(
      [&](const Node &n) { return isReducing(n.op) && !s.overAllAxes(n); });
  for (const auto *set : {&fuseGathers, &fuseReducing})
    if (set->size() >= 2) {
      int a = pick(*set), b = pick(*set);
      if (a != b)
        add("fuse(" + name(a) + ", " + name(b) + ");", "fuse-two-collectives",
            "fuse of two collectives of one kind");
    }
  for (int r : fuseReducing) {
    int in = s.nodes[r].ops[0];
    if (!s.nodes[in].name.empty() && s.nodes[in].op == Op::Elementwise) {
      add("fuse(" + name(in) + ", " + name(r) + ");", "fuse-collective-place",
          "fuse of a reducing collective after its input");
      break;
    }
  }
  auto elementwise =
      s.named([](const Node &n) { return n.op == Op::Elementwise; });
  if (elementwise.size() >= 2) {
    int a = pick(elementwise), b = pick(elementwise);
    const Node &x = s.nodes[a], &y = s.nodes[b];
    if (a != b && (x.sh != y.sh || x.lay != y.lay))
      add("fuse(" + name(a) + ", " + name(b) + ");", "fuse-shapes",
          "fuse of different shapes");
    if (a != b && x.sh == y.sh && x.lay == y.lay && !s.reads(a, b) &&
        !s.reads(b, a) && x.kernel < 0 && y.kernel < 0)
      add("fuse(" + name(a) + ", " + name(b) + ");", "fuse-not-connected",
          "fuse of unconnected stages");
    // A cycle: c reads a directly and through a stage outside.
    for (int c : elementwise) {
      const Node &z = s.nodes[c];
      if (z.kernel >= 0)
        continue;
      for (int o : z.ops) {
        const Node &w = s.nodes[o];
        if (w.op != Op::Elementwise || w.name.empty() || w.kernel >= 0 ||
            w.sh != z.sh || w.lay != z.lay)
          continue;
        std::set<int> down = s.downstream(o);
        bool through = std::any_of(z.ops.begin(), z.ops.end(), [&](int x) {
          return x != o && down.count(x);
        });
        if (through) {
          add("fuse(" + name(o) + ", " + name(c) + ");", "fuse-cycle",
              "fuse around a stage outside the group");
          break;
        }
      }
      if (!out.empty() && out.back().kind == "fuse-cycle")
        break;
    }
  }
  // A partial kernel: fuse a pair, then one of them with a third stage.
  for (int a : elementwise) {
    const Node &x = s.nodes[a];
    if (x.kernel >= 0)
      continue;
    std::vector<int> around;
    for (int u : s.users(a))
      around.push_back(u);
    for (int o : x.ops)
      around.push_back(o);
    std::vector<int> same;
    for (int b : around) {
      const Node &y = s.nodes[b];
      if (y.op == Op::Elementwise && !y.name.empty() && y.kernel < 0 &&
          y.sh == x.sh && y.lay == x.lay)
        same.push_back(b);
    }
    if (same.size() >= 2 && same[0] != same[1] && convex(s, {a, same[0]}) &&
        convex(s, {a, same[1]})) {
      add("fuse(" + name(a) + ", " + name(same[0]) + ");\n    fuse(" + name(a) +
              ", " + name(same[1]) + ");",
          "fuse-partial", "fuse leaving part of a kernel out");
      break;
    }
  }

  // overlap
  int mm = s.find("ym");
  auto notMm = s.named(
      [](const Node &n) { return n.op != Op::MatMul && n.op != Op::AllToAll; });
  if (!notMm.empty() && any.size() >= 2) {
    int a = pick(notMm), b = pick(any);
    if (a != b)
      add("overlap(" + name(a) + ", " + name(b) + ") chunks 2;",
          "overlap-producer", "overlap of a non-matmul");
  }
  if (mm >= 0) {
    auto notColl = s.named([](const Node &n) {
      return n.op != Op::AllReduce && n.op != Op::ReduceScatter &&
             n.op != Op::AllGather && n.op != Op::AllToAll;
    });
    auto colls = s.named([&](const Node &n) {
      return (n.op == Op::AllReduce || n.op == Op::ReduceScatter ||
              n.op == Op::AllGather) &&
             !std::count(n.ops.begin(), n.ops.end(), mm);
    });
    if (!notColl.empty())
      add("overlap(ym, " + name(pick(notColl)) + ") chunks 2;",
          "overlap-consumer", "overlap with a non-collective");
    if (!colls.empty())
      add("overlap(ym, " + name(pick(colls)) + ") chunks 2;",
          "overlap-not-consumer", "overlap with an unrelated collective");
    for (int u : s.users(mm)) {
      const Node &c = s.nodes[u];
      if (c.op == Op::AllReduce && !c.name.empty()) {
        add("overlap(ym, " + c.name + ") chunks 2;\n    overlap(ym, " + c.name +
                ") chunks 2;",
            "overlap-twice", "overlap twice");
        break;
      }
    }
  }

  // Checked by sema before any pass runs.
  if (chance(0.2)) {
    add("split(nosuchstage);", "schedule-unknown-stage", "unknown stage");
    if (!any.empty())
      add("overlap(" + name(pick(any)) + ", " + name(pick(any)) + ");",
          "chunks-required", "overlap without chunks");
  }
  return out;
}

GeneratedSchedule Generator::illegal(const std::string &name) {
  GeneratedSchedule out;
  out.name = name;
  out.legal = false;
  Model s = m;
  std::vector<std::string> dirs;
  // Sometimes a legal prefix, so that refusals also happen on scheduled IR.
  if (chance(0.5))
    splitAndReorder(s, dirs, true);
  if (chance(0.3)) {
    std::vector<int> group = planFuse(s);
    if (!group.empty()) {
      dirs.push_back("fuse(" + list(s, group) + ");");
      applyFuse(s, group);
    }
  }
  std::vector<Illegal> options = illegalOptions(s);
  if (options.empty())
    return out; // no text: skipped
  // Uniform over kinds, then over options of the kind.
  std::map<std::string, std::vector<const Illegal *>> byKind;
  for (const Illegal &o : options)
    byKind[o.kind].push_back(&o);
  auto it = byKind.begin();
  std::advance(it, range(0, static_cast<int>(byKind.size()) - 1));
  const Illegal &chosen = *pick(it->second);
  dirs.push_back(chosen.text);
  out.expectedKind = chosen.kind;
  out.intent = chosen.intent;
  out.text = scheduleText(name, programName, dirs);
  return out;
}

GeneratedFile Generator::run(uint64_t seed) {
  GeneratedFile file;
  file.seed = seed;
  unsigned count = static_cast<unsigned>(
      range(1, static_cast<int>(std::max(1u, options.maxPrograms))));
  for (unsigned i = 0; i < count; ++i) {
    bool mesh = i > 0 && chance(0.35);
    GeneratedProgram p = program("p" + std::to_string(i), mesh);
    int schedules = range(2, 4);
    // Plausible schedules so far and the model after each.
    std::vector<std::pair<size_t, Model>> done;
    for (int k = 0; k < schedules; ++k) {
      std::string name = "s" + std::to_string(i) + "_" + std::to_string(k);
      GeneratedSchedule s;
      Model after;
      if (chance(0.35)) {
        s = illegal(name);
      } else if (!done.empty() && chance(0.2)) {
        const auto &[index, model] = done[static_cast<size_t>(
            range(0, static_cast<int>(done.size()) - 1))];
        s = applied(name, p.schedules[index], model);
      } else {
        s = plausible(name, p.sizeFactor, after);
        if (!s.text.empty())
          done.push_back({p.schedules.size(), std::move(after)});
      }
      if (!s.text.empty())
        p.schedules.push_back(std::move(s));
    }
    file.programs.push_back(std::move(p));
  }
  return file;
}

} // namespace

GeneratedFile generateFile(uint64_t seed, const GeneratorOptions &options) {
  Generator g(seed, options);
  return g.run(seed);
}

} // namespace coconet::randomtest
