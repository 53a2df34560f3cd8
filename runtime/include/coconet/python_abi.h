/*===- python_abi.h - a generated program's entry points for Python -*- C -*-===
 *
 * `coconetc --emit=python` writes, beside the program's NAME.h and
 * NAME.cpp / NAME.cu, a file NAME_python.cpp / NAME_python.cu that defines
 * one C function,
 *
 *     const cc_py_program *coconet_python_program(void);
 *
 * which describes the program (coconet/description.h, the description
 * the driver reads too) and gives plain C entry points to its Sizes,
 * create(), operator() and destructor.
 * The program and this file are built into one shared library (_NAME.so);
 * the Python package `coconet` (runtime/python/) loads it with dlopen and
 * does everything Python needs on this description alone: arrays through
 * DLPack, the checks, the communicator, the errors. No Python header is
 * included here, so a program's library builds as fast as its C++ and does
 * not depend on the Python version; the one compiled Python extension
 * (coconet._core) is built once with coconet.
 *
 * Plain C (no C++ type crosses it) and versioned: a library whose `abi`
 * differs from COCONET_PY_ABI is refused by name.
 *
 *===----------------------------------------------------------------------===*/

#ifndef COCONET_RUNTIME_PYTHON_ABI_H
#define COCONET_RUNTIME_PYTHON_ABI_H

#include "coconet/description.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below or the meaning of a field changes (3:
 * the program as a cc_description, coconet/description.h). */
#define COCONET_PY_ABI 3

/* The CUDA target's world, what `comm` points to there: an NCCL
 * communicator and the CUDA device it is on. Made by the caller (the
 * communicator is not destroyed by a program), or by nccl_init below. */
typedef struct cc_py_nccl {
  void *comm; /* ncclComm_t */
  int device;
} cc_py_nccl;

/* The bytes of an NCCL unique id (NCCL_UNIQUE_ID_BYTES). */
#define CC_PY_NCCL_ID_BYTES 128

typedef struct cc_py_program {
  int abi; /* COCONET_PY_ABI */
  /* The program as data: sizes, mesh axes, parameters and outputs (the
   * arguments of a step), results, segment tables; what the driver reads
   * too. */
  const cc_description *description;
  /* Python's name of each block, in the description's order: its name,
   * but an output whose name a parameter has as the C++ API names it
   * (out_NAME), and a name Python reserves with "_" appended. */
  const char *const *names;
  /* "cpu", "cuda", or "cuda-emulated": the CUDA target's code built for
   * the CPU emulation of CUDA (test/emu, a testing aid), whose arrays are
   * host memory. */
  const char *target;
  const char *source; /* the .coco file's name */

  /* Every entry point returns 0, or 1 with a message (NUL-terminated,
   * truncated to `cap` bytes) in `err`. `comm` is the world: on the CPU
   * target an MPI communicator as its Fortran handle (MPI_Comm_c2f;
   * mpi4py's Comm.py2f()), or -1 for MPI_COMM_WORLD, MPI being initialised
   * (MPI_THREAD_SERIALIZED) and finalised at exit by the library when no
   * one else has; on the CUDA target a pointer to a cc_py_nccl (above). */

  /* This process's rank and the number of ranks of `comm`. */
  int (*world)(int64_t comm, int *rank, int *size, char *err, size_t cap);
  /* The block of every tensor parameter and output (the description's
   * order, scalars skipped) on `rank` for `sizes`: `shape` and `offset` get
   * each tensor's rank values in turn. Fails when a sliced dimension does not
   * divide evenly or a size is not positive. */
  int (*place)(const int64_t *sizes, int rank, int64_t *shape, int64_t *offset,
               char *err, size_t cap);
  /* Program::create(world, sizes, [tables,] [stream,] &out): collective
   * over the ranks of `comm`. `tables` holds one pointer per table (its
   * sizes[count] lengths); `stream` is the CUDA stream (ignored on the
   * CPU). */
  int (*create)(int64_t comm, const int64_t *sizes,
                const int64_t *const *tables, void *stream, void **out,
                char *err, size_t cap);
  /* One step: args[i] for block i: a tensor's or output's data pointer
   * (on the CUDA target device memory of the world's device, enqueued on
   * create()'s stream; host memory under "cuda-emulated"), or a pointer to
   * a scalar's value as the C++ API takes it (float for f16/bf16/f32,
   * double, int32_t, int64_t, uint64_t, bool). */
  /* Returns 0, or 2 where the arguments were refused before anything ran
   * (InvalidArgument: a requirement of the program), 1 for any other
   * error; the message in err. */
  int (*step)(void *program, void *const *args, char *err, size_t cap);
  void (*destroy)(void *program);
  /* How fused collectives and overlaps run (Program::path()), or null
   * where the program has none. */
  const char *(*path)(void *program);

  /* The CUDA target's runtime, null on the CPU target: what Python needs
   * to make the cc_py_nccl `comm` points to and to wait for a stream,
   * through the CUDA runtime and NCCL this library links (so no compiled
   * extension of Python's links them; coconet.NcclCommunicator). */

  /* The number of CUDA devices this process sees (cudaGetDeviceCount). */
  int (*device_count)(int *count, char *err, size_t cap);
  /* ncclGetUniqueId: `id` gets CC_PY_NCCL_ID_BYTES bytes, which every rank
   * of the communicator-to-be must be given (by MPI_Bcast, a store...). */
  int (*nccl_unique_id)(char *id, char *err, size_t cap);
  /* ncclCommInitRank(size, id, rank) on `device` (made current first):
   * collective over the `size` ranks given the same id. `*world` gets a new
   * cc_py_nccl (the communicator and `device`), to be destroyed by
   * nccl_destroy once no program created on it remains. */
  int (*nccl_init)(const char *id, int rank, int size, int device,
                   cc_py_nccl **world, char *err, size_t cap);
  /* Destroys a world nccl_init made (ncclCommDestroy) and frees it; a null
   * world: nothing. */
  void (*nccl_destroy)(cc_py_nccl *world);
  /* Waits until everything enqueued on `stream` (as create() takes it;
   * null: the legacy default stream) has run: cudaStreamSynchronize. A step
   * never waits itself. */
  int (*synchronize)(void *stream, char *err, size_t cap);
} cc_py_program;

/* The one symbol a program's library exports (the library is built with
 * -fvisibility=hidden; everything else stays inside it). */
#if defined(__GNUC__)
#define COCONET_PY_EXPORT __attribute__((visibility("default")))
#else
#define COCONET_PY_EXPORT
#endif
typedef const cc_py_program *(*cc_py_program_fn)(void);
#define COCONET_PY_SYMBOL "coconet_python_program"

#ifdef __cplusplus
}
#endif

#endif /* COCONET_RUNTIME_PYTHON_ABI_H */
