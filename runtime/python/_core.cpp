//===- _core.cpp - coconet._core: a generated program, called from Python -===//
//
// One class, Program: it loads a program's shared library (_NAME.so, built
// from NAME.cpp and the NAME_python.cpp that `coconetc --emit=python`
// writes), reads its description (coconet/python_abi.h), settles the sizes
// (given, the mesh axes from the number of ranks, the rest from the first
// call's arrays), creates the program and calls its step with the callers'
// arrays, zero-copy, through DLPack (NumPy, PyTorch, CuPy, JAX...).
//
// Every argument is checked before the step runs: its type, element type,
// number of dimensions, device, layout in memory, this rank's block shape,
// and that no written array shares memory with another; so a refused call
// changes nothing. The per-call path allocates nothing but the returned
// tuple: its buffers are the object's, reused, and the shapes are computed
// once, when the program is created.
//
//===----------------------------------------------------------------------===//

#include "coconet/float_range.h"
#include "coconet/python_abi.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// --- Element types
// ----------------------------------------------------------------

struct DTypeInfo {
  const char *name; // our spelling: "f32"
  int bytes;
  char kind; // 'F'loat, 'I'nteger, 'B'ool
};

constexpr DTypeInfo kDTypes[] = {
#define DTYPE(Name, Printed, Bytes, Kind) {Printed, Bytes, #Kind[0]},
#include "coconet/dtypes.def"
};
constexpr int kNumDTypes = sizeof(kDTypes) / sizeof(kDTypes[0]);

/// NumPy's spelling of our element type ("float32", "bfloat16", "bool").
std::string numpyName(int dtype) {
  const DTypeInfo &t = kDTypes[dtype];
  const std::string name = t.name;
  const std::string bits = std::to_string(8 * t.bytes);
  if (t.kind == 'B')
    return "bool";
  if (name[0] == 'b')
    return "bfloat" + bits;
  if (t.kind == 'F')
    return "float" + bits;
  return (name[0] == 'u' ? "uint" : "int") + bits;
}

/// The DLPack element type an array of our element type has.
nb::dlpack::dtype dlpackOf(int dtype) {
  const DTypeInfo &t = kDTypes[dtype];
  using Code = nb::dlpack::dtype_code;
  Code code = Code::Bool;
  if (t.kind == 'F')
    code = t.name[0] == 'b' ? Code::Bfloat : Code::Float;
  else if (t.kind == 'I')
    code = t.name[0] == 'u' ? Code::UInt : Code::Int;
  return {static_cast<uint8_t>(code), static_cast<uint8_t>(8 * t.bytes), 1};
}

/// NumPy's spelling of a DLPack element type, for messages.
std::string dlpackName(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  std::string bits = std::to_string(t.bits), name;
  switch (static_cast<Code>(t.code)) {
  case Code::Int:
    name = "int" + bits;
    break;
  case Code::UInt:
    name = "uint" + bits;
    break;
  case Code::Float:
    name = "float" + bits;
    break;
  case Code::Bfloat:
    name = "bfloat" + bits;
    break;
  case Code::Complex:
    name = "complex" + bits;
    break;
  case Code::Bool:
    name = "bool";
    break;
  default:
    name =
        "DLPack type code " + std::to_string(t.code) + " of " + bits + " bits";
  }
  if (t.lanes != 1)
    name += " x" + std::to_string(t.lanes);
  return name;
}

// How a scalar parameter is passed: the C type python_abi.h names.
enum class ScalarKind { Float, Double, I32, I64, U64, Bool };

ScalarKind scalarKind(int dtype) {
  const DTypeInfo &t = kDTypes[dtype];
  if (t.kind == 'F')
    return t.bytes == 8 ? ScalarKind::Double : ScalarKind::Float;
  if (t.kind == 'B')
    return ScalarKind::Bool;
  if (t.name[0] == 'u')
    return ScalarKind::U64;
  return t.bytes == 4 ? ScalarKind::I32 : ScalarKind::I64;
}

/// Why `x` cannot be a scalar of float type `dtype` (empty: it can): the
/// rule of `--set` (coconet/float_range.h).
std::string floatRangeProblem(int dtype, double x) {
  return coconet::rt::floatRangeProblem(static_cast<coconet::rt::DType>(dtype),
                                        kDTypes[dtype].name, x);
}

union ScalarValue {
  float f;
  double d;
  int32_t i32;
  int64_t i64;
  uint64_t u64;
  bool b;
};

// --- Devices
// ------------------------------------------------------------------------

constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

std::string deviceName(int type, int id) {
  switch (type) {
  case kDLCPU:
    return "cpu";
  case kDLCUDA:
    return "cuda:" + std::to_string(id);
  case kDLCUDAHost:
    return "cuda_host";
  case kDLCUDAManaged:
    return "cuda_managed:" + std::to_string(id);
  case 10:
    return "rocm:" + std::to_string(id);
  default:
    return "DLPack device " + std::to_string(type) + ":" + std::to_string(id);
  }
}

// --- Messages
// -----------------------------------------------------------------------

[[noreturn]] void raise(PyObject *type, const std::string &message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

std::string tupleText(const int64_t *v, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(v[i]);
  }
  return s + (n == 1 ? ",)" : ")");
}

/// The most characters of a user's value a message shows.
constexpr size_t kMaxShown = 64;

