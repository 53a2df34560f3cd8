"""Helpers the generated modules use: allocating outputs, naming communicators,
making the cuda target's NCCL communicators.

Nothing here imports PyTorch, CuPy or mpi4py until it is given (or asked for)
one of theirs.
"""

import atexit
import os
import sys

__all__ = ["NcclCommunicator", "allocate", "default_communicator", "imported_torch",
           "mpi_handle", "nccl_communicator", "nccl_handle", "nccl_unique_id",
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


def mpi_world(comm, who, why):
    """(the mpi4py communicator or None, its number of ranks, this rank) of
    `comm`, an mpi4py communicator or None (MPI_COMM_WORLD; one rank where
    mpi4py is missing and the launcher started one process). `who` starts
    the messages; `why` says what MPI is needed for."""
    if comm is None:
        try:
            from mpi4py import MPI
        except ImportError:
            size = int(os.environ.get("OMPI_COMM_WORLD_SIZE") or
                       os.environ.get("PMI_SIZE") or 1)
            if size > 1:
                raise RuntimeError("%s: %d ranks were started but mpi4py cannot "
                                   "be imported: install it (%s)" % (who, size, why))
            return None, 1, 0
        comm = MPI.COMM_WORLD
    if not hasattr(comm, "Get_size"):
        raise TypeError("%s: communicator is an mpi4py communicator (or None: "
                        "MPI_COMM_WORLD), not %s" % (who, type(comm).__name__))
    return comm, comm.Get_size(), comm.Get_rank()


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


def _library_of(x):
    """The path of a program's library: given as such, or the library of a
    generated module (NAME), of a Step, or of a coconet.Program."""
    if isinstance(x, (str, bytes)) or hasattr(x, "__fspath__"):
        return os.fsdecode(os.fspath(x))
    library = getattr(x, "_LIBRARY", None)  # a generated module
    if isinstance(library, str):
        return library
    program = getattr(x, "program", x)  # a Step, or a Program
    info = getattr(program, "info", None)
    if isinstance(info, dict) and isinstance(info.get("library"), str):
        return info["library"]
    raise TypeError("expected a cuda target program: its module (import NAME), "
                    "a Step, a coconet.Program or the path of its library "
                    "(_NAME.so); got " + type(x).__name__)


def nccl_unique_id(library):
    """A new NCCL unique id (ncclGetUniqueId, through the NCCL of `library`:
    a cuda target program's module, Step or library): 128 bytes, to give to
    every rank's NcclCommunicator(unique_id=...)."""
    from . import _core

    return _core.nccl_unique_id(_library_of(library))


_exiting = []
atexit.register(_exiting.append, True)


class NcclCommunicator:
    """An NCCL communicator for the cuda target's steps (Step(comm=...)),
    made here and owned: destroyed when it is garbage collected, which is
    after every step made with it (a step keeps its communicator).

    NcclCommunicator(library, comm=None, *, device=None, unique_id=None,
                     rank=None, size=None)

    library: a cuda target program (its module, a Step, a coconet.Program
    or the path of its library): the NCCL and CUDA runtime it links make
    the communicator. One communicator serves every program of the process.

    Made over MPI (mpi4py) when no unique_id is given: comm is an mpi4py
    communicator (None: MPI.COMM_WORLD); its rank 0 makes the NCCL unique id
    and broadcasts it; the NCCL ranks are comm's. Or, with unique_id (the
    bytes of nccl_unique_id(), made on one rank and handed to every rank by
    the caller, e.g. with torch.distributed.broadcast_object_list), rank and
    size: no MPI. Collective over the ranks either way.

    device: the CUDA device (made current), by default the node-local rank
    (MPI's shared-memory split; LOCAL_RANK where a launcher such as torchrun
    sets it and MPI is not used; else rank) modulo the devices seen.

    handle: what coconet.Program takes as comm (a cc_py_nccl's address).
    """

    def __init__(self, library, comm=None, *, device=None, unique_id=None,
                 rank=None, size=None):
        from . import _core

        self._world = 0
        self._destroy = None
        self.library = _library_of(library)
        if unique_id is None:
            if rank is not None or size is not None:
                raise TypeError("NcclCommunicator: rank and size come with "
                                "unique_id (without it, from the MPI communicator)")
            unique_id, rank, size, device = self._over_mpi(comm, device)
        else:
            if comm is not None:
                raise TypeError("NcclCommunicator: give an MPI communicator or "
                                "unique_id, rank and size, not both")
            if rank is None or size is None:
                raise TypeError("NcclCommunicator: unique_id needs rank and size")
            unique_id = bytes(unique_id)
            rank, size = int(rank), int(size)
            if device is None:
                local = os.environ.get("LOCAL_RANK")
                local = int(local) if local and local.isdigit() else rank
                device = local % self._devices()
        self._world = _core.nccl_init(self.library, unique_id, rank, size,
                                      int(device))
        self._destroy = _core.nccl_destroy
        self.rank, self.size, self.device = rank, size, int(device)
        #: The address of the cc_py_nccl: what coconet.Program takes as comm.
        self.handle = self._world

    def _devices(self):
        from . import _core

        count = _core.device_count(self.library)
        if count < 1:
            raise RuntimeError("NcclCommunicator: this process sees no CUDA device")
        return count

    def _over_mpi(self, comm, device):
        """(unique id, rank, size, device), rank 0 making the id: every
        rank fails together where one fails."""
        from mpi4py import MPI

        from . import _core

        if comm is None:
            comm = MPI.COMM_WORLD
        rank, size = comm.Get_rank(), comm.Get_size()
        made, why = None, None
        if device is None:
            local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=rank)
            try:
                local_rank = local.Get_rank()
            finally:
                local.Free()
        try:
            if device is None:
                device = local_rank % self._devices()
            if rank == 0:
                made = _core.nccl_unique_id(self.library)
        except Exception as e:  # shared below, so that no rank waits
            why = "%s: %s" % (type(e).__name__, e)
        whys = comm.allgather(why)
        made = comm.bcast(made, root=0)
        failed = [(r, w) for r, w in enumerate(whys) if w]
        if failed:
            raise RuntimeError("NcclCommunicator: " + "; ".join(
                "rank %d: %s" % rw for rw in failed))
        return made, rank, size, device

    @classmethod
    def wrap(cls, comm, device):
        """A communicator the caller made and owns (ncclComm_t as an int),
        on CUDA device `device`: not destroyed here; it must outlive every
        step made with it."""
        import ctypes

        class _CcPyNccl(ctypes.Structure):  # coconet/python_abi.h
            _fields_ = [("comm", ctypes.c_void_p), ("device", ctypes.c_int)]

        self = cls.__new__(cls)
        self._world, self._destroy, self.library = 0, None, None
        self._struct = _CcPyNccl(int(comm), int(device))
        self.rank = self.size = None
        self.device = int(device)
        self.handle = ctypes.addressof(self._struct)
        return self

    @property
    def owned(self):
        """Whether the communicator is destroyed here (made, not wrapped)."""
        return bool(self._world)

    def __repr__(self):
        if not self._world:
            return "<coconet.NcclCommunicator (wrapped) on cuda:%d>" % self.device
        return ("<coconet.NcclCommunicator rank %d of %d on cuda:%d>"
                % (self.rank, self.size, self.device))

    def __del__(self):
        world, self._world = getattr(self, "_world", 0), 0
        # At interpreter exit CUDA and MPI may be gone: left to the process's end.
        if world and self._destroy is not None and not _exiting:
            self._destroy(self.library, world)


