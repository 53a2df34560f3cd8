//===- program.h - coconet._core.Program: a loaded program ------*- C++ -*-===//
//
// Private to coconet._core (runtime/python/). Program: a program's shared
// library (_NAME.so) loaded and its description checked (program_load.cpp),
// its sizes settled (given, from the number of ranks, from a table or from
// the first call's arrays) and the program created (program_sizes.cpp), and
// its step called with the caller's arrays once every one is checked
// (program_call.cpp). Then the CUDA target's runtime, called through a
// program's library (communicators.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_PYTHON_PROGRAM_H
#define COCONET_RUNTIME_PYTHON_PROGRAM_H

#include "core_messages.h"
#include "core_types.h"
#include "ffi_call.h"

#include "coconet/python_abi.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace coconet::py {

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
  // Per mesh axis: kReplicatedAxis, kLocalAxis or the sliced dimension (a
  // scalar: replicated or local, where the description gives its layout).
  std::vector<int> layout;
  const char *type;     // as declared: "f32[N] sliced(0)"
  std::string segments; // its segment table's name, or ""
  std::string result;   // the result it holds after a step, or ""
};

/// Where a size's value came from: not known yet, given (sizes=), the
/// number of ranks (the one mesh axis not given), a table's length, or the
/// array of parameter `param`.
struct SizeSource {
  enum Kind { Unknown, Given, Ranks, Table, Param };
  Kind kind = Unknown;
  int param = -1; // Param: the index of the parameter whose array gave it
};

// --- Program -----------------------------------------------------------------

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
  /// A new FfiCall (ffi_call.h) of the program, owned by it: its address,
  /// for coconet.jax (program_ffi.cpp). `pieces`: {name: [(offset, count),
  /// ...]}, tensors passed as pieces of their block (a pytree's leaves);
  /// `deltas`: names of written ones whose results are new - old. Creates
  /// the program if it is not yet.
  uintptr_t ffiCall(nb::handle pieces, nb::handle deltas);
  /// {"calls": steps the FFI handler ran, "copies": tensors it copied
  /// because XLA had not aliased a result to its operand}, over every
  /// FfiCall of the program.
  nb::dict ffiStats() const;
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
  // program_sizes.cpp
  void setSizes(nb::handle sizes, nb::handle tables);
  void settleAxes();
  void deduce(std::vector<int64_t> &sizes, std::vector<SizeSource> &from) const;
  void placeAndCreate(const std::vector<int64_t> &sizes,
                      const std::vector<SizeSource> &from);
  void place(const std::vector<int64_t> &sizes, std::vector<int64_t> &shape,
             std::vector<int64_t> &offset) const;
  void checkShape(int i, const int64_t *shape, const int64_t *offset,
                  const std::vector<int64_t> &sizes,
                  const std::vector<SizeSource> &from) const;
  std::string sizeNote(const std::string &text, int i,
                       const std::vector<int64_t> &sizes,
                       const std::vector<SizeSource> &from) const;
  // " from 'g'" (a parameter other than i), " (the number of ranks)", " (the
  // table's length)", or "" (parameter i itself, or given).
  std::string sourceNote(const SizeSource &source, int i) const;
  int sizeIndex(const std::string &name) const;
  std::string sizeList() const;
  // program_call.cpp
  void take(int i, nb::handle h);
  void check(int i) const;
  void scalar(int i, nb::handle h);

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
  std::vector<SizeSource> from_; // where each of sizes_ came from
  std::vector<std::vector<int64_t>> tables_;
  size_t totalDims_ = 0;
  std::vector<int64_t> shape_, offset_; // this rank's blocks, once created
  nb::object allocate_;
  // What the caller's handles (comm, stream) belong to: released after the
  // program is destroyed (a member: destroyed after ~Program's body).
  nb::object keep_;
  void *program_ = nullptr;
  std::vector<std::unique_ptr<FfiCall>> ffi_; // those ffiCall() made

  // Per call, reused.
  bool busy_ = false;
  std::vector<nb::ndarray<>> arrays_;
  std::vector<char> viaView_; // a torch bool tensor taken as uint8
  std::vector<nb::object> outputs_;
  std::vector<ScalarValue> scalars_;
  std::vector<void *> args_;
  std::vector<int64_t> tryShape_, tryOffset_, trySizes_;
  std::vector<SizeSource> tryFrom_;
};

// --- The CUDA target's runtime (communicators.cpp) ---------------------------

// Through a cuda target program's library (python_abi.h): what
// coconet.NcclCommunicator is made of. Each raises ValueError for another
// target's library.

/// The number of CUDA devices this process sees (cudaGetDeviceCount).
int deviceCount(const std::string &library);
/// A new NCCL unique id (ncclGetUniqueId).
nb::bytes ncclUniqueId(const std::string &library);
/// ncclCommInitRank on `device`: the address of a new cc_py_nccl.
uintptr_t ncclInit(const std::string &library, nb::bytes id, int rank, int size,
                   int device);
/// Destroys a communicator ncclInit made (ncclCommDestroy).
void ncclDestroy(const std::string &library, uintptr_t world);

} // namespace coconet::py

#endif // COCONET_RUNTIME_PYTHON_PROGRAM_H
