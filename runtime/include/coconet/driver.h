//===- driver.h - helpers of the generated drivers -----------*- C++ -*-===//
//
// A generated driver runs one step of one program on every rank and writes
// the results, so that any generated program can be checked against the
// simulator with one command:
//
//   ./adam_rs_c_ag --size N=4096 --seed 1 --output-dir out/
//   coconetc sim --schedule rs_c_ag --ranks 4 --size N=4096 --seed 1
//       --check-outputs out/ samples/adam.coco     (one command line)
//
// Inputs are filled exactly as the simulator fills them (the same seed
// gives the same bits; see compiler/sim/Inputs.h), set by value
// (--set lr=0.01), or read from .npy files in the simulator's assembled
// form (--input g=g.npy). Results are written in the assembled form too:
// rank 0 gathers the blocks. Host-only; the target's code moves data to and
// from the device. Ranks and gathers go through a Transport: MPI where the
// driver was built with it, one process otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_DRIVER_H
#define COCONET_RUNTIME_DRIVER_H

#include "coconet/description.h"
#include "coconet/segments.h"
#include "coconet/status.h"
#include "coconet/types.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <new>
#include <string>
#include <vector>

namespace coconet::rt::driver {

/// Memory on a 64-byte boundary: a cache line, and an AVX-512 vector.
/// std::vector<uint8_t>'s large blocks come from malloc's mmap, 16 bytes
/// past a page, so each vector of a kernel's loop straddled two lines: on
/// the development VM an in-place update of an f32[2^22] from an f16 one,
/// cached, took 0.44-0.51 ms with its output 16 bytes off and 0.36-0.45
/// aligned, and a driver's step of SGD on one rank 0.48 ms against 0.34
/// with the weights in the (aligned) symmetric memory.
template <class T> struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T))
      throw std::bad_array_new_length();
    return static_cast<T *>(::operator new(n * sizeof(T), kAlign));
  }
  void deallocate(T *p, size_t) { ::operator delete(p, kAlign); }
  template <class U> bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
  template <class U> bool operator!=(const CacheLineAllocator<U> &) const {
    return false;
  }
};
/// A driver's host copy of a block: bytes on a 64-byte boundary.
using HostBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

/// How generated float tensors are drawn: as `coconetc sim --inputs`
/// (compiler/sim/Inputs.h).
enum class InputKind { Uniform, Wide };

/// The command line of a generated driver.
struct Options {
  std::map<std::string, int64_t> sizes;      ///< --size N=1024,P=4 (repeatable)
  uint64_t seed = 1;                         ///< --seed
  std::map<std::string, std::string> values; ///< --set name=value
  std::map<std::string, std::string> inputs; ///< --input name=file.npy
  /// --segments table=file (a list of lengths or a 1-D integer .npy).
  std::map<std::string, std::string> segments;
  std::string outputDir; ///< --output-dir (none: no files)
  int iterations = 1;    ///< --iterations: steps to time
  int warmup = 0;        ///< --warmup: untimed steps first
  bool quiet = false;    ///< --quiet: no summary lines
  /// --step-times: time every timed step on its own (synchronising after
  /// each) and print the fastest beside the mean.
  bool stepTimes = false;
  /// --staging: the tensors fused collective kernels share are passed in
  /// the driver's own memory (copied in and out), not the program's.
  bool staging = false;
  /// --inputs=uniform|wide: how generated inputs are drawn.
  InputKind inputKind = InputKind::Uniform;
};

/// Parses the driver's command line; `program` names it in --help and in
/// errors. Returns InvalidArgument with a usage message on a bad option;
/// `*help` is set (and Ok returned) for --help.
Status parseArgs(int argc, char **argv, const char *program, Options *out,
                 bool *help);
/// The --help text.
std::string usage(const char *program);

/// --step-times: turns the seconds from the start of the timed loop to the
/// end of each step (`ends`, ascending) into each step's own seconds, in
/// place.
void stepDurations(std::vector<double> &ends);
/// The driver's timing line: "NAME: K steps on R ranks, X ms per step"
/// (the mean of `seconds` over K steps), and with --step-times ", fastest
/// Y ms" (the least of `steps`: the driver reduces the ends over ranks
/// with MAX before stepDurations, so each step is the time between two
/// ends of the last rank to end them, and the least is at most the mean).
std::string timingLine(const char *program, int iterations, int ranks,
                       double seconds, const std::vector<double> &steps);

