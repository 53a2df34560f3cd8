"""Compiled modules built on first use and kept: coconet.cache.load().

    module = coconet.cache.load("adam.coco", "adam", "rs_c_ag")
    step = module.Step(...)

builds program `adam` under schedule `rs_c_ag` (coconet.build.build) into
a directory of the cache, once, and imports the module from there: the
next call, in this process or another, imports what is there. The cache is
keyed, as Triton's and torch.compile's are, by everything the module is
made of: the program's source text, the program, the schedule, the target
and its architecture, the sizes, ranks and machine of a tuned schedule
(`auto`), this coconet's version and Python ABI, and the coconetc binary
(its path, size and modification time). A file the source imports is not
in the key: change its importer (or clear the cache) when it changes.

Where: `cache_dir`, else $COCONET_CACHE_DIR, else $XDG_CACHE_HOME/coconet,
else ~/.cache/coconet; one directory per module, `NAME-KEY`, with
`key.json` (what the key was made of). Building is serialised by a file
lock beside it (`NAME-KEY.lock`), so the ranks of a job on one machine
build a module once and the others wait for it; a build is written into a
temporary directory and renamed into place, so an interrupted build leaves
nothing half-made. Removing the directory clears the cache.
"""

import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile

from . import _config
from . import build as _build
from ._core import ABI

__all__ = ["directory", "load"]

# The modules imported in this process, by directory: loaded once.
_LOADED = {}


def directory(path=None):
    """The cache's directory: `path`, else $COCONET_CACHE_DIR, else
    $XDG_CACHE_HOME/coconet, else ~/.cache/coconet."""
    if path:
        return os.path.abspath(os.fspath(path))
    env = os.environ.get("COCONET_CACHE_DIR")
    if env:
        return os.path.abspath(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "coconet")


def _key(source, program, schedule, target, cuda_arch, size, ranks, machine):
    with open(source, "rb") as f:
        text = f.read()
    st = os.stat(_config.COCONETC)
    material = {
        "source": hashlib.sha256(text).hexdigest(),
        "program": program,
        "schedule": schedule,
        "target": target,
        "cuda_arch": str(cuda_arch) if target == "cuda" else None,
        "size": _build._size_text(size) if size is not None else None,
        "ranks": ranks,
        "machine": machine,
        "coconet": _config.VERSION,
        "abi": ABI,
        "coconetc": [_config.COCONETC, st.st_size, st.st_mtime_ns],
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode())
    return digest.hexdigest()[:16], material


def load(source, program, schedule=None, target="cpu", *, cache_dir=None,
         cuda_arch="90", size=None, ranks=None, machine=None, include=()):
    """The module of `program` of `source` under `schedule` for `target`,
    built into the cache if it is not there yet, imported. Raises
    coconet.BuildError where the build fails (nothing is kept then)."""
    source = os.path.abspath(os.fspath(source))
    if not os.path.isfile(source):
        raise _build.BuildError("no such file: %s" % _build._shown(source))
    key, material = _key(source, program, schedule, target, cuda_arch, size,
                         ranks, machine)
    name = program + ("_" + schedule if schedule else "")
    root = directory(cache_dir)
    final = os.path.join(root, "%s-%s" % (name, key))
    module = _LOADED.get(final)
    if module is not None:
        return module
    os.makedirs(root, exist_ok=True)
    with open(final + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isfile(os.path.join(final, "key.json")):
            tmp = tempfile.mkdtemp(prefix=".build-%s-" % name, dir=root)
            try:
                paths = _build.build(source, program=program, schedule=schedule,
                                     target=target, out_dir=tmp,
                                     include=include, cuda_arch=cuda_arch,
                                     size=size, ranks=ranks, machine=machine,
                                     cache_dir=root)
                if len(paths) != 1:
                    raise _build.BuildError(
                        "expected one module of %s, got %d" % (name, len(paths)))
                with open(os.path.join(tmp, "module"), "w") as f:
                    f.write(os.path.basename(paths[0])[:-3])
                with open(os.path.join(tmp, "key.json"), "w") as f:
                    json.dump(material, f, indent=1, sort_keys=True)
                if os.path.exists(final):  # a directory left half-made
                    shutil.rmtree(final)
                os.rename(tmp, final)
            finally:
                if os.path.exists(tmp):
                    shutil.rmtree(tmp)
    with open(os.path.join(final, "module")) as f:
        module_name = f.read().strip()
    path = os.path.join(final, module_name + ".py")
    spec = importlib.util.spec_from_file_location(
        "coconet._cached.%s_%s" % (module_name, key), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _LOADED[final] = module
    return module
