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
* ``coconet.build`` (``coconet.build.build()``, ``python3 -m coconet
  build``): runs coconetc and compiles the library.
"""

from . import build  # the module: coconet.build.build(), coconet.build.main()
from ._config import VERSION as __version__
from ._core import ABI, Program, describe
from .build import BuildError
from .runtime import (NcclWorld, allocate, imported_torch, mpi_handle, nccl_handle,
                      stream_handle)

__all__ = ["ABI", "BuildError", "NcclWorld", "Program", "allocate", "describe", "build",
           "imported_torch", "mpi_handle", "nccl_handle", "stream_handle",
           "__version__"]