/// What a user gave (a name, a key, an exception's message), as a message
/// may show it: Python's ascii() (a control character, a format character
/// such as U+202E or any other non-ASCII one escaped: \x1b, \u202e, which a
/// terminal shows as text), without the quotes when `quoted` is false, cut
/// to `max` characters with "...". Never raises.
std::string shown(nb::handle h, bool quoted = true, size_t max = kMaxShown) {
  PyObject *a = PyObject_ASCII(h.ptr());
  if (!a) {
    PyErr_Clear();
    return "?";
  }
  Py_ssize_t n = 0;
  const char *c = PyUnicode_AsUTF8AndSize(a, &n);
  std::string s = c ? std::string(c, static_cast<size_t>(n)) : "?";
  Py_DECREF(a);
  if (!c)
    PyErr_Clear();
  if (!quoted && s.size() >= 2 && (s.front() == '\'' || s.front() == '"') &&
      s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  if (s.size() > max)
    s = s.substr(0, max - 3) + "...";
  return s;
}

/// An exception's message, as shown() shows it (a user's __float__ may
/// raise anything).
std::string shownError(const nb::python_error &e) {
  return shown(e.value(), /*quoted=*/false, 4 * kMaxShown);
}

/// A Python int as a message shows it: its digits while it fits 64 bits,
/// else its size ("a 1329-bit integer"): str() of an int of a million
/// digits is a megabyte, and Python refuses it past 4300 digits.
std::string intText(nb::handle n) {
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
  if (!overflow && !PyErr_Occurred())
    return std::to_string(x);
  PyErr_Clear();
  const unsigned long long u = PyLong_AsUnsignedLongLong(n.ptr());
  if (!PyErr_Occurred())
    return std::to_string(u);
  PyErr_Clear();
  nb::object bits =
      nb::steal(PyObject_CallMethod(n.ptr(), "bit_length", nullptr));
  if (!bits.is_valid()) {
    PyErr_Clear();
    return "an integer";
  }
  return std::string(overflow < 0 ? "a negative " : "a ") +
         std::to_string(PyLong_AsLongLong(bits.ptr())) + "-bit integer";
}

/// A C++ string from the user (a path), as shown() shows it, unquoted.
std::string shownText(const std::string &text, size_t max = 4 * kMaxShown) {
  nb::object str = nb::steal(PyUnicode_DecodeUTF8(
      text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
  if (!str.is_valid()) {
    PyErr_Clear();
    return "?";
  }
  return shown(str, /*quoted=*/false, max);
}

std::string typeName(nb::handle h) {
  return shown(nb::type_name(h.type()), /*quoted=*/false);
}

// Python's limited API (Py_LIMITED_API: one extension for every CPython
// from 3.12, as test/gpu/python_bench.py builds it) hides the type objects'
// fields and the unchecked macros; the full API's are faster.

bool isNumpyBool(PyObject *o) {
#if defined(Py_LIMITED_API)
  const std::string n = typeName(nb::handle(o));
  return n == "numpy.bool_" || n == "numpy.bool";
#else
  const char *n = Py_TYPE(o)->tp_name;
  return std::strcmp(n, "numpy.bool_") == 0 ||
         std::strcmp(n, "numpy.bool") == 0;
#endif
}

/// Whether `o`'s type converts to a float (nb_float) or an integer
/// (nb_index).
bool numberLike(PyObject *o) {
#if defined(Py_LIMITED_API)
  PyTypeObject *t = Py_TYPE(o);
  return PyType_GetSlot(t, Py_nb_float) || PyType_GetSlot(t, Py_nb_index);
#else
  const PyNumberMethods *n = Py_TYPE(o)->tp_as_number;
  return n && (n->nb_float || n->nb_index);
#endif
}

/// The identifiers of `text` ("4*H + K" → H, K).
std::vector<std::string> identifiers(const std::string &text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c) || c == '_') {
      size_t j = i;
      while (
          j < text.size() &&
          (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      out.push_back(text.substr(i, j - i));
      i = j;
    } else if (std::isdigit(c)) {
      while (i < text.size() &&
             std::isalnum(static_cast<unsigned char>(text[i])))
        ++i;
    } else {
      ++i;
    }
  }
  return out;
}

/// An extent as the program declares it ("4*H", "N", "3"): its
/// coefficient unless 1, then its sizes, joined by '*' (ir::Dim::str).
std::string extentText(const cc_extent &e, const char *const *sizeNames) {
  std::string out;
  if (e.coefficient != 1 || e.num_sizes == 0)
    out = std::to_string(e.coefficient);
  for (uint32_t i = 0; i < e.num_sizes; ++i)
    out += (out.empty() ? "" : "*") + std::string(sizeNames[e.sizes[i]]);
  return out;
}

// How a tensor lies along a mesh axis, as BlockView::layout holds it: these,
// or the sliced dimension.
constexpr int kReplicatedAxis = -2, kLocalAxis = -1;

/// A block of the program's description (coconet/description.h) as the
/// checks read it.
struct BlockView {
  const char *name; // Python's name
  int kind;         // CC_BLOCK_*
  int dtype;
  int rank;
  int written;
  // Per dimension: the size that is its extent (an index into the size
  // names), or -1 where the extent is not one size (4*H).
  std::vector<int> dims;
  // Per mesh axis: kReplicatedAxis, kLocalAxis or the sliced dimension.
  std::vector<int> layout;
  const char *type;     // as declared: "f32[N] sliced(0)"
  std::string segments; // its segment table's name, or ""
  std::string result;   // the result it holds after a step, or ""
};

// Where a size's value came from.
constexpr int kUnknown = -1, kGiven = -2, kRanks = -3, kTable = -4;

// --- Program
// --------------------------------------------------------------------------

struct Param {
  const BlockView *p;
  std::string name;
  nb::dlpack::dtype dl; // tensors: the DLPack element type expected
  ScalarKind scalar;    // scalars: how it is passed
  size_t dimOffset = 0; // tensors: where its dims start in shape_/offset_
  std::vector<std::string> dims; // the declared extents' text
  bool tensor() const { return p->kind != CC_BLOCK_SCALAR; }
};

class Program {
public:
  /// Only loaded (describe()): no world, never created.
  Program() = default;
  /// Loads `library` and checks its description.
  void load(const std::string &library);
  Program(const std::string &library, int64_t comm, nb::handle stream,
          nb::handle sizes, nb::handle tables, nb::object allocate,
          nb::object keep);
  ~Program();
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  nb::object call(nb::args args);
  void create();
  void synchronize();
  /// The description, once loaded.
  const cc_py_program &description() const { return *d_; }
  bool created() const { return program_ != nullptr; }
  int rank() const { return rank_; }
  int worldSize() const { return size_; }
  const char *name() const { return desc_->name; }
  nb::dict sizes() const;
  nb::object path() const;
  nb::dict info() const;
  nb::tuple block(const std::string &name) const;
  std::string repr() const;

private:
  /// Raises `type` with `m` after the program's name (once: the runtime's
  /// own messages may start with it).
  [[noreturn]] void fail(PyObject *type, const std::string &m) const {
    const std::string prefix = std::string(desc_->name) + ": ";
    raise(type, m.compare(0, prefix.size(), prefix) == 0 ? m : prefix + m);
  }
  std::string q(int i) const { return "'" + params_[i].name + "'"; }
  void setSizes(nb::handle sizes, nb::handle tables);
  void settleAxes();
  void deduce(std::vector<int64_t> &sizes, std::vector<int> &from) const;
  void placeAndCreate(const std::vector<int64_t> &sizes,
                      const std::vector<int> &from);
  void place(const std::vector<int64_t> &sizes, std::vector<int64_t> &shape,
             std::vector<int64_t> &offset) const;
  void take(int i, nb::handle h);
  void check(int i) const;
  void checkShape(int i, const int64_t *shape, const int64_t *offset,
                  const std::vector<int64_t> &sizes,
                  const std::vector<int> &from) const;
  std::string sizeNote(const std::string &text, int i,
                       const std::vector<int64_t> &sizes,
                       const std::vector<int> &from) const;
  void scalar(int i, nb::handle h);
  int sizeIndex(const std::string &name) const;
  std::string sizeList() const;

  const cc_py_program *d_ = nullptr;
  const cc_description *desc_ = nullptr; // d_->description
  int numSizes_ = 0, numAxes_ = 0, numBlocks_ = 0, numTables_ = 0;
  std::vector<BlockView> views_; // one per block
  std::string library_;
  int64_t comm_ = -1;
  void *stream_ = nullptr;
  int rank_ = 0, size_ = 1;
  int device_ = -1;         // the CUDA target's device, where known
  int deviceType_ = kDLCPU; // what arrays must be on
  bool hostAlsoPinned_ = true;
  std::vector<Param> params_;
  std::vector<int> tensors_; // indices of tensor params and outputs
  std::vector<int64_t> sizes_;
  std::vector<int> from_; // kUnknown, kGiven, kRanks, kTable or a param
  std::vector<std::vector<int64_t>> tables_;
  size_t totalDims_ = 0;
  std::vector<int64_t> shape_, offset_; // this rank's blocks, once created
  nb::object allocate_;
  // What the caller's handles (comm, stream) belong to: released after the
  // program is destroyed (a member: destroyed after ~Program's body).
  nb::object keep_;
  void *program_ = nullptr;

  // Per call, reused.
  bool busy_ = false;
  std::vector<nb::ndarray<>> arrays_;
  std::vector<char> viaView_; // a torch bool tensor taken as uint8
  std::vector<nb::object> outputs_;
  std::vector<ScalarValue> scalars_;
  std::vector<void *> args_;
  std::vector<int64_t> tryShape_, tryOffset_, trySizes_;
  std::vector<int> tryFrom_;
};

void Program::load(const std::string &path) {
  library_ = path;
  // The path as messages show it (a user's: escaped and cut).
  const std::string library = shownText(path);
  // dlopen opens a FIFO and waits for a writer, and reads a device: a path
  // that names something is a regular file (a bare name is dlopen's to
  // search for).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    raise(PyExc_ImportError,
          "cannot load the coconet program " + library + ": it is " +
              (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file"));
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    raise(PyExc_ImportError,
          "cannot load the coconet program " + library + ": " +
              (e ? shownText(e, 4 * kMaxShown) : "unknown error"));
  }
  // Never closed: the program's code must outlive every object made from it.
  auto fn = reinterpret_cast<cc_py_program_fn>(dlsym(h, COCONET_PY_SYMBOL));
  if (!fn)
    raise(PyExc_ImportError,
          library + " has no " COCONET_PY_SYMBOL
                    "(): it is not a coconet program's "
                    "library (python3 -m coconet build writes one)");
  d_ = fn();
  if (!d_)
    raise(PyExc_ImportError,
          library + ": " COCONET_PY_SYMBOL "() returned null");
  if (d_->abi != COCONET_PY_ABI)
    raise(PyExc_ImportError,
          library + ": built for coconet Python ABI " +
              std::to_string(d_->abi) + ", this coconet has " +
              std::to_string(COCONET_PY_ABI) + ": rebuild it");
  // The description is checked once, so that nothing below reads past it.
  auto bad = [&](const std::string &what) {
    raise(PyExc_ImportError, library + ": a malformed program description (" +
                                 what + "): rebuild it with this coconet");
  };
  desc_ = d_->description;
  if (!desc_)
    bad("no description");
  if (desc_->version != COCONET_DESCRIPTION_VERSION)
    bad("description version " + std::to_string(desc_->version) +
        ", this coconet reads " + std::to_string(COCONET_DESCRIPTION_VERSION));
  if (!desc_->name || !desc_->program || !desc_->schedule || !d_->target ||
      !d_->source)
    bad("a name is null");
  // Counts that fit in an int, each with its array.
  constexpr uint32_t kMaxCount = 1u << 20;
  if (desc_->num_sizes > kMaxCount || desc_->num_axes > desc_->num_sizes ||
      desc_->num_blocks > kMaxCount || desc_->num_params > desc_->num_blocks ||
      desc_->num_tables > kMaxCount || desc_->num_results > kMaxCount ||
      (desc_->num_sizes && !desc_->size_names) ||
      (desc_->num_axes && !desc_->axis_sizes) ||
      (desc_->num_blocks && (!desc_->blocks || !d_->names)) ||
      (desc_->num_tables && !desc_->tables) ||
      (desc_->num_results && !desc_->results))
    bad("counts");
  numSizes_ = static_cast<int>(desc_->num_sizes);
  numAxes_ = static_cast<int>(desc_->num_axes);
  numBlocks_ = static_cast<int>(desc_->num_blocks);
  numTables_ = static_cast<int>(desc_->num_tables);
  if (!d_->world || !d_->place || !d_->create || !d_->step || !d_->destroy)
    bad("an entry point is null");
  const bool cuda = std::strcmp(d_->target, "cuda") == 0 ||
                    std::strcmp(d_->target, "cuda-emulated") == 0;
  if (cuda && (!d_->device_count || !d_->nccl_unique_id || !d_->nccl_init ||
               !d_->nccl_destroy || !d_->synchronize))
    bad("a CUDA runtime entry point is null");
  for (int s = 0; s < numSizes_; ++s)
    if (!desc_->size_names[s])
      bad("size name");
  // The mesh axes' sizes come first, in order (the program's Sizes).
  for (int a = 0; a < numAxes_; ++a)
    if (desc_->axis_sizes[a] != static_cast<uint32_t>(a))
      bad("axis " + std::to_string(a) + "'s size");
  auto extentOk = [&](const cc_extent &e) {
    if (e.num_sizes && !e.sizes)
      return false;
    for (uint32_t k = 0; k < e.num_sizes; ++k)
      if (e.sizes[k] >= desc_->num_sizes)
        return false;
    return e.num_sizes <= kMaxCount;
  };
  for (int t = 0; t < numTables_; ++t) {
    const cc_table &tb = desc_->tables[t];
    if (!tb.name || !tb.length_name || tb.count_size >= desc_->num_sizes ||
        !extentOk(tb.length))
      bad("table " + std::to_string(t));
  }
  for (uint32_t r = 0; r < desc_->num_results; ++r)
    if (!desc_->results[r].name || desc_->results[r].block >= desc_->num_blocks)
      bad("result " + std::to_string(r));
  for (int i = 0; i < numBlocks_; ++i) {
    const cc_block &b = desc_->blocks[i];
    if (!b.name || !d_->names[i] || !b.type || b.kind < CC_BLOCK_TENSOR ||
        b.kind > CC_BLOCK_OUTPUT || b.dtype < 0 || b.dtype >= kNumDTypes ||
        b.rank > kMaxCount || (b.kind == CC_BLOCK_SCALAR && b.rank != 0) ||
        (b.rank && !b.shape) ||
        (b.kind != CC_BLOCK_SCALAR && numAxes_ && !b.layout) || b.table < -1 ||
        b.table >= numTables_)
      bad("parameter " + std::to_string(i));
    BlockView v;
    v.name = d_->names[i];
    v.kind = b.kind;
    v.dtype = b.dtype;
    v.rank = static_cast<int>(b.rank);
    v.written = b.written;
    v.type = b.type;
    v.segments = b.table >= 0 ? desc_->tables[b.table].name : "";
    for (uint32_t k = 0; k < b.rank; ++k) {
      const cc_extent &e = b.shape[k];
      if (!extentOk(e))
        bad("dims of " + std::string(v.name));
      v.dims.push_back(e.coefficient == 1 && e.num_sizes == 1
                           ? static_cast<int>(e.sizes[0])
                           : -1);
    }
    if (b.kind != CC_BLOCK_SCALAR)
      for (int a = 0; a < numAxes_; ++a) {
        const cc_axis_layout &l = b.layout[a];
        if (l.state == CC_AXIS_REPLICATED)
          v.layout.push_back(kReplicatedAxis);
        else if (l.state == CC_AXIS_LOCAL)
          v.layout.push_back(kLocalAxis);
        else if (l.state == CC_AXIS_SLICED && l.dim >= 0 && l.dim < v.rank)
          v.layout.push_back(l.dim);
        else
          bad("layout of " + std::string(v.name));
      }
    for (uint32_t r = 0; r < desc_->num_results; ++r)
      if (desc_->results[r].block == static_cast<uint32_t>(i))
        v.result = desc_->results[r].name;
    views_.push_back(std::move(v));
  }

  const std::string target = d_->target;
  if (target == "cpu") {
    deviceType_ = kDLCPU;
    hostAlsoPinned_ = true;
  } else if (target == "cuda") {
    deviceType_ = kDLCUDA;
    hostAlsoPinned_ = false;
  } else if (target == "cuda-emulated") {
    deviceType_ = kDLCPU;
    hostAlsoPinned_ = false;
  } else {
    raise(PyExc_ImportError,
          library + ": target '" + target + "' is not one this coconet knows");
  }

  for (int i = 0; i < numBlocks_; ++i) {
    Param p;
    p.p = &views_[i];
    p.name = p.p->name;
    if (p.tensor()) {
      p.dl = dlpackOf(p.p->dtype);
      p.dimOffset = totalDims_;
      totalDims_ += static_cast<size_t>(p.p->rank);
      for (uint32_t k = 0; k < desc_->blocks[i].rank; ++k)
        p.dims.push_back(
            extentText(desc_->blocks[i].shape[k], desc_->size_names));
      tensors_.push_back(i);
    } else {
      p.scalar = scalarKind(p.p->dtype);
    }
    params_.push_back(std::move(p));
  }
  const size_t n = params_.size();
  arrays_.resize(n);
  viaView_.assign(n, 0);
  outputs_.resize(n);
  scalars_.resize(n);
  args_.assign(n, nullptr);
}

int Program::sizeIndex(const std::string &name) const {
  for (int s = 0; s < numSizes_; ++s)
    if (name == desc_->size_names[s])
      return s;
  return -1;
}

std::string Program::sizeList() const {
  if (numSizes_ == 0)
    return "none";
  std::string s;
  for (int k = 0; k < numSizes_; ++k)
    s += (k ? ", " : "") + std::string(desc_->size_names[k]);
  return s;
}

/// An integer argument (sizes, tables): an int or anything with __index__,
/// not a bool or a float.
int64_t integer(nb::handle h, const std::string &what, const char *program) {
  if (PyBool_Check(h.ptr()) || isNumpyBool(h.ptr()) || !PyIndex_Check(h.ptr()))
    raise(PyExc_TypeError, std::string(program) + ": " + what +
                               ": expected an integer, got " + typeName(h));
  nb::object v = nb::steal(PyNumber_Index(h.ptr()));
  if (!v.is_valid()) {
    nb::python_error e;
    raise(PyExc_TypeError, std::string(program) + ": " + what +
                               ": expected an integer, got " + typeName(h) +
                               ": " + shownError(e));
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow)
    raise(PyExc_ValueError, std::string(program) + ": " + what + " = " +
                                intText(v) + " does not fit 64 bits");
  return x;
}

void Program::setSizes(nb::handle sizes, nb::handle tables) {
  const int ns = numSizes_;
  sizes_.assign(static_cast<size_t>(ns), 0);
  from_.assign(static_cast<size_t>(ns), kUnknown);
  if (!sizes.is_none()) {
    if (!PyDict_Check(sizes.ptr()))
      fail(PyExc_TypeError,
           "sizes: expected a dict {size name: int}, got " + typeName(sizes));
    for (auto [k, v] : nb::borrow<nb::dict>(sizes)) {
      if (!PyUnicode_Check(k.ptr()))
        fail(PyExc_TypeError,
             "sizes: a size's name is a str, got " + typeName(k));
      // A str that is not UTF-8 (a lone surrogate) is not a size's name.
      Py_ssize_t length = 0;
      const char *utf8 = PyUnicode_AsUTF8AndSize(k.ptr(), &length);
      if (!utf8)
        PyErr_Clear();
      const std::string name =
          utf8 ? std::string(utf8, static_cast<size_t>(length)) : "";
      const int s = utf8 ? sizeIndex(name) : -1;
      if (s < 0)
        fail(PyExc_ValueError, "sizes: " + shown(k) + " is not a size of " +
                                   desc_->name + "; its sizes are " +
                                   sizeList());
      const int64_t x = integer(v, "size '" + name + "'", desc_->name);
      if (x <= 0)
        fail(PyExc_ValueError, "size '" + name + "' = " + std::to_string(x) +
                                   ": sizes must be positive");
      sizes_[s] = x;
      from_[s] = kGiven;
    }
  }
  if (!tables.is_none() && !PyDict_Check(tables.ptr()))
    fail(PyExc_TypeError,
         "tables: expected a dict {table name: sequence of ints}, got " +
             typeName(tables));
  nb::dict tdict = tables.is_none() ? nb::dict() : nb::borrow<nb::dict>(tables);
  for (auto [k, v] : tdict) {
    (void)v;
    bool known = false;
    for (int t = 0; t < numTables_; ++t)
      known |=
          PyUnicode_Check(k.ptr()) &&
          PyUnicode_CompareWithASCIIString(k.ptr(), desc_->tables[t].name) == 0;
    if (!known) {
      std::string names;
      for (int t = 0; t < numTables_; ++t)
        names += (t ? ", " : "") + std::string(desc_->tables[t].name);
      fail(PyExc_ValueError, "tables: " + shown(k) + " is not a table of " +
                                 desc_->name + "; its tables are " +
                                 (names.empty() ? "none" : names));
    }
  }
  tables_.assign(static_cast<size_t>(numTables_), {});
  for (int t = 0; t < numTables_; ++t) {
    const cc_table &tb = desc_->tables[t];
    const std::string tname = tb.name;
    PyObject *v = PyDict_GetItemString(tdict.ptr(), tb.name);
    if (!v)
      fail(PyExc_ValueError,
           "the table '" + tname + "' is required: tables={'" + tname +
               "': [...]} (its " +
               desc_->size_names[static_cast<int>(tb.count_size)] +
               " lengths, summing to " +
               (tb.length_name ? tb.length_name : "?") + ")");
    nb::handle hv(v);
    if (PyUnicode_Check(v) || PyBytes_Check(v) || !PySequence_Check(v))
      fail(PyExc_TypeError, "table '" + tname +
                                "': expected a sequence of ints, got " +
                                typeName(hv));
    // An array (NumPy's, anything with a shape) is a table when it has
    // one dimension: a 2-D one is a sequence of rows, which would reach
    // the converter's own TypeError below.
    if (PyObject_HasAttrString(v, "ndim") &&
        PyObject_HasAttrString(v, "shape")) {
      nb::object ndim = nb::steal(PyObject_GetAttrString(v, "ndim"));
      if (!ndim.is_valid())
        throw nb::python_error();
      long nd = PyLong_Check(ndim.ptr()) ? PyLong_AsLong(ndim.ptr()) : -1;
      if (nd != 1) {
        nb::object shape = nb::steal(PyObject_GetAttrString(v, "shape"));
        fail(PyExc_ValueError,
             "table '" + tname + "': expected a 1-D sequence of lengths, got " +
                 typeName(hv) + " of shape " +
                 (shape.is_valid() ? shown(shape, false) : "?"));
      }
    }
    const Py_ssize_t len = PySequence_Size(v);
    if (len < 0)
      throw nb::python_error();
    std::vector<int64_t> &out = tables_[static_cast<size_t>(t)];
    out.reserve(static_cast<size_t>(len));
    for (Py_ssize_t e = 0; e < len; ++e) {
      nb::object item = nb::steal(PySequence_GetItem(v, e));
      if (!item.is_valid())
        throw nb::python_error();
      const std::string what =
          "table '" + tname + "'[" + std::to_string(e) + "]";
      const int64_t length = integer(item, what, desc_->name);
      // Checked here, as every argument is, not first by create().
      if (length < 0)
        fail(PyExc_ValueError, what + " = " + std::to_string(length) +
                                   ": a segment's length is 0 or more");
      out.push_back(length);
    }
    const int c = static_cast<int>(tb.count_size);
    if (from_[c] == kGiven && sizes_[c] != len)
      fail(PyExc_ValueError,
           "the table '" + tname + "' has " + std::to_string(len) +
               " entries, but sizes gives " + desc_->size_names[c] + "=" +
               std::to_string(sizes_[c]));
    if (len <= 0)
      fail(PyExc_ValueError, "the table '" + tname + "' is empty: " +
                                 desc_->size_names[c] + " must be positive");
    sizes_[c] = len;
    from_[c] = kTable;
  }
}

void Program::settleAxes() {
  const int na = numAxes_;
  if (na == 0)
    return;
  int missing = -1, nmissing = 0;
  int64_t product = 1;
  for (int a = 0; a < na; ++a) {
    if (sizes_[a] == 0) {
      missing = a;
      ++nmissing;
    } else {
      product *= sizes_[a];
    }
  }
  auto axes = [&] {
    std::string s;
    for (int a = 0; a < na; ++a)
      s += (a ? ", " : "") + std::string(desc_->size_names[a]) + "=" +
           (sizes_[a] ? std::to_string(sizes_[a]) : "?");
    return s;
  };
  if (nmissing > 1)
    fail(PyExc_ValueError,
         "the mesh has " + std::to_string(na) + " axes (" + axes() +
             "): give the sizes of all of them but one, e.g. sizes={'" +
             desc_->size_names[missing] + "': ...}");
  if (nmissing == 1) {
    if (size_ % product != 0)
      fail(PyExc_ValueError, "the mesh axes " + axes() + " do not divide the " +
                                 std::to_string(size_) +
                                 " ranks of the communicator");
    sizes_[missing] = size_ / product;
    from_[missing] = kRanks;
    product *= sizes_[missing];
  }
  if (product != size_)
    fail(PyExc_ValueError,
         "the mesh axes " + axes() + " make " + std::to_string(product) +
             " ranks; the communicator has " + std::to_string(size_));
}

Program::Program(const std::string &library, int64_t comm, nb::handle stream,
                 nb::handle sizes, nb::handle tables, nb::object allocate,
                 nb::object keep)
    : comm_(comm), allocate_(std::move(allocate)), keep_(std::move(keep)) {
  load(library);
  // The CUDA target's world is a cc_py_nccl * (coconet.NcclCommunicator's
  // handle): never MPI's -1 or null.
  if (std::string(d_->target) != "cpu" && (comm_ == -1 || comm_ == 0))
    fail(PyExc_ValueError,
         "the " + std::string(d_->target) +
             " target runs on an NCCL communicator: pass "
             "coconet.NcclCommunicator(...).handle (the generated Step "
             "makes one)");
  if (!stream.is_none()) {
    void *p = PyLong_AsVoidPtr(stream.ptr());
    if (!p && PyErr_Occurred())
      throw nb::python_error();
    stream_ = p;
  }
  char err[4096] = "";
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->world(comm_, &rank_, &size_, err, sizeof err);
  }
  if (rc)
    fail(PyExc_RuntimeError, err);
  if (deviceType_ == kDLCUDA && comm_ != 0 && comm_ != -1)
    device_ = reinterpret_cast<const cc_py_nccl *>(static_cast<intptr_t>(comm_))
                  ->device;
  setSizes(sizes, tables);
  settleAxes();
  bool all = true;
  for (int64_t s : sizes_)
    all &= s > 0;
  if (all)
    placeAndCreate(sizes_, from_);
}

Program::~Program() {
  if (program_)
    d_->destroy(program_);
}

void Program::place(const std::vector<int64_t> &sizes,
                    std::vector<int64_t> &shape,
                    std::vector<int64_t> &offset) const {
  shape.assign(totalDims_ ? totalDims_ : 1, 0);
  offset.assign(totalDims_ ? totalDims_ : 1, 0);
  char err[4096] = "";
  if (d_->place(sizes.data(), rank_, shape.data(), offset.data(), err,
                sizeof err))
    fail(PyExc_ValueError, err);
}

void Program::placeAndCreate(const std::vector<int64_t> &sizes,
                             const std::vector<int> &from) {
  std::vector<int64_t> shape, offset;
  place(sizes, shape, offset);
  std::vector<const int64_t *> tables;
  for (const auto &t : tables_)
    tables.push_back(t.data());
  char err[4096] = "";
  void *out = nullptr;
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->create(comm_, sizes.data(),
                    tables.empty() ? nullptr : tables.data(), stream_, &out,
                    err, sizeof err);
  }
  if (rc)
    fail(PyExc_RuntimeError, err);
  program_ = out;
  sizes_ = sizes;
  from_ = from;
  shape_ = std::move(shape);
  offset_ = std::move(offset);
}

