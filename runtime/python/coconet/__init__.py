"""coconet: call coconetc-generated distributed steps from Python.

A program compiled with ``python3 -m coconet build FILE.coco ...`` (or
``coconetc --emit=python``) is a module NAME.py beside its library _NAME.so;
NAME.py creates a :class:`Program` from the library and calls it with
arrays (NumPy, PyTorch, CuPy, JAX: anything with ``__dlpack__`` or the buffer
protocol), zero-copy. This package holds what every such module shares:

* :class:`Program` (the compiled extension ``coconet._core``): loads a
  library, settles the sizes, creates the program, checks each call's
  arguments and calls the step;
* :func:`allocate`, :func:`mpi_handle`, :func:`nccl_handle`,
  :func:`stream_handle` (``coconet.runtime``): the default allocation of
  outputs passed as None, and the handles of communicators and streams;
* :class:`NcclCommunicator` (``coconet.runtime``): the cuda target's NCCL
  communicator, made over MPI (mpi4py) or from a unique id the caller
  shares (:func:`nccl_unique_id`), through a program's library (no other
  compiled extension); :func:`default_communicator` is the process's over
  MPI_COMM_WORLD, what a Step given no communicator runs on;
* ``coconet.build`` (``coconet.build.build()``, ``python3 -m coconet
  build``): runs coconetc and compiles the library.
"""

from . import build  # the module: coconet.build.build(), coconet.build.main()
from ._config import VERSION as __version__
from ._core import ABI, Program, describe
from .build import BuildError
from .runtime import (NcclCommunicator, allocate, default_communicator, imported_torch,
                      mpi_handle, nccl_communicator, nccl_handle, nccl_unique_id,
                      stream_handle)

import weakref as _weakref

#: Every live Step of the generated modules by id(), for their torch ops.
STEPS = _weakref.WeakValueDictionary()
#: The torch custom ops of the generated modules ("coconet::NAME"): one per
#: program name in a process, however often its module is loaded.
TORCH_OPS = {}

__all__ = ["STEPS", "TORCH_OPS", "ABI", "BuildError", "NcclCommunicator", "Program", "allocate",
           "default_communicator", "describe", "build", "imported_torch", "mpi_handle",
           "nccl_communicator", "nccl_handle", "nccl_unique_id", "stream_handle",
           "__version__"]
