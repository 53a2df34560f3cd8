"""JAX: a compiled step as an XLA FFI call, and optax transformations.

    import coconet.jax, optax
    opt = coconet.jax.adamw(1e-3, weight_decay=1e-2)     # for optax.adamw
    state = opt.init(params)
    ...
    updates, state = opt.update(grads, state, params)    # inside jax.jit
    params = optax.apply_updates(params, updates)

`adamw` and `lamb` are optax GradientTransformations over any pytree of
f32 parameters, data parallel over the ranks of an MPI communicator (one
process per rank under mpirun): each rank passes its own gradients, the
step averages them over the ranks (as DDP, or `jax.lax.pmean`, would) and
updates. Their step is a program of stdlib/optim/torch.coco (torch_adam,
torch_lamb) under `schedule` (rs_c_ag by default: ZeRO's reducescatter,
the update of this rank's slice, allgather; the moments in the state are
this rank's slice), compiled on first use and cached (coconet.cache).

`ffi_step(step)` makes any created Step of the cpu target a JAX function
(jax.ffi's ffi_call): it works under jax.jit, and the tensors the step
updates are its results aliased to its operands, so that a buffer donated
to the jitted function is updated where it lies, without a copy.

The CPU platform only (the cpu target). docs/python.md ("JAX") has the
rest: the bound against optax, what is refused.
"""

import ctypes
import math
import os
import warnings

import numpy as np

import jax
import jax.numpy as jnp

try:  # jax >= 0.5
    from jax import ffi as _ffi
except ImportError:  # jax 0.4.x
    from jax.extend import ffi as _ffi

from . import _config
from . import _core
from . import cache as _cache
from .runtime import mpi_world

__all__ = ["adamw", "lamb", "ffi_step", "CoconetState", "SOURCE", "ALIGN"]

#: The programs the transformations run (the optimizer convention: its header).
SOURCE = os.path.join(_config.STDLIB_DIR, "optim", "torch.coco")

#: Each leaf starts at a multiple of ALIGN elements (64 bytes of f32).
ALIGN = 16

_SCHEDULES = ("ar_c", "rs_c_ag", "fused_rs_c_ag")
_TARGET = "coconet_step"
_registered = False


def _register():
    """Registers the FFI handler of _core once per process."""
    global _registered
    if _registered:
        return
    address = _core.jax_ffi_handler()
    if not address:
        raise ImportError(
            "coconet.jax: this coconet._core was built without JAX's FFI "
            "headers (no jax in the Python it was built with): install jax, "
            "then build again (tools/setup.sh installs it; tools/build.sh)")
    _ffi.register_ffi_target(_TARGET, _ffi.pycapsule(ctypes.c_void_p(address)),
                             platform="cpu")
    _registered = True


