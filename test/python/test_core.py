"""coconet._core against a hand-written program library (fake_program.cpp).

    PYTHONPATH=build/python python3 test/python/test_core.py _fake.so

Every refusal: the exception's type, a message that starts with the
program's name and names the parameter, and nothing done: no array
changed, the step not called. The happy path with NumPy arrays and PyTorch
tensors (skipped, saying why, without torch): the results, the callers' own
memory updated (zero-copy), outputs allocated of the inputs' kind. Ends with
'N passed, N failed'; exits 1 on a failure.
"""

import ctypes
import os
import sys
import traceback

import numpy as np

import coconet

LIB = os.path.abspath(sys.argv[1])
FAKE = ctypes.CDLL(LIB)  # the same handle coconet._core opens: its counters
NAME = "fake_prog"

f32, f16 = np.float32, np.float16
results = {"passed": 0, "failed": 0, "skipped": 0}


def check(fn):
    """Runs test `fn` now, printing ok/FAILED with its name."""
    try:
        fn()
    except SkipTest as e:
        results["skipped"] += 1
        print("skipped: %s: %s" % (fn.__name__, e), flush=True)
    except Exception:
        results["failed"] += 1
        print("FAILED: %s" % fn.__name__, flush=True)
        traceback.print_exc(file=sys.stdout)
    else:
        results["passed"] += 1
        print("ok: %s" % fn.__name__, flush=True)
    return fn


class SkipTest(Exception):
    pass


def program(rank=1, size=2, **kw):
    os.environ["FAKE_RANK"] = str(rank)
    os.environ["FAKE_SIZE"] = str(size)
    return coconet.Program(LIB, **kw)


