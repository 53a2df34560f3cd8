"""Exits 77 (CTest's skip) with the reason where coconet.jax cannot run:
no JAX or optax in this Python (tools/setup.sh --tests installs them), or a
coconet._core built without JAX's FFI headers (tools/build.sh builds it
with them once JAX is there); 0 otherwise."""
import sys

try:
    import jax  # noqa: F401
    import optax  # noqa: F401
except ImportError as e:
    print("SKIPPED: coconet.jax needs JAX and optax (tools/setup.sh --tests "
          "installs them): %s" % e)
    sys.exit(77)
from coconet import _core

if not _core.jax_ffi_handler():
    print("SKIPPED: coconet._core was built without JAX's FFI headers "
          "(tools/build.sh builds it with them once JAX is installed)")
    sys.exit(77)