def ffi_step(step, pieces=None, deltas=()):
    """The step of `step` (a Step of a module of the cpu target, or its
    coconet._core.Program) as a JAX function, usable under jax.jit:

        f = coconet.jax.ffi_step(step)
        w, m, v = f(g, w, m, v, lr, beta1, ...)

    Its operands are the program's parameters that are not outputs, in
    order: each tensor this rank's block (any shape of as many elements, of
    the declared type), each scalar a 0-d array or a number (made a 0-d
    array of the declared type). It returns, as a tuple, the tensors the
    step updates, in order, each aliased to its operand (donate them to the
    jitted function and they are updated in place), then the outputs.

    pieces: {name: [(offset, shape), ...]}: tensor `name` is passed as a
    sequence of arrays (a pytree's leaves), each copied to its offset (in
    elements) in this rank's block, which the call keeps between steps
    (zero where no piece lies); where the step updates it, its result is a
    list of arrays of those shapes: the new values, or, for a name in
    `deltas`, new - old (optax's updates). No concatenation in XLA, and no
    aliasing for such a tensor.

    Creates the program (collective over the ranks) if it is not yet. The
    step lives as long as `step`: keep it while the function is used."""
    _register()
    program = getattr(step, "_program", step)
    if not isinstance(program, _core.Program):
        raise TypeError("coconet.jax.ffi_step: expected a Step of a coconet "
                        "module (or its coconet._core.Program), got %s"
                        % type(step).__name__)
    pieces = {k: [(int(o), tuple(int(d) for d in shape)) for o, shape in v]
              for k, v in dict(pieces or {}).items()}
    address = program.ffi_call(  # creates it; refuses the cuda target
        {k: [(o, math.prod(shape)) for o, shape in v] for k, v in pieces.items()},
        list(deltas))
    info = program.info
    operands, results, aliases = [], [], {}
    for p in info["params"]:
        dtype = np.dtype(p["numpy_dtype"])
        if p["kind"] == "scalar":
            operands.append((p["name"], dtype, None))
            continue
        _, shape = program.block(p["name"])
        shape = tuple(int(d) for d in shape)
        if p["kind"] == "output":
            results.append(jax.ShapeDtypeStruct(shape, dtype))
            continue
        if p["name"] in pieces:
            shapes = [s for _, s in pieces[p["name"]]]
            if p["written"]:
                results.extend(jax.ShapeDtypeStruct(s, dtype) for s in shapes)
            operands.append((p["name"], dtype, shapes))
            continue
        if p["written"]:
            aliases[sum(len(o[2]) if isinstance(o[2], list) else 1
                        for o in operands)] = len(results)
            results.append(jax.ShapeDtypeStruct(shape, dtype))
        operands.append((p["name"], dtype, shape))
    call = _ffi.ffi_call(_TARGET, results, has_side_effect=True,
                         input_output_aliases=aliases)
    name = info["name"]
    written = [(p["name"], p["kind"] == "output" or p["written"])
               for p in info["params"] if p["kind"] != "scalar"]

    def tensor(pname, dtype, shape, x):
        x = jnp.asarray(x)
        if x.dtype != dtype:
            raise TypeError("%s: '%s': expected %s, got %s" % (
                name, pname, dtype, x.dtype))
        if x.size != math.prod(shape):
            raise ValueError("%s: '%s': expected shape %s, got shape %s" % (
                name, pname, shape, x.shape))
        return x.reshape(shape)

    def run(*args):
        if len(args) != len(operands):
            raise TypeError("%s() takes %d arguments (%s), got %d" % (
                name, len(operands), ", ".join(o[0] for o in operands), len(args)))
        xs = []
        for (pname, dtype, shape), x in zip(operands, args):
            if shape is None:
                with warnings.catch_warnings():  # JAX's, about 64-bit types
                    warnings.simplefilter("ignore", UserWarning)
                    x = jnp.asarray(x, dtype=dtype)
                if x.dtype != dtype:  # a 64-bit type without jax_enable_x64
                    raise TypeError(
                        "%s: '%s' is %s, which JAX makes %s: enable 64-bit "
                        "types (jax.config.update('jax_enable_x64', True))"
                        % (name, pname, dtype, x.dtype))
                if x.ndim != 0:
                    raise ValueError("%s: '%s' is a scalar; got an array of "
                                     "shape %s" % (name, pname, x.shape))
                xs.append(x)
            elif isinstance(shape, list):
                x = list(x)
                if len(x) != len(shape):
                    raise ValueError("%s: '%s': expected %d pieces, got %d" % (
                        name, pname, len(shape), len(x)))
                xs.extend(tensor("%s' piece '%d" % (pname, j), dtype, s, y)
                          for j, (s, y) in enumerate(zip(shape, x)))
            else:
                xs.append(tensor(pname, dtype, shape, x))
        out = list(call(*xs, call=np.int64(address)))
        grouped = []
        for pname, is_written in written:
            if not is_written:
                continue
            k = len(pieces[pname]) if pname in pieces else 0
            if k:
                grouped.append(out[:k])
                out = out[k:]
            else:
                grouped.append(out.pop(0))
        return tuple(grouped)

    run.program = program
    run.step = step
    return run


# --- optax -----------------------------------------------------------------------

class CoconetState(tuple):
    """The state of adamw and lamb: (count, m, v); count the number of
    updates (int32, as optax's), m and v this rank's block of the flat
    moments (the whole buffer where the schedule does not shard them)."""
    __slots__ = ()

    def __new__(cls, count, m, v):
        return tuple.__new__(cls, (count, m, v))

    count = property(lambda self: self[0])
    m = property(lambda self: self[1])
    v = property(lambda self: self[2])

    def __repr__(self):
        return "CoconetState(count=%r, m=%r, v=%r)" % self


jax.tree_util.register_pytree_node(
    CoconetState, lambda s: (tuple(s), None), lambda _, c: CoconetState(*c))


def _world(communicator):
    """The number of ranks of `communicator` (None: MPI_COMM_WORLD)."""
    return mpi_world(communicator, "coconet.jax",
                     "the step's program is created over MPI's ranks")[1]