def arrays(n=8, size=2, h=2):
    """Rank 1 of `size`'s arguments: g w m x (and out), NumPy."""
    return dict(g=np.arange(n, dtype=f32), w=np.ones(n, f32),
                m=np.full(n // size, 10, f32), x=np.zeros(4 * h // size, f16),
                out=np.zeros(n, f32))


def call_args(a, lr=0.5, step=3, out="default"):
    return (a["g"], a["w"], a["m"], a["x"], lr, step,
            a["out"] if out == "default" else out)


def snapshot(args):
    snap = []
    for v in args:
        if isinstance(v, np.ndarray):
            snap.append((v, v.tobytes()))
        elif type(v).__module__.startswith("torch"):
            snap.append((v, v.detach().clone()))
    return snap


def unchanged(snap):
    for v, before in snap:
        if isinstance(v, np.ndarray):
            assert v.tobytes() == before, "an array changed"
        else:
            import torch

            assert torch.equal(v.detach(), before), "a tensor changed"


def refused(prog, exc, args, names, contains=()):
    """prog(*args) raises `exc` naming each of `names`, with nothing done."""
    snap = snapshot(args)
    calls, creates = FAKE.fake_calls(), FAKE.fake_creates()
    try:
        prog(*args)
    except exc as e:
        message = str(e)
    else:
        raise AssertionError("no %s was raised" % exc.__name__)
    assert message.startswith(NAME), "the message does not start with the name: " + message
    for n in names:
        assert "'%s'" % n in message, "the message does not name '%s': %s" % (n, message)
    for c in contains:
        assert c in message, "the message does not say %r: %s" % (c, message)
    unchanged(snap)
    assert FAKE.fake_calls() == calls, "the step ran"
    assert FAKE.fake_creates() == creates, "the program was created"
    return message


def created_program():
    """Rank 1 of 2, created by a first call (N=8 read from 'g')."""
    p = program(sizes={"H": 2})
    a = arrays()
    p(*call_args(a))
    assert p.created
    return p


# --- Refusals: every check, nothing done ------------------------------------------------


@check
def wrong_dtype():
    p, a = created_program(), arrays()
    a["w"] = a["w"].astype(np.float64)
    m = refused(p, TypeError, call_args(a), ["w"], ["expected f32 (float32), got float64"])
    assert m.startswith(NAME + ": parameter 'w'"), m


@check
def wrong_dtype_before_creation():
    p, a = program(sizes={"H": 2}), arrays()
    a["x"] = a["x"].astype(f32)
    refused(p, TypeError, call_args(a), ["x"], ["expected f16 (float16), got float32"])
    assert not p.created


@check
def wrong_dtype_of_the_last_array():
    # The last array's check fails: the arrays before it stay untouched.
    p, a = created_program(), arrays()
    a["out"] = a["out"].astype(np.int32)
    refused(p, TypeError, call_args(a), ["out"], ["got int32"])


@check
def wrong_ndim():
    p, a = created_program(), arrays()
    a["w"] = a["w"].reshape(2, 4)
    refused(p, ValueError, call_args(a), ["w"], ["has 1 dimension", "(2, 4)"])


@check
def wrong_shape():
    p, a = created_program(), arrays()
    a["g"] = np.arange(7, dtype=f32)
    refused(p, ValueError, call_args(a), ["g"], ["expected shape (8,)", "got shape (7,)"])


@check
def size_disagrees_with_another_parameter():
    p, a = program(sizes={"H": 2}), arrays()
    a["w"] = np.ones(6, f32)
    refused(p, ValueError, call_args(a), ["w", "g"], ["N=8 from 'g'", "got shape (6,)"])
    # Nothing was settled: the next call reads the sizes again.
    assert not p.created and "N" not in p.sizes, p.sizes
    b = arrays(n=4)
    p(*call_args(b))
    assert p.sizes == {"P": 2, "N": 4, "H": 2}, p.sizes


@check
def sliced_block_of_the_wrong_length():
    p, a = created_program(), arrays()
    a["m"] = np.zeros(8, f32)  # the whole tensor, not rank 1's half
    refused(p, ValueError, call_args(a), ["m"],
            ["this rank (1 of 2) holds elements [4, 8) of N=8", "a block of shape (4,)",
             "got shape (8,)"])


@check
def sliced_block_of_an_expression():
    p, a = created_program(), arrays()
    a["x"] = np.zeros(8, f16)
    refused(p, ValueError, call_args(a), ["x"], ["[4, 8) of 4*H=8 (H=2)"])


@check
def not_contiguous():
    p, a = created_program(), arrays()
    a["m"] = np.zeros(8, f32)[::2]
    refused(p, ValueError, call_args(a), ["m"], ["not contiguous (strides (2,))"])


@check
def read_only_array_for_a_written_parameter():
    p, a = created_program(), arrays()
    a["w"].flags.writeable = False
    refused(p, ValueError, call_args(a), ["w"], ["read-only"])


@check
def read_only_array_for_a_read_parameter_is_fine():
    p, a = created_program(), arrays()
    a["g"].flags.writeable = False
    p(*call_args(a))


@check
def same_array_twice_one_written():
    p, a = created_program(), arrays()
    a["g"] = a["w"]
    refused(p, ValueError, call_args(a), ["g", "w"],
            ["share memory", "'w' is updated in place"])


@check
def overlapping_views_one_written():
    p, a = created_program(), arrays()
    buf = np.zeros(12, f32)
    a["w"], a["out"] = buf[:8], buf[4:]
    refused(p, ValueError, call_args(a), ["w", "out"], ["share memory"])


@check
def two_read_parameters_may_share_memory():
    p = program(sizes={"H": 2})
    a = arrays()
    a["g"] = np.zeros(8, f32)
    a["x"] = a["g"].view(f16)[:4]  # the same bytes, both read
    p(*call_args(a))


@check
def wrong_argument_count():
    p, a = created_program(), arrays()
    refused(p, TypeError, call_args(a)[:5], [],
                [NAME + "() takes 7 arguments (g, w, m, x, lr, step, out), got 5"])
    refused(p, TypeError, call_args(a) + (a["out"],), [], ["got 8"])


@check
def float_for_an_int_scalar():
    p, a = created_program(), arrays()
    refused(p, TypeError, call_args(a, step=1.5), ["step"],
            ["expected an integer (i32), got float"])


@check
def out_of_range_int():
    p, a = created_program(), arrays()
    refused(p, ValueError, call_args(a, step=2**40), ["step"],
            ["%d does not fit i32" % 2**40])
    refused(p, ValueError, call_args(a, step=-2**31 - 1), ["step"], ["does not fit i32"])


@check
def bool_and_str_for_a_float_scalar():
    p, a = created_program(), arrays()
    refused(p, TypeError, call_args(a, lr=True), ["lr"], ["expected a number (f32), got bool"])
    refused(p, TypeError, call_args(a, lr="0.5"), ["lr"], ["got str"])


@check
def float_scalar_out_of_its_range():
    # The rule of `coconetc sim --set` and the drivers: a finite number that
    # overflows f32, or a non-zero one that rounds to 0 in it, is refused
    # (1e300 became inf and the step ran: AdamW's weights went to -inf).
    p, a = created_program(), arrays()
    for lr, says in ((1e300, "1e+300 is out of the range of f32 (largest finite "
                              "value 3.4028235e38)"),
                     (-1e39, "-1e+39 is out of the range of f32"),
                     (np.float64(3.5e38), "3.5e+38 is out of the range of f32"),
                     (1e-50, "1e-50 rounds to 0 in f32"),
                     (-1e-46, "-1e-46 rounds to 0 in f32"),
                     (10**400, "is out of the range of f32")):
        refused(p, ValueError, call_args(a, lr=lr), ["lr"], [says])
    # The largest f32, its smallest subnormal, zeros, and infinities and NaN
    # given as such are values.
    for lr in (3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45,
               0.0, -0.0, float("inf"), float("-inf"), float("nan")):
        p(*call_args(arrays(), lr=lr))


@check
def integer_scalar_that_will_not_convert():
    # __index__ that raises (a NumPy array of two elements; torch.tensor(1.5)
    # below): the module's TypeError naming the parameter, not NumPy's own.
    p, a = created_program(), arrays()
    refused(p, TypeError, call_args(a, step=np.array([1, 2])), ["step"],
            ["expected an integer (i32), got ndarray: "])
    try:
        import torch
    except ImportError:
        return
    refused(p, TypeError, call_args(a, step=torch.tensor(1.5)), ["step"],
            ["expected an integer (i32), got torch.Tensor: "])


@check
def missing_size_h():
    p, a = program(), arrays()
    refused(p, ValueError, call_args(a), ["H"], ["cannot tell size 'H'", "sizes={'H': ...}"])
    assert not p.created


@check
def not_an_array():
    p, a = created_program(), arrays()
    a["g"] = [1.0] * 8
    refused(p, TypeError, call_args(a), ["g"], ["expected an array", "got list"])


@check
def output_of_the_wrong_shape():
    p, a = created_program(), arrays()
    a["out"] = np.zeros(4, f32)
    refused(p, ValueError, call_args(a), ["out"], ["expected shape (8,)"])


@check
def a_failing_step_raises():
    p, a = created_program(), arrays()
    try:
        p(*call_args(a, step=-1))
    except RuntimeError as e:
        assert str(e) == NAME + ": step -1 is refused (the fake's failure)", str(e)
    else:
        raise AssertionError("no RuntimeError")


@check
def reentrant_call_from_allocate():
    a = arrays()

    def allocate(shape, dtype, like):
        p(*call_args(a))

    p = program(sizes={"H": 2}, allocate=allocate)
    refused(p, RuntimeError, call_args(a, out=None), [], ["one step at a time"])


class DeviceArray:
    """A NumPy array's memory through DLPack, claiming to be on another
    device (DLPack device type 2: CUDA, 3: CUDA host memory)."""

    class _Device(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int32), ("id", ctypes.c_int32)]

    class _DType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16)]

    class _Tensor(ctypes.Structure):
        pass

    _Tensor._fields_ = [("data", ctypes.c_void_p), ("device", _Device),
                        ("ndim", ctypes.c_int32), ("dtype", _DType),
                        ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.POINTER(ctypes.c_int64)),
                        ("byte_offset", ctypes.c_uint64),
                        ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]
    _NAME = b"dltensor"
    _new = ctypes.pythonapi.PyCapsule_New
    _new.restype, _new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                     ctypes.c_void_p]

    def __init__(self, array, device_type, device_id=0):
        self.array, self.device = array, (device_type, device_id)
        self._made = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kw):
        a = self.array
        shape = (ctypes.c_int64 * a.ndim)(*a.shape)
        t = self._Tensor(a.ctypes.data, self._Device(*self.device), a.ndim,
                         self._DType(2, 8 * a.itemsize, 1), shape, None, 0, None, None)
        self._made.append((t, shape))  # kept for the array's life
        return self._new(ctypes.addressof(t), self._NAME, None)


