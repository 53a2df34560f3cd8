"""Helpers the generated modules use: allocating outputs, naming communicators.

Nothing here imports PyTorch, CuPy or mpi4py until it is given (or asked for)
one of theirs.
"""

import sys

__all__ = ["allocate", "imported_torch", "mpi_handle", "nccl_handle", "NcclWorld",
           "stream_handle"]


def _instance_of(obj, module, cls):
    """isinstance(obj, module.cls) when `module` has been imported (else False)."""
    mod = sys.modules.get(module)
    return mod is not None and isinstance(obj, getattr(mod, cls))


def allocate(shape, dtype, like=None):
    """An uninitialised array of `shape` and element type `dtype` (NumPy's
    spelling: "float32", "bfloat16", ...) of the kind of `like`: a
    torch.Tensor on like's device, a CuPy array, else a NumPy array.

    coconet.Program calls it for each output passed as None, with the first
    tensor argument as `like`.
    """
    shape = tuple(int(s) for s in shape)
    if _instance_of(like, "torch", "Tensor"):
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if _instance_of(like, "cupy", "ndarray"):
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    import numpy

    if dtype == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError(
                "NumPy has no bfloat16: pass the output yourself (e.g. a "
                "torch.bfloat16 tensor), or install ml_dtypes") from None
        return numpy.empty(shape, dtype=ml_dtypes.bfloat16)
    return numpy.empty(shape, dtype=dtype)


def mpi_handle(comm=None):
    """The MPI communicator `comm` as the int coconet.Program takes: an
    mpi4py communicator's Fortran handle (comm.py2f()), an int as it is, and
    for None MPI_COMM_WORLD (mpi4py's where mpi4py imports, else -1: the
    program's library then initialises MPI itself)."""
    if comm is None:
        try:
            from mpi4py import MPI
        except ImportError:
            return -1
        return MPI.COMM_WORLD.py2f()
    if isinstance(comm, bool):
        raise TypeError("expected an MPI communicator (mpi4py) or its handle, got bool")
    if isinstance(comm, int):
        return comm
    py2f = getattr(comm, "py2f", None)
    if callable(py2f):
        return py2f()
    raise TypeError("expected an MPI communicator (mpi4py's Comm), its Fortran "
                    "handle (int) or None, got " + type(comm).__name__)


def imported_torch():
    """The torch module where the program has imported it, else None (it is
    never imported here)."""
    return sys.modules.get("torch")


class NcclWorld:
    """The CUDA target's world: an NCCL communicator (its ncclComm_t as an
    int) and the CUDA device it is on. The communicator stays the caller's:
    it must outlive every step made with it and is not destroyed here."""

    def __init__(self, comm, device):
        import ctypes

        class _CcPyNccl(ctypes.Structure):  # coconet/python_abi.h
            _fields_ = [("comm", ctypes.c_void_p), ("device", ctypes.c_int)]

        self.comm = int(comm)
        self.device = int(device)
        self._struct = _CcPyNccl(self.comm, self.device)
        #: The address of the cc_py_nccl, what coconet.Program takes.
        self.handle = ctypes.addressof(self._struct)


def nccl_handle(comm):
    """The CUDA target's `comm` as the int coconet.Program takes: a
    NcclWorld's handle, or an int as it is (the address of a cc_py_nccl)."""
    if isinstance(comm, NcclWorld):
        return comm.handle
    if isinstance(comm, int) and not isinstance(comm, bool):
        return comm
    raise TypeError("the cuda target's world is an NCCL communicator: "
                    "coconet.NcclWorld(comm, device) (comm: the ncclComm_t as "
                    "an int) or the address of a cc_py_nccl; got "
                    + type(comm).__name__)


def stream_handle(stream):
    """A CUDA stream as the int coconet.Program takes: an int as it is (0 or
    None: the default stream), a torch.cuda.Stream's cuda_stream, a CuPy
    stream's ptr."""
    if stream is None:
        return 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    for attr in ("cuda_stream", "ptr"):
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value
    raise TypeError("expected a CUDA stream (torch.cuda.Stream, a CuPy stream "
                    "or its handle as an int), got " + type(stream).__name__)