void Program::create() {
  if (program_)
    return;
  for (int s = 0; s < numSizes_; ++s)
    if (sizes_[s] == 0)
      fail(PyExc_ValueError,
           std::string("cannot create it before size '") +
               desc_->size_names[s] +
               "' is known: call it with arrays, or give sizes={'" +
               desc_->size_names[s] + "': ...}");
  placeAndCreate(sizes_, from_);
}

void Program::synchronize() {
  if (!d_->synchronize) // the CPU target: a step has run when it returns
    return;
  char err[4096] = "";
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->synchronize(stream_, err, sizeof err);
  }
  if (rc)
    fail(PyExc_RuntimeError, err);
}

// The sizes not yet known, read from the arrays taken (see the class's
// comment in python_abi.h): shape[d] times the sizes of the axes that slice
// dimension d.
void Program::deduce(std::vector<int64_t> &sizes,
                     std::vector<int> &from) const {
  sizes = sizes_;
  from = from_;
  for (int i : tensors_) {
    const nb::ndarray<> &a = arrays_[i];
    const BlockView &p = *params_[i].p;
    if (!a.is_valid() || static_cast<int>(a.ndim()) != p.rank)
      continue;
    for (int k = 0; k < p.rank; ++k) {
      const int s = p.dims[k];
      if (s < 0 || sizes[s] != 0)
        continue;
      int64_t extent = static_cast<int64_t>(a.shape(static_cast<size_t>(k)));
      for (int ax = 0; ax < numAxes_; ++ax)
        if (p.layout[ax] == k)
          extent *= sizes[ax];
      if (extent <= 0)
        fail(PyExc_ValueError, "size '" + std::string(desc_->size_names[s]) +
                                   "' = " + std::to_string(extent) + " (from " +
                                   q(i) + ", shape " +
                                   tupleText(a.shape_ptr(), a.ndim()) +
                                   "): sizes must be positive");
      sizes[s] = extent;
      from[s] = i;
    }
  }
  for (int s = 0; s < numSizes_; ++s)
    if (sizes[s] == 0)
      fail(PyExc_ValueError,
           std::string("cannot tell size '") + desc_->size_names[s] +
               "' from the arrays: give it when creating the program: "
               "sizes={'" +
               desc_->size_names[s] + "': ...}");
}