@check
def array_on_another_device():
    p, a = created_program(), arrays()
    a0 = a["w"].copy()
    refused(p, ValueError, call_args(dict(a, w=DeviceArray(a["w"], 2))), ["w"],
            ["'w' is on cuda:0; the cpu target takes host arrays"])
    assert np.array_equal(a["w"], a0)
    # CUDA host (pinned) memory is host memory.
    p(*call_args(dict(a, w=DeviceArray(a["w"], 3))))
    assert np.array_equal(a["w"], a0 + 0.5 * a["g"])


# --- Construction -----------------------------------------------------------------------


def raises(exc, fn, *contains):
    try:
        fn()
    except exc as e:
        for c in contains:
            assert c in str(e), "%r not in: %s" % (c, e)
        return str(e)
    raise AssertionError("no %s" % exc.__name__)


@check
def construction_refusals():
    raises(ValueError, lambda: program(sizes={"Q": 2}), NAME, "'Q' is not a size",
           "P, N, H")
    raises(ValueError, lambda: program(sizes={"P": 3}), "P=3 make 3 ranks",
           "the communicator has 2")
    raises(ValueError, lambda: program(sizes={"N": 0}), "size 'N' = 0")
    raises(TypeError, lambda: program(sizes={"N": 8.0}), "size 'N'", "expected an integer")
    raises(ValueError, lambda: program(tables={"T": [1]}), "'T' is not a table")
    raises(ImportError, lambda: coconet.Program("/nonexistent/_x.so"), "/nonexistent/_x.so")
    # A library is a regular file: dlopen waited for ever on a FIFO.
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "_fifo.so")
        os.mkfifo(fifo)
        raises(ImportError, lambda: coconet.Program(fifo), fifo, "not a regular file")
        raises(ImportError, lambda: coconet.Program(d), "it is a directory")
    raises(ImportError, lambda: coconet.Program("/dev/zero"), "not a regular file")
    # Its path is echoed escaped and cut.
    m = raises(ImportError, lambda: coconet.Program("/x/\x1b]0;t\x07" + "p" * 5000 + ".so"))
    assert "\x1b" not in m and "\\x1b]0;t\\x07" in m and len(m) < 700, ascii(m[:200])
    raises(ImportError, lambda: coconet.Program(coconet._core.__file__),
           "coconet_python_program")
    os.environ["FAKE_ABI"] = "99"
    try:
        raises(ImportError, lambda: program(),
               "built for coconet Python ABI 99, this coconet has %d: rebuild it" % coconet.ABI)
    finally:
        del os.environ["FAKE_ABI"]
    # The program's description (coconet/description.h) is checked before
    # anything reads it: its version, a layout past the tensor's rank, a
    # result no block holds, none at all.
    for broken, says in (("1", "description version 99, this coconet reads 1"),
                         ("2", "layout of m"), ("3", "result 0"),
                         ("4", "no description")):
        os.environ["FAKE_BROKEN"] = broken
        try:
            raises(ImportError, lambda: program(),
                   "a malformed program description (%s): rebuild it" % says)
        finally:
            del os.environ["FAKE_BROKEN"]