_default = []


def default_communicator(library):
    """The process's NCCL communicator over MPI_COMM_WORLD (what a cuda
    target Step made with comm=None runs on): made at the first call, with
    `library`, and kept until the process ends."""
    if not _default:
        _default.append(NcclCommunicator(library))
    return _default[0]


def nccl_communicator(comm, library):
    """The cuda target's world for a Step of `library`: an NcclCommunicator
    as it is; an mpi4py communicator: a new NcclCommunicator over its ranks
    (MPI.COMM_WORLD: the process's, default_communicator); None: the
    process's; an int as it is (the address of a cc_py_nccl the caller
    keeps)."""
    if comm is None:
        return default_communicator(library)
    if isinstance(comm, NcclCommunicator):
        return comm
    if isinstance(comm, int) and not isinstance(comm, bool):
        return comm
    if _instance_of(comm, "mpi4py.MPI", "Comm"):
        from mpi4py import MPI

        if comm == MPI.COMM_WORLD:
            return default_communicator(library)
        return NcclCommunicator(library, comm)
    raise TypeError("the cuda target's world is an NCCL communicator: "
                    "a coconet.NcclCommunicator, an mpi4py communicator (one is "
                    "made over its ranks), None (MPI_COMM_WORLD's) or the "
                    "address of a cc_py_nccl; got " + type(comm).__name__)


def nccl_handle(comm):
    """The cuda target's world as the int coconet.Program takes: an
    NcclCommunicator's handle, or an int as it is (the address of a
    cc_py_nccl)."""
    if isinstance(comm, NcclCommunicator):
        return comm.handle
    if isinstance(comm, int) and not isinstance(comm, bool):
        return comm
    raise TypeError("the cuda target's world is an NCCL communicator: a "
                    "coconet.NcclCommunicator or the address of a cc_py_nccl; "
                    "got " + type(comm).__name__)


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