// Takes argument i (a tensor or an output) as an array: arrays_[i].
void Program::take(int i, nb::handle h) {
  const Param &p = params_[i];
  viaView_[i] = 0;
  if (p.p->written) {
    if (nb::try_cast(h, arrays_[i], false))
      return;
    nb::ndarray<nb::ro> ro;
    if (nb::try_cast(h, ro, false))
      fail(PyExc_ValueError,
           q(i) + " is updated in place, but the array is read-only");
  } else {
    nb::ndarray<nb::ro> ro;
    if (nb::try_cast(h, ro, false)) {
      arrays_[i] = nb::ndarray<>(ro);
      return;
    }
  }
  // PyTorch before 2.x exports no bool tensor through DLPack: its bytes are
  // taken as uint8 (the same memory).
  bool torchBool = false;
  if (kDTypes[p.p->dtype].kind == 'B' && nb::hasattr(h, "dtype")) {
    try {
      torchBool = shown(h.attr("dtype"), false) == "torch.bool";
    } catch (nb::python_error &) { // a dtype that raises is not torch's
    }
  }
  if (torchBool) {
    nb::object view =
        h.attr("view")(nb::module_::import_("torch").attr("uint8"));
    if (nb::try_cast(view, arrays_[i], false)) {
      viaView_[i] = 1;
      return;
    }
  }
  // Why not: what the object's own __dlpack__ says, where it has one.
  if (nb::hasattr(h, "__dlpack__")) {
    std::string why;
    try {
      h.attr("__dlpack__")();
    } catch (nb::python_error &e) {
      why = shownError(e);
    }
    if (!why.empty())
      fail(PyExc_TypeError, q(i) + ": its " + typeName(h) +
                                " cannot be taken through DLPack: " + why);
  }
  fail(PyExc_TypeError,
       q(i) +
           ": expected an array (anything with __dlpack__ or the "
           "buffer protocol: NumPy, PyTorch, ...), got " +
           typeName(h));
}