@check
def table_refusals_at_construction():
    # tables= is checked as sizes= is, when the object is made: a 2-D array
    # (NumPy's own TypeError), a negative length (the RuntimeError of
    # create(), at the first call), a length that is not an integer.
    os.environ["FAKE_TABLE"] = "1"
    try:
        calls, creates = FAKE.fake_calls(), FAKE.fake_creates()
        for tables, exc, says in (
                ({"layers": np.zeros((2, 3), np.int64)}, ValueError,
                 "table 'layers': expected a 1-D sequence of lengths, got "
                 "ndarray of shape (2, 3)"),
                ({"layers": np.int64(4)}, TypeError, "expected a sequence of ints"),
                ({"layers": [3, -1, 6]}, ValueError,
                 "table 'layers'[1] = -1: a segment's length is 0 or more"),
                ({"layers": np.array([3, -1, 6])}, ValueError,
                 "table 'layers'[1] = -1"),
                ({"layers": [3, 2.5]}, TypeError,
                 "table 'layers'[1]: expected an integer, got float"),
                ({"layers": [3, np.array([1, 2])]}, TypeError,
                 "table 'layers'[1]: expected an integer, got ndarray: "),
                ({"layers": []}, ValueError, "the table 'layers' is empty")):
            message = raises(exc, lambda: program(tables=tables), *[says])
            assert message.startswith(NAME + ": "), message
        assert FAKE.fake_calls() == calls and FAKE.fake_creates() == creates
        # A good table: H is its length.
        p = program(tables={"layers": np.array([4, 0, 4])})
        a = arrays(h=3)
        a["x"] = np.zeros(6, f16)
        p(*call_args(a))
        assert p.created
    finally:
        del os.environ["FAKE_TABLE"]