/// How a value relates across the ranks of one mesh axis (ir::AxisState).
enum class AxisState { Replicated, Local, Sliced };
struct AxisLayout {
  AxisState state = AxisState::Replicated;
  int dim = 0; ///< for Sliced
};

/// A parameter or result of the program, as the driver sees it.
struct TensorInfo {
  std::string name;
  unsigned paramIndex = 0; ///< parameters: position in the declaration
  DType dtype = DType::F32;
  std::vector<int64_t> globalShape; ///< empty for a scalar
  std::vector<AxisLayout> layout;   ///< one per mesh axis
};

/// Where this rank's block lies, as the simulator places it: a dimension
/// sliced over several axes is split row-major over them in mesh order.
struct Placement {
  std::vector<int64_t> localShape;
  std::vector<int64_t> offset;
  int64_t localGroup = 0; ///< row-major index of the coords on local axes
  int64_t elements() const;
};
/// Fails (InvalidArgument) when a sliced dimension does not divide evenly,
/// or the tensor's element or byte count does not fit (more than 2^63 - 1
/// bytes).
Status place(const TensorInfo &info, const std::vector<int64_t> &axisSizes,
             const std::vector<int64_t> &coords, Placement *out);

/// This rank's block of `info` in host memory, zeroed, on a 64-byte
/// boundary. Fails
/// (InvalidArgument) with a message that names the tensor, its block's
/// size and the memory when the bytes cannot be allocated, instead of
/// throwing std::bad_alloc.
Status allocateBlock(const TensorInfo &info, const Placement &placement,
                     HostBytes *host);
/// The error of a block of `info` of `bytes` bytes that `memory` ("host
/// memory", "device memory") cannot hold: "cannot allocate 'w' (f32[N]):
/// its block of 17179869184 elements is 68719476736 bytes (64.0 GiB) of
/// device memory".
Status cannotAllocate(const TensorInfo &info, int64_t elements, size_t bytes,
                      const char *memory);

/// This rank's block of one tensor in a driver's host memory, placed and
/// allocated (zeroed) by make(); `bound` is the program's symmetric memory
/// for it, or null. The targets' drivers (coconet/cpu/driver.h,
/// coconet/cuda/driver.h) say where the program reads it.
struct HostBlock {
  TensorInfo info;
  Placement placement;
  HostBytes host;
  void *bound = nullptr;
  Status makeHost(TensorInfo tensor, const std::vector<int64_t> &axisSizes,
                  const std::vector<int64_t> &coords, void *symmetric);
};

/// The value of size `name`: --size, else `fallback` (0: required, an
/// InvalidArgument error naming the option to give).
Status sizeOf(const Options &options, const char *name, int64_t fallback,
              int64_t *out);
/// The coordinates of `rank` on a mesh of `axisSizes`: ranks are row-major
/// over the axes.
std::vector<int64_t> coordinatesOf(const std::vector<int64_t> &axisSizes,
                                   int rank);

/// A parameter's name and type, for checkNames.
struct ParamName {
  const char *name;
  DType dtype;
};
/// Checks that every --size names one of `sizeNames` and every --set and
/// --input one of `params`, and that every --set value fits its
/// parameter's type (coconet/values.h): InvalidArgument naming the unknown
/// name and the names there are, or the value.
Status checkNames(const Options &options,
                  const std::vector<std::string> &sizeNames,
                  const std::vector<ParamName> &params);
/// Every --segments names one of the program's `tables`.
Status checkTableNames(const Options &options,
                       const std::vector<std::string> &tables);
/// Segment table number `index`, named `table`, of the tensors of length
/// `length` (the size `lengthName`), as the simulator binds it: read from its
/// --segments file (then its count, `*count`, is the file's, and a --size of
/// `countName` must agree), else generated (randomSegmentTable with --seed)
/// with the count --size gives.
Status segmentTable(const Options &options, const char *table, uint64_t index,
                    const char *countName, const char *lengthName,
                    int64_t length, int64_t *count, SegmentTable *out);

// --- A program's description ---------------------------------------------
//
// What a generated driver's main() hands to its target's run() (coconet/
// cpu/driver.h, coconet/cuda/driver.h): the program as data (coconet/
// description.h, the description every host reads) and the entry points
// into its class. One implementation of the driver, in the runtime, reads
// it; the generated text is the tables and a few lines.