// The checks of an array that need no sizes: element type, number of
// dimensions, device, layout in memory.
void Program::check(int i) const {
  const Param &p = params_[i];
  const nb::ndarray<> &a = arrays_[i];
  const nb::dlpack::dtype dt = a.dtype();
  const bool boolAsBytes =
      viaView_[i] &&
      dt == nb::dlpack::dtype{
                static_cast<uint8_t>(nb::dlpack::dtype_code::UInt), 8, 1};
  if (dt != p.dl && !boolAsBytes)
    fail(PyExc_TypeError,
         "parameter " + q(i) + ": expected " + kDTypes[p.p->dtype].name + " (" +
             numpyName(p.p->dtype) + "), got " + dlpackName(dt));
  if (static_cast<int>(a.ndim()) != p.p->rank)
    fail(PyExc_ValueError,
         q(i) + ": " + p.p->type + " has " + std::to_string(p.p->rank) +
             (p.p->rank == 1 ? " dimension" : " dimensions") +
             "; got an array of shape " + tupleText(a.shape_ptr(), a.ndim()));
  const int dev = a.device_type();
  bool deviceOk = dev == deviceType_ || (hostAlsoPinned_ && dev == kDLCUDAHost);
  if (deviceOk && dev == kDLCUDA && device_ >= 0 && a.device_id() != device_)
    deviceOk = false;
  if (!deviceOk) {
    std::string want;
    if (deviceType_ == kDLCUDA)
      want = "the cuda target takes arrays on " +
             (device_ >= 0 ? deviceName(kDLCUDA, device_) +
                                 " (the communicator's device)"
                           : std::string("a CUDA device"));
    else if (hostAlsoPinned_)
      want = std::string("the ") + d_->target + " target takes host arrays";
    else
      want =
          std::string("the ") + d_->target + " target takes host (cpu) arrays";
    fail(PyExc_ValueError,
         q(i) + " is on " + deviceName(dev, a.device_id()) + "; " + want);
  }
  const int64_t *strides = a.stride_ptr();
  if (strides) {
    int64_t expect = 1;
    bool contiguous = true;
    for (size_t k = a.ndim(); k-- > 0;) {
      const int64_t extent = static_cast<int64_t>(a.shape(k));
      if (extent > 1 && strides[k] != expect)
        contiguous = false;
      expect *= extent;
    }
    if (!contiguous)
      fail(PyExc_ValueError, q(i) + " is not contiguous (strides " +
                                 tupleText(strides, a.ndim()) +
                                 "): pass a contiguous array (e.g. "
                                 ".contiguous() / np.ascontiguousarray)");
  }
  const size_t bytes = static_cast<size_t>(kDTypes[p.p->dtype].bytes);
  if (reinterpret_cast<uintptr_t>(a.data()) % bytes != 0 && a.size() > 0)
    fail(PyExc_ValueError, q(i) + " is not aligned to its element size (" +
                               std::to_string(bytes) +
                               " bytes): pass an aligned copy");
}