@check
def sizes_settled_at_construction():
    p = program(sizes={"N": 8, "H": 2})
    assert p.created and p.sizes == {"P": 2, "N": 8, "H": 2}, p.sizes
    assert p.block("m") == ((4,), (4,)) and p.block("x") == ((4,), (4,)), p.block("m")
    assert p.block("g") == ((0,), (8,))
    assert p.path == "the fake's path"
    raises(ValueError, lambda: p.block("lr"), "'lr' is not a tensor")
    q = program(sizes={"H": 2})
    assert not q.created and q.path is None and q.sizes == {"P": 2, "H": 2}, q.sizes
    raises(ValueError, lambda: q.block("m"), "not created yet")
    raises(ValueError, q.create, "size 'N'")
    assert (q.rank, q.world_size, q.name) == (1, 2, NAME)
    info = q.info
    assert [d["name"] for d in info["params"]] == ["g", "w", "m", "x", "lr", "step", "out"]
    assert info["params"][2]["layout"] == [0] and info["params"][3]["dims"] == [None]
    assert info["params"][6]["kind"] == "output" and info["params"][1]["written"]


@check
def one_rank_the_axis_is_the_world():
    p = program(rank=0, size=1, sizes={"H": 1})
    a = arrays(size=1, h=1)
    p(*call_args(a))
    assert p.sizes == {"P": 1, "N": 8, "H": 1}
    assert (a["m"] == 13).all()


@check
def cuda_runtime_entry_points_are_the_cuda_targets():
    # The CPU target's description has no CUDA runtime: the NCCL and device
    # functions refuse its library by name; synchronize() does nothing (a
    # CPU step has run when it returns).
    for fn, args in ((coconet._core.nccl_unique_id, ()),
                     (coconet._core.device_count, ()),
                     (coconet._core.nccl_init, (b"x" * 128, 0, 1, 0)),
                     (coconet._core.nccl_destroy, (0,))):
        raises(ValueError, lambda: fn(LIB, *args), LIB, "cpu target",
               "the cuda target's")
    raises(ValueError, lambda: coconet.NcclCommunicator(LIB, unique_id=b"x" * 128,
                                                        rank=0, size=1, device=0),
           "cpu target")
    raises(TypeError, lambda: coconet.NcclCommunicator(LIB, unique_id=b"x"),
           "rank and size")
    raises(TypeError, lambda: coconet.NcclCommunicator(42), "int")
    p = created_program()
    p.synchronize()


@check
def keep_lives_as_long_as_the_program():
    # What the handles belong to (a Step's communicator and stream) is
    # released only after the program is destroyed.
    import gc
    import weakref

    class World:
        pass

    world = World()
    gone = weakref.ref(world)
    destroys = FAKE.fake_destroys()
    p = program(sizes={"N": 8, "H": 2}, keep=(world, 0))
    del world
    gc.collect()
    assert gone() is not None
    del p
    gc.collect()
    assert gone() is None and FAKE.fake_destroys() == destroys + 1


