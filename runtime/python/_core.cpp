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
// This file holds the module's bindings alone. Program is program.h's:
// loaded (program_load.cpp), its sizes settled (program_sizes.cpp), called
// (program_call.cpp); the CUDA runtime's calls (communicators.cpp); element
// types, devices (core_types.h) and messages (core_messages.h).
//
//===----------------------------------------------------------------------===//

#include "program.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

using namespace coconet::py;
using namespace nb::literals;

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
  m.def("jax_ffi_handler", &jaxFfiHandler,
        "The address of the XLA FFI handler that runs a program's step "
        "(coconet.jax registers it); 0 where _core was built without JAX's "
        "FFI headers.");
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
      .def("ffi_call", &Program::ffiCall, "pieces"_a = nb::none(),
           "deltas"_a = nb::none(),
           "The address of a new call description of the program for XLA's "
           "FFI (the attribute `call` of coconet.jax's FFI call); creates "
           "the program. pieces: {name: [(offset, count), ...]}, tensors "
           "passed as pieces of their block; deltas: names of written "
           "pieced tensors whose results are new - old. The cpu target "
           "only.")
      .def_prop_ro("ffi_stats", &Program::ffiStats,
                   "{'calls', 'copies'}: the steps XLA's FFI handler ran, "
                   "and the tensors it copied because a result was not "
                   "aliased to its operand.")
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