// "N=1024 from 'g'" for each size named in `text`, those read from another
// parameter than i saying which.
std::string Program::sizeNote(const std::string &text, int i,
                              const std::vector<int64_t> &sizes,
                              const std::vector<int> &from) const {
  std::string note;
  std::vector<int> seen;
  for (const std::string &id : identifiers(text)) {
    const int s = sizeIndex(id);
    if (s < 0 || std::find(seen.begin(), seen.end(), s) != seen.end())
      continue;
    seen.push_back(s);
    note += (note.empty() ? "" : ", ") + id + "=" + std::to_string(sizes[s]);
    if (from[s] >= 0 && from[s] != i)
      note += " from " + q(from[s]);
    else if (from[s] == kRanks)
      note += " (the number of ranks)";
    else if (from[s] == kTable)
      note += " (the table's length)";
  }
  return note;
}

void Program::checkShape(int i, const int64_t *shape, const int64_t *offset,
                         const std::vector<int64_t> &sizes,
                         const std::vector<int> &from) const {
  const Param &p = params_[i];
  const nb::ndarray<> &a = arrays_[i];
  const int r = p.p->rank;
  bool same = true;
  for (int k = 0; k < r; ++k)
    same &= static_cast<int64_t>(a.shape(static_cast<size_t>(k))) == shape[k];
  if (same)
    return;
  // What the block is, the sizes in effect and where they came from.
  auto dimText = [&](int k) {
    return p.dims.empty() ? "dimension " + std::to_string(k)
                          : p.dims[static_cast<size_t>(k)];
  };
  auto global = [&](int k) {
    int64_t g = shape[k];
    for (int ax = 0; ax < numAxes_; ++ax)
      if (p.p->layout[ax] == k)
        g *= sizes[ax];
    return g;
  };
  auto sliced = [&](int k) {
    for (int ax = 0; ax < numAxes_; ++ax)
      if (p.p->layout[ax] == k)
        return true;
    return false;
  };
  std::vector<std::string> ranges, notes;
  for (int k = 0; k < r; ++k) {
    const std::string text = dimText(k);
    std::string named = text + "=" + std::to_string(global(k));
    if (p.p->dims[k] >= 0) {
      const int s = p.p->dims[k];
      if (from[s] >= 0 && from[s] != i)
        named += " from " + q(from[s]);
      else if (from[s] == kRanks)
        named += " (the number of ranks)";
      else if (from[s] == kTable)
        named += " (the table's length)";
    } else {
      const std::string inner = sizeNote(text, i, sizes, from);
      if (!inner.empty())
        named += " (" + inner + ")";
    }
    if (sliced(k))
      ranges.push_back("[" + std::to_string(offset[k]) + ", " +
                       std::to_string(offset[k] + shape[k]) + ") of " + named);
    else if (static_cast<int64_t>(a.shape(static_cast<size_t>(k))) !=
                 shape[k] ||
             r == 1)
      notes.push_back(named);
  }
  std::string m = q(i) + ": " + p.p->type + ": ";
  if (!ranges.empty()) {
    m += "this rank (" + std::to_string(rank_) + " of " +
         std::to_string(size_) + ") holds elements ";
    for (size_t k = 0; k < ranges.size(); ++k)
      m += (k ? " and " : "") + ranges[k];
    m += ", a block of shape " + tupleText(shape, static_cast<size_t>(r));
  } else {
    m += "expected shape " + tupleText(shape, static_cast<size_t>(r));
  }
  if (!notes.empty()) {
    m += " (";
    for (size_t k = 0; k < notes.size(); ++k)
      m += (k ? ", " : "") + notes[k];
    m += ")";
  }
  m += "; got shape " + tupleText(a.shape_ptr(), a.ndim());
  fail(PyExc_ValueError, m);
}

void Program::scalar(int i, nb::handle h) {
  const Param &p = params_[i];
  PyObject *o = h.ptr();
  ScalarValue &v = scalars_[i];
  const char *dt = kDTypes[p.p->dtype].name;
  const bool isBool = PyBool_Check(o) || isNumpyBool(o);
  switch (p.scalar) {
  case ScalarKind::Float:
  case ScalarKind::Double: {
    double x;
    if (PyFloat_Check(o)) {
#if defined(Py_LIMITED_API)
      x = PyFloat_AsDouble(o);
#else
      x = PyFloat_AS_DOUBLE(o);
#endif
    } else if (isBool || PyUnicode_Check(o) || PyBytes_Check(o) ||
               !numberLike(o)) {
      fail(PyExc_TypeError,
           q(i) + ": expected a number (" + dt + "), got " + typeName(h));
    } else {
      x = PyFloat_AsDouble(o);
      if (x == -1.0 && PyErr_Occurred()) {
        // An int past a double's range is a value out of range; anything
        // else that would not convert is not a number (the converter's
        // own message, e.g. torch's, after ours).
        const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
        nb::python_error e;
        if (overflow)
          fail(PyExc_ValueError,
               q(i) + " = " + (PyLong_Check(o) ? intText(h) : "it") +
                   " is out of the range of " + dt + " (largest finite value " +
                   coconet::rt::largestFinite(
                       static_cast<coconet::rt::DType>(p.p->dtype)) +
                   ")");
        fail(PyExc_TypeError, q(i) + ": expected a number (" + dt + "), got " +
                                  typeName(h) + ": " + shownError(e));
      }
    }
    // The rule of `--set` (coconet/values.h): a finite number that
    // overflows the declared type, or a non-zero one that rounds to 0 in
    // it, is refused; infinities and NaN given as such pass.
    if (const std::string why = floatRangeProblem(p.p->dtype, x); !why.empty())
      fail(PyExc_ValueError,
           q(i) + " = " + coconet::rt::numberText(x) + " " + why);
    if (p.scalar == ScalarKind::Float)
      v.f = static_cast<float>(x);
    else
      v.d = x;
    return;
  }
  case ScalarKind::Bool:
    if (!isBool)
      fail(PyExc_TypeError, q(i) + ": expected a bool, got " + typeName(h));
    v.b = PyObject_IsTrue(o) == 1;
    return;
  default:
    break;
  }
  // Integers: int, or anything with __index__ (NumPy's and PyTorch's
  // integers), not a bool or a float.
  if (isBool || !PyIndex_Check(o))
    fail(PyExc_TypeError,
         q(i) + ": expected an integer (" + dt + "), got " + typeName(h));
  nb::object n = nb::steal(PyLong_Check(o) ? nb::handle(o).inc_ref().ptr()
                                           : PyNumber_Index(o));
  if (!n.is_valid()) {
    // __index__ refused (torch.tensor(1.5), a NumPy array of several
    // elements): our TypeError naming the parameter, the converter's
    // message after it.
    nb::python_error e;
    fail(PyExc_TypeError, q(i) + ": expected an integer (" + dt + "), got " +
                              typeName(h) + ": " + shownError(e));
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
  bool fits = overflow == 0;
  switch (p.scalar) {
  case ScalarKind::I32:
    fits = fits && x >= INT32_MIN && x <= INT32_MAX;
    v.i32 = static_cast<int32_t>(x);
    break;
  case ScalarKind::I64:
    v.i64 = x;
    break;
  default: // U64
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(n.ptr());
      fits = !(u == static_cast<unsigned long long>(-1) && PyErr_Occurred());
      PyErr_Clear();
      v.u64 = u;
    } else {
      fits = fits && x >= 0;
      v.u64 = static_cast<uint64_t>(x);
    }
  }
  if (!fits)
    fail(PyExc_ValueError, q(i) + " = " + intText(n) + " does not fit " + dt);
}