struct ProgramDescription {
  /// The program as data.
  const cc_description *program;
  /// Program::create on the target's Session (`session`) with `sizes`
  /// (num_sizes, in order) and each table's lengths: `*object` gets the
  /// object.
  Status (*create)(void *session, const int64_t *sizes,
                   const int64_t *const *tables, void **object);
  void (*destroy)(void *object);
  /// One step: `args[i]` is block i's data where the program reads it, or
  /// for a scalar its host value (storage type).
  Status (*step)(void *object, void *const *args);
  /// Program::path(), null where !program->has_path.
  const char *(*path)(void *object);
  /// Where block i lives in the program's symmetric memory (for blocks
  /// with `symmetric`), else null.
  void *(*symmetric)(void *object, uint32_t block);
};

/// TensorInfo of `block`, named `name` (a result's name for a result), for
/// `sizes`: InvalidArgument where an extent does not fit in 64 bits.
Status tensorInfoOf(const cc_description &program, const cc_block &block,
                    const char *name, const int64_t *sizes, TensorInfo *out);

/// The value of `extent` for `sizes`: InvalidArgument naming `what` when
/// the product does not fit in 64 bits.
Status extentOf(const cc_extent &extent, const int64_t *sizes,
                const char *const *sizeNames, const char *what, int64_t *out);

/// Ranks and gathering bytes to rank 0.
class Transport {
public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Rank 0 receives every rank's `bytes` (rank order) in `*all`.
  virtual Status gather(const void *data, size_t bytes,
                        std::vector<uint8_t> *all) = 0;
  /// Every rank gets the largest of their `value`s (`value` itself when
  /// the ranks cannot agree: the communication failed).
  virtual int maxOf(int value) = 0;
  /// Returns when every rank has called it (the timed steps' start).
  virtual void barrier() = 0;
  /// Every rank gets, for each i < count, the largest `values[i]` of the
  /// ranks (the timed steps' ends; unchanged where the ranks cannot agree).
  virtual void maxOf(double *values, size_t count) = 0;
};
/// One process, rank 0 of 1.
Transport &singleProcess();

/// Collective over the transport's ranks, after each phase of a driver:
/// 0 when `status` is ok on every rank, else `code` on every rank. Rank 0
/// prints each distinct failure once, as "PROGRAM: MESSAGE" (the status's
/// toString(), or its message alone when `code` is 2, a usage error),
/// naming the ranks it came from unless it came from all; so an error that
/// every rank meets is printed once, not once per rank.
int agree(Transport &transport, const Status &status, int code,
          const char *program);

/// Fills this rank's block (host memory, `placement.elements()` elements of
/// info.dtype; a scalar is one element) as the simulator would: --set,
/// else --input, else generated from the seed.
Status fillInput(const TensorInfo &info, const Options &options,
                 const std::vector<int64_t> &axisSizes,
                 const std::vector<int64_t> &coords, const Placement &placement,
                 void *block);

/// Gathers every rank's block of a result to rank 0 and writes
/// `<outputDir>/<name>.npy` in the simulator's assembled form (a value
/// local on some axis is stacked per rank: [ranks, global shape...]).
Status writeResult(const TensorInfo &info, const Options &options,
                   const std::vector<int64_t> &axisSizes, Transport &transport,
                   const void *block);

/// The hash by which writeResult compares the copies of a block that
/// several ranks hold (FNV-1a of its bytes).
uint64_t blockHash(const void *data, size_t bytes);

/// Prints "name: dtype[shape] sum ... min ... max ..." of this rank's block
/// (rank 0 only), for a quick look.
void printSummary(const TensorInfo &info, const Transport &transport,
                  const Placement &placement, const void *block);

} // namespace coconet::rt::driver

#if defined(COCONET_WITH_MPI)
// Only MPI's C API: its C++ bindings do not compile warning-free.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
namespace coconet::rt::driver {
/// Ranks of an MPI communicator; gathers with MPI_Gather(v).
class MpiTransport : public Transport {
public:
  explicit MpiTransport(MPI_Comm comm);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status gather(const void *data, size_t bytes,
                std::vector<uint8_t> *all) override;
  int maxOf(int value) override;
  void barrier() override;
  void maxOf(double *values, size_t count) override;

private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};
} // namespace coconet::rt::driver
#endif

#endif // COCONET_RUNTIME_DRIVER_H