# --- The happy path -----------------------------------------------------------------------


def expect(a0, lr, step):
    w = a0["w"] + np.float32(lr) * a0["g"]
    return w, a0["m"] + np.float32(step)


@check
def numpy_in_place_and_outputs():
    p, a = program(sizes={"H": 2}), arrays()
    a0 = {k: v.copy() for k, v in a.items()}
    ptrs = {k: v.ctypes.data for k, v in a.items()}
    calls = FAKE.fake_calls()
    (out,) = p(*call_args(a, lr=0.25, step=np.int64(4)))
    assert FAKE.fake_calls() == calls + 1
    w, m = expect(a0, 0.25, 4)
    assert out is a["out"], "the output passed is not the one returned"
    assert np.array_equal(a["w"], w) and np.array_equal(a["m"], m)
    assert np.array_equal(out, w) and np.array_equal(a["g"], a0["g"])
    assert all(a[k].ctypes.data == ptrs[k] for k in a), "an array moved"
    # Output None: allocated, a NumPy array.
    (out2,) = p(*call_args(a, lr=np.float32(0.25), step=1, out=None))
    assert isinstance(out2, np.ndarray) and out2.dtype == f32 and out2.shape == (8,)
    assert np.array_equal(out2, a["w"])


@check
def numpy_scalars_and_0d_arrays():
    p, a = created_program(), arrays()
    p(*call_args(a, lr=np.float64(0.5), step=np.int32(2)))
    p(*call_args(a, lr=np.array(0.5, f32), step=np.array(2)))
    p(*call_args(a, lr=1, step=2))


def need_torch():
    try:
        import torch
    except ImportError as e:
        raise SkipTest("no torch (%s)" % e)
    return torch


@check
def torch_in_place_and_outputs():
    torch = need_torch()
    p = program(sizes={"H": 2})
    t = {k: torch.from_numpy(v) for k, v in arrays().items()}
    t0 = {k: v.clone() for k, v in t.items()}
    ptrs = {k: v.data_ptr() for k, v in t.items()}
    (out,) = p(t["g"], t["w"], t["m"], t["x"], 0.5, 3, None)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32, type(out)
    w = t0["w"] + 0.5 * t0["g"]
    assert torch.equal(t["w"], w) and torch.equal(out, w)
    assert torch.equal(t["m"], t0["m"] + 3)
    assert all(t[k].data_ptr() == ptrs[k] for k in t), "a tensor moved"
    (out2,) = p(t["g"], t["w"], t["m"], t["x"], torch.tensor(0.5), 3, t["out"])
    assert out2 is t["out"]


@check
def torch_refusals():
    torch = need_torch()
    p = created_program()
    t = {k: torch.from_numpy(v) for k, v in arrays().items()}
    args = lambda **kw: tuple(kw.get(k, t[k]) for k in ("g", "w", "m", "x")) + (
        0.5, 3, kw.get("out", t["out"]))
    refused(p, TypeError, args(w=torch.ones(8, dtype=torch.float64)), ["w"],
            ["got float64"])
    refused(p, ValueError, args(m=torch.zeros(8)[::2]), ["m"], ["not contiguous"])
    refused(p, ValueError, args(m=torch.zeros(8)), ["m"], ["[4, 8)"])
    refused(p, ValueError, args(g=t["w"]), ["g", "w"], ["share memory"])
    refused(p, ValueError, args(m=torch.zeros(1).expand(4)), ["m"], ["strides (0,)"])


@check
def torch_parameters_that_require_grad():
    # Model parameters (requires_grad) are updated in place, as an optimizer
    # does under torch.no_grad().
    torch = need_torch()
    p = created_program()
    t = {k: torch.from_numpy(v) for k, v in arrays().items()}
    w = torch.nn.Parameter(torch.ones(8))
    p(t["g"], w, t["m"], t["x"], 0.5, 3, t["out"])
    assert torch.equal(w.detach(), 1 + 0.5 * t["g"]) and w.requires_grad


print("%d passed, %d failed, %d skipped" % (results["passed"], results["failed"],
                                           results["skipped"]))
sys.exit(1 if results["failed"] else 0)