nb::object Program::call(nb::args args) {
  const size_t n = params_.size();
  if (args.size() != n) {
    std::string names;
    for (size_t i = 0; i < n; ++i)
      names += (i ? ", " : "") + params_[i].name;
    raise(PyExc_TypeError, std::string(desc_->name) + "() takes " +
                               std::to_string(n) +
                               (n == 1 ? " argument (" : " arguments (") +
                               names + "), got " + std::to_string(args.size()));
  }
  if (busy_)
    fail(PyExc_RuntimeError,
         "called while it runs (from another thread, or from "
         "its allocate function): a program runs one step at a time");
  busy_ = true;
  struct Reset {
    Program &p;
    ~Reset() {
      for (int i : p.tensors_) {
        p.arrays_[i] = nb::ndarray<>();
        p.outputs_[i] = nb::object();
      }
      p.busy_ = false;
    }
  } reset{*this};

  // Every argument taken and checked (all but the shapes); nothing runs
  // until all are.
  bool missingOutput = false;
  PyObject *like = nullptr;
  for (size_t i = 0; i < n; ++i) {
    const int ii = static_cast<int>(i);
    nb::handle h = args[i];
    const int kind = params_[i].p->kind;
    if (kind == CC_BLOCK_SCALAR) {
      scalar(ii, h);
      args_[i] = &scalars_[i];
      continue;
    }
    if (kind == CC_BLOCK_OUTPUT && h.is_none()) {
      missingOutput = true;
      continue;
    }
    if (kind == CC_BLOCK_TENSOR && !like)
      like = h.ptr();
    take(ii, h);
    check(ii);
  }

  // The sizes, at the first call: those not given read from the arrays.
  const int64_t *shape = shape_.data();
  const int64_t *offset = offset_.data();
  const std::vector<int64_t> *sizes = &sizes_;
  const std::vector<int> *from = &from_;
  if (!program_) {
    deduce(trySizes_, tryFrom_);
    place(trySizes_, tryShape_, tryOffset_);
    shape = tryShape_.data();
    offset = tryOffset_.data();
    sizes = &trySizes_;
    from = &tryFrom_;
  }
  for (int i : tensors_)
    if (arrays_[i].is_valid())
      checkShape(i, shape + params_[i].dimOffset, offset + params_[i].dimOffset,
                 *sizes, *from);

  // Outputs passed as None: allocated like the first tensor argument.
  if (missingOutput) {
    if (!allocate_.is_valid() || allocate_.is_none())
      allocate_ = nb::module_::import_("coconet.runtime").attr("allocate");
    for (int i : tensors_) {
      if (params_[i].p->kind != CC_BLOCK_OUTPUT || !args[i].is_none())
        continue;
      const Param &p = params_[i];
      nb::list dims;
      for (int k = 0; k < p.p->rank; ++k)
        dims.append(shape[p.dimOffset + static_cast<size_t>(k)]);
      nb::object made = allocate_(nb::tuple(dims), numpyName(p.p->dtype),
                                  nb::handle(like ? like : Py_None));
      take(i, made);
      check(i);
      checkShape(i, shape + p.dimOffset, offset + p.dimOffset, *sizes, *from);
      outputs_[i] = std::move(made);
    }
  }

  // No written array shares memory with another argument.
  for (size_t x = 0; x < tensors_.size(); ++x) {
    const int i = tensors_[x];
    const nb::ndarray<> &a = arrays_[i];
    const size_t an = a.nbytes();
    if (!an)
      continue;
    const auto a0 = reinterpret_cast<uintptr_t>(a.data());
    for (size_t y = x + 1; y < tensors_.size(); ++y) {
      const int j = tensors_[y];
      if (!params_[i].p->written && !params_[j].p->written)
        continue;
      const nb::ndarray<> &b = arrays_[j];
      const size_t bn = b.nbytes();
      const auto b0 = reinterpret_cast<uintptr_t>(b.data());
      if (!bn || a0 >= b0 + bn || b0 >= a0 + an)
        continue;
      const int w = params_[i].p->written ? i : j;
      fail(PyExc_ValueError, q(i) + " and " + q(j) + " share memory, and " +
                                 q(w) +
                                 (params_[w].p->kind == CC_BLOCK_OUTPUT
                                      ? " is written"
                                      : " is updated in place") +
                                 ": pass distinct arrays");
    }
  }

  if (!program_)
    placeAndCreate(trySizes_, tryFrom_);

  for (int i : tensors_)
    args_[i] = arrays_[i].data();
  char err[4096];
  err[0] = '\0';
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->step(program_, args_.data(), err, sizeof err);
  }
  if (rc)
    fail(PyExc_RuntimeError, err);

  size_t nout = 0;
  for (int i : tensors_)
    nout += params_[i].p->kind == CC_BLOCK_OUTPUT;
  nb::object result = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(nout)));
  if (!result.is_valid())
    throw nb::python_error();
  Py_ssize_t k = 0;
  for (int i : tensors_) {
    if (params_[i].p->kind != CC_BLOCK_OUTPUT)
      continue;
    nb::handle out = outputs_[i].is_valid() ? nb::handle(outputs_[i])
                                            : args[static_cast<size_t>(i)];
#if defined(Py_LIMITED_API)
    PyTuple_SetItem(result.ptr(), k++, out.inc_ref().ptr());
#else
    PyTuple_SET_ITEM(result.ptr(), k++, out.inc_ref().ptr());
#endif
  }
  return result;
}

nb::dict Program::sizes() const {
  nb::dict out;
  for (int s = 0; s < numSizes_; ++s)
    if (sizes_[s] > 0)
      out[desc_->size_names[s]] = sizes_[s];
  return out;
}

nb::object Program::path() const {
  if (!program_ || !d_->path)
    return nb::none();
  const char *p = d_->path(program_);
  if (!p)
    return nb::none();
  return nb::str(p);
}