class _Layout:
    """Where a pytree's leaves lie in the program's flat buffers: each leaf
    at a multiple of ALIGN, the whole padded to a multiple of ALIGN times
    the ranks (the padding is the last leaf's segment)."""

    def __init__(self, leaves, treedef, ranks):
        self.treedef = treedef
        self.shapes = [tuple(x.shape) for x in leaves]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.offsets, self.lengths = [], []
        n = 0
        for k in self.sizes:
            self.offsets.append(n)
            self.lengths.append(-(-k // ALIGN) * ALIGN)
            n += self.lengths[-1]
        quantum = ALIGN * ranks
        total = max(-(-n // quantum) * quantum, quantum)
        self.lengths[-1] += total - n
        self.n = total

    def unflatten(self, flat):
        return self.treedef.unflatten(
            [flat[o:o + k].reshape(s)
             for o, k, s in zip(self.offsets, self.sizes, self.shapes)])


def _check_leaves(leaves, what):
    for i, x in enumerate(leaves):
        dtype = getattr(x, "dtype", None)
        if dtype != jnp.float32:
            raise TypeError(
                "coconet.jax: %s leaf %d (shape %s) is %s: coconet.jax's "
                "optimizers step float32 parameters" % (
                    what, i, tuple(getattr(x, "shape", ())), dtype))
    if not leaves:
        raise ValueError("coconet.jax: the parameters have no leaves")


def _mask_vector(mask, params, treedef, count):
    """Per leaf 1.0 where weight decay applies (optax's `mask`: a pytree of
    bools like params, or a function of params giving one; None: every
    leaf)."""
    if mask is None:
        return np.ones(count, np.float32)
    tree = mask(params) if callable(mask) else mask
    flags = treedef.flatten_up_to(tree)
    return np.array([1.0 if bool(f) else 0.0 for f in flags], np.float32)


class _Transformation:
    """What adamw and lamb share: the program made at init for the
    pytree's layout, the FFI call with the leaves as pieces."""

    def __init__(self, program, learning_rate, b1, b2, eps, weight_decay,
                 mask, schedule, communicator, average, machine, cache_dir):
        if not callable(learning_rate):
            learning_rate = float(learning_rate)
            if not learning_rate >= 0.0:
                raise ValueError("coconet.jax: learning_rate must be >= 0, got %r"
                                 % learning_rate)
        for name, b in (("b1", b1), ("b2", b2)):
            if not 0.0 <= float(b) < 1.0:
                raise ValueError("coconet.jax: %s must be in [0, 1), got %r"
                                 % (name, b))
        if not float(eps) >= 0.0:
            raise ValueError("coconet.jax: eps must be >= 0, got %r" % eps)
        if not float(weight_decay) >= 0.0:
            raise ValueError("coconet.jax: weight_decay must be >= 0, got %r"
                             % weight_decay)
        if schedule not in (None, "auto") + _SCHEDULES:
            raise ValueError(
                "coconet.jax: schedule is one of %s, 'auto' or None, not %s"
                % (", ".join(repr(s) for s in _SCHEDULES), ascii(schedule)[:64]))
        if schedule == "auto" and not machine:
            raise ValueError("coconet.jax: schedule='auto' needs machine= (a "
                             "machine file's name or path, e.g. 'cpu-2x1')")
        self.program = program
        self.lr = learning_rate
        self.b1, self.b2, self.eps = float(b1), float(b2), float(eps)
        self.wd = float(weight_decay)
        self.mask = mask
        self.schedule = schedule
        self.communicator = communicator
        self.average = bool(average)
        self.machine = machine
        self.cache_dir = cache_dir
        self.ranks = _world(communicator)
        self.made = {}  # per layout: (layout, FFI step function, Step)

    def _made(self, leaves, treedef):
        key = (treedef, tuple(tuple(x.shape) for x in leaves))
        if key in self.made:
            return self.made[key]
        layout = _Layout(leaves, treedef, self.ranks)
        full = None if self.schedule is None else (
            self.schedule if self.schedule == "auto" else
            "%s_%s" % (self.program, self.schedule))
        extra = {}
        if self.schedule == "auto":
            extra = dict(size={"N": layout.n, "T": len(leaves)},
                         ranks=self.ranks, machine=self.machine)
        module = _cache.load(SOURCE, self.program, full, "cpu",
                             cache_dir=self.cache_dir, **extra)
        step = module.Step(self.communicator, sizes={"N": layout.n, "T": len(leaves)},
                           tables={"layers": layout.lengths})
        where = list(zip(layout.offsets, layout.shapes))
        made = (layout, ffi_step(step, pieces={"g": where, "w": where},
                                 deltas=("w",)), step)
        self.made[key] = made
        return made

    def init(self, params):
        leaves, treedef = jax.tree_util.tree_flatten(params)
        _check_leaves(leaves, "parameter")
        layout, _, step = self._made(leaves, treedef)
        _, shape = step.block("m")
        # Two arrays, not one twice: each may be donated.
        return CoconetState(jnp.zeros([], jnp.int32),
                            jnp.zeros(tuple(shape), jnp.float32),
                            jnp.zeros(tuple(shape), jnp.float32))

    def update(self, updates, state, params=None):
        if params is None:
            raise ValueError("coconet.jax: %s needs the parameters: "
                             "update(grads, state, params)" % self.program)
        leaves, treedef = jax.tree_util.tree_flatten(params)
        _check_leaves(leaves, "parameter")
        grads = treedef.flatten_up_to(updates)
        _check_leaves(grads, "gradient")
        layout, run, _ = self._made(leaves, treedef)
        count, m, v = state
        t = count + 1
        lr = self.lr(count) if callable(self.lr) else self.lr
        lr = jnp.asarray(lr, jnp.float32)
        tf = t.astype(jnp.float32)
        bc1 = 1.0 - jnp.asarray(self.b1, jnp.float32) ** tf
        sbc2 = jnp.sqrt(1.0 - jnp.asarray(self.b2, jnp.float32) ** tf)
        n = len(leaves)
        wd = jnp.asarray(_mask_vector(self.mask, params, treedef, n) * self.wd,
                         jnp.float32)
        ones = jnp.ones([n], jnp.float32)
        vectors = self._vectors(lr, wd, bc1, sbc2, ones)
        scalars = (1.0 / self.ranks if self.average else 1.0, self.b1, self.b2,
                   1.0 - self.b1, 1.0 - self.b2, self.eps)
        # The leaves go in as they are (the call stages them in its flat
        # buffers); the weights come back as optax's updates, new - old.
        deltas, m1, v1 = run(grads, leaves, m, v, ones, *vectors, *scalars)
        return treedef.unflatten(deltas), CoconetState(t, m1, v1)


class _AdamW(_Transformation):
    def _vectors(self, lr, wd, bc1, sbc2, ones):
        # torch_adam's AdamW: ss = lr / bc1, no L2 term, decay = 1 - lr * wd.
        return (ones * (lr / bc1), jnp.zeros_like(ones), 1.0 - lr * wd,
                ones * sbc2)


class _Lamb(_Transformation):
    def _vectors(self, lr, wd, bc1, sbc2, ones):
        return (ones * lr, wd, ones * bc1, ones * sbc2)


def _transformation(impl):
    import optax
    return optax.GradientTransformation(impl.init, impl.update)


def _refuse(what, **given):
    for name, (value, default) in given.items():
        if value != default:
            raise ValueError("coconet.jax.%s: %s=%r is not supported (only %r)"
                             % (what, name, value, default))


def adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0,
          mu_dtype=None, weight_decay=1e-4, mask=None, *, nesterov=False,
          schedule="rs_c_ag", communicator=None, average=True, machine=None,
          cache_dir=None):
    """optax.adamw as a compiled step: AdamW with decoupled weight decay,
    the gradients averaged over the ranks first (`average=False`: summed).
    learning_rate: a number or optax's schedule (a function of the count).
    mask: optax's (which leaves decay). eps_root, mu_dtype and nesterov
    only at their defaults."""
    _refuse("adamw", eps_root=(eps_root, 0.0), mu_dtype=(mu_dtype, None),
            nesterov=(nesterov, False))
    return _transformation(_AdamW("torch_adam", learning_rate, b1, b2, eps,
                                  weight_decay, mask, schedule, communicator,
                                  average, machine, cache_dir))


def lamb(learning_rate, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0,
         weight_decay=0.0, mask=None, *, schedule="rs_c_ag", communicator=None,
         average=True, machine=None, cache_dir=None):
    """optax.lamb as a compiled step: AdamW's direction scaled per leaf by
    its trust ratio ||w|| / ||u|| (1 where either is 0), the gradients
    averaged over the ranks first. The arguments as adamw's."""
    _refuse("lamb", eps_root=(eps_root, 0.0))
    return _transformation(_Lamb("torch_lamb", learning_rate, b1, b2, eps,
                                 weight_decay, mask, schedule, communicator,
                                 average, machine, cache_dir))
