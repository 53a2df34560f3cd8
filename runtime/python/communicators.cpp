//===- communicators.cpp - coconet._core: the CUDA runtime's calls --------===//
//
// The CUDA target's runtime through a cuda target program's library
// (python_abi.h's device_count, nccl_unique_id, nccl_init, nccl_destroy):
// what coconet.NcclCommunicator is made of, so that coconet._core links
// neither CUDA nor NCCL. A CPU target's library is refused (ValueError).
//
//===----------------------------------------------------------------------===//

#include "program.h"

namespace coconet::py {

namespace {

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

} // namespace

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

} // namespace coconet::py