nb::dict Program::info() const {
  nb::dict out;
  out["name"] = desc_->name;
  out["program"] = desc_->program;
  out["schedule"] = desc_->schedule;
  out["target"] = d_->target;
  out["source"] = d_->source;
  out["library"] = library_;
  nb::list sizes;
  for (int s = 0; s < numSizes_; ++s)
    sizes.append(desc_->size_names[s]);
  out["sizes"] = sizes;
  out["num_axes"] = numAxes_;
  static const char *kinds[] = {"tensor", "scalar", "output"};
  nb::list params;
  for (const Param &pp : params_) {
    const BlockView &p = *pp.p;
    nb::dict d;
    d["name"] = p.name;
    d["kind"] = kinds[p.kind];
    d["dtype"] = kDTypes[p.dtype].name;
    d["numpy_dtype"] = numpyName(p.dtype);
    d["rank"] = p.rank;
    d["written"] = p.written != 0;
    nb::list dims, layout;
    for (int k = 0; k < p.rank; ++k) {
      if (p.dims[k] >= 0)
        dims.append(desc_->size_names[p.dims[k]]);
      else
        dims.append(nb::none());
    }
    if (p.kind != CC_BLOCK_SCALAR)
      for (int a = 0; a < numAxes_; ++a) {
        const int l = p.layout[a];
        if (l == kReplicatedAxis)
          layout.append("replicated");
        else if (l == kLocalAxis)
          layout.append("local");
        else
          layout.append(l);
      }
    d["dims"] = dims;
    d["layout"] = layout;
    d["type"] = p.type;
    d["segments"] = p.segments;
    d["result"] = p.result;
    params.append(d);
  }
  out["params"] = params;
  nb::list tables;
  for (int t = 0; t < numTables_; ++t) {
    nb::dict d;
    d["name"] = desc_->tables[t].name;
    d["count"] =
        desc_->size_names[static_cast<int>(desc_->tables[t].count_size)];
    d["length"] =
        desc_->tables[t].length_name ? desc_->tables[t].length_name : "";
    tables.append(d);
  }
  out["tables"] = tables;
  return out;
}

nb::tuple Program::block(const std::string &name) const {
  int found = -1;
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].name == name)
      found = static_cast<int>(i);
  if (found < 0 || !params_[found].tensor()) {
    std::string names;
    for (int i : tensors_)
      names += (names.empty() ? "" : ", ") + params_[i].name;
    fail(PyExc_ValueError, "block(): '" + name +
                               "' is not a tensor parameter or output; "
                               "those are " +
                               (names.empty() ? "none" : names));
  }
  if (!program_)
    fail(PyExc_ValueError,
         "block(): not created yet (its sizes are not all known): "
         "call it once, or give every size and create()");
  const Param &p = params_[found];
  nb::list off, shp;
  for (int k = 0; k < p.p->rank; ++k) {
    off.append(offset_[p.dimOffset + static_cast<size_t>(k)]);
    shp.append(shape_[p.dimOffset + static_cast<size_t>(k)]);
  }
  return nb::make_tuple(nb::tuple(off), nb::tuple(shp));
}

std::string Program::repr() const {
  return std::string("<coconet.Program ") + desc_->name + ": rank " +
         std::to_string(rank_) + " of " + std::to_string(size_) +
         (program_ ? ", created" : ", not created yet") + ">";
}

/// The description of `library`, which must be a CUDA target's (the
/// runtime entry points of python_abi.h).
const cc_py_program &cudaLibrary(Program &p, const std::string &library,
                                 const char *what) {
  p.load(library);
  const cc_py_program &d = p.description();
  if (!d.nccl_init)
    raise(PyExc_ValueError, std::string(what) + ": " + shownText(library) +
                                " is a " + d.target +
                                " target program's library: NCCL and CUDA "
                                "streams are the cuda target's");
  return d;
}

int deviceCount(const std::string &library) {
  Program p;
  const cc_py_program &d = cudaLibrary(p, library, "device_count");
  char err[4096] = "";
  int count = 0;
  if (d.device_count(&count, err, sizeof err))
    raise(PyExc_RuntimeError, err);
  return count;
}

nb::bytes ncclUniqueId(const std::string &library) {
  Program p;
  const cc_py_program &d = cudaLibrary(p, library, "nccl_unique_id");
  char id[CC_PY_NCCL_ID_BYTES];
  char err[4096] = "";
  if (d.nccl_unique_id(id, err, sizeof err))
    raise(PyExc_RuntimeError, err);
  return nb::bytes(id, sizeof id);
}

uintptr_t ncclInit(const std::string &library, nb::bytes id, int rank, int size,
                   int device) {
  Program p;
  const cc_py_program &d = cudaLibrary(p, library, "nccl_init");
  if (id.size() != CC_PY_NCCL_ID_BYTES)
    raise(PyExc_ValueError, "nccl_init: an NCCL unique id is " +
                                std::to_string(CC_PY_NCCL_ID_BYTES) +
                                " bytes, got " + std::to_string(id.size()));
  std::string bytes(id.c_str(), id.size());
  char err[4096] = "";
  cc_py_nccl *world = nullptr;
  int rc = 0;
  {
    nb::gil_scoped_release release; // collective: the other ranks may be
                                    // Python threads of this process
    rc = d.nccl_init(bytes.data(), rank, size, device, &world, err, sizeof err);
  }
  if (rc)
    raise(PyExc_RuntimeError, err);
  return reinterpret_cast<uintptr_t>(world);
}

void ncclDestroy(const std::string &library, uintptr_t world) {
  Program p;
  const cc_py_program &d = cudaLibrary(p, library, "nccl_destroy");
  nb::gil_scoped_release release;
  d.nccl_destroy(reinterpret_cast<cc_py_nccl *>(world));
}

} // namespace

NB_MODULE(_core, m) {
  m.doc() = "coconet._core: loads and calls a coconetc-generated program's "
            "library (coconet/python_abi.h)";
  nb::set_leak_warnings(false);
  m.attr("ABI") = COCONET_PY_ABI;
  m.def(
      "describe",
      [](const std::string &library) {
        Program p;
        p.load(library);
        return p.info();
      },
      "library"_a,
      "The description of a program's library (Program.info) without a "
      "communicator: nothing is created, MPI is not touched.");
  // The CUDA target's runtime, through a program's library (python_abi.h):
  // what coconet.NcclCommunicator is made of.
  m.def("device_count", &deviceCount, "library"_a,
        "The number of CUDA devices this process sees (cudaGetDeviceCount), "
        "through a cuda target program's library.");
  m.def("nccl_unique_id", &ncclUniqueId, "library"_a,
        "A new NCCL unique id (ncclGetUniqueId): 128 bytes for every rank "
        "of the communicator-to-be.");
  m.def("nccl_init", &ncclInit, "library"_a, "unique_id"_a, "rank"_a, "size"_a,
        "device"_a,
        "ncclCommInitRank on `device`, collective over the `size` ranks "
        "given `unique_id`: the address of a new cc_py_nccl (the handle "
        "Program takes as comm), for nccl_destroy.");
  m.def("nccl_destroy", &ncclDestroy, "library"_a, "world"_a,
        "Destroys a communicator nccl_init made (ncclCommDestroy).");
  nb::class_<Program>(m, "Program",
                      "A coconetc-generated program, loaded from its library "
                      "(_NAME.so) and called with arrays (DLPack).")
      .def(nb::init<const std::string &, int64_t, nb::handle, nb::handle,
                    nb::handle, nb::object, nb::object>(),
           "library"_a, "comm"_a = -1, "stream"_a = 0, "sizes"_a = nb::none(),
           "tables"_a = nb::none(), "allocate"_a = nb::none(),
           "keep"_a = nb::none())
      .def("__call__", &Program::call)
      .def(
          "create", &Program::create,
          "Creates the program now (collective over the communicator's ranks); "
          "every size must be known.")
      .def("synchronize", &Program::synchronize,
           "Waits until every step enqueued on the program's stream has run "
           "(cudaStreamSynchronize); nothing on the CPU target.")
      .def("block", &Program::block, "name"_a,
           "(offset, shape) of this rank's block of a tensor parameter or "
           "output.")
      .def("__repr__", &Program::repr)
      .def_prop_ro("rank", &Program::rank)
      .def_prop_ro("world_size", &Program::worldSize)
      .def_prop_ro("created", &Program::created)
      .def_prop_ro("sizes", &Program::sizes)
      .def_prop_ro("path", &Program::path)
      .def_prop_ro("name", &Program::name)
      .def_prop_ro("info", &Program::info);
}
