"""Property tests of coconet._core's argument checks (CTest python-properties).

    PYTHONPATH=build/python python3 test/python/test_properties.py _fake.so
        [--cases N] [--seed S]

A seeded generator draws arguments for the hand-written program of
fake_program.cpp (test_core.py's): scalars of every Python, NumPy and
PyTorch kind and of every magnitude, arrays of every element type, shape,
stride and writability, shared memory, and sizes= and tables= of every
kind. Each drawn value carries what docs/python.md's rules say of it:
accepted, or refused with TypeError or ValueError. The rules are written
here from the documentation (the ranges with NumPy's float32 and Python's
int), not read from the module. For every case:

  - accepted: the step ran once, its output is `w` after the update;
  - refused: the documented exception type, a message that starts with the
    program's name and names the parameter (or size, or table), at most 600
    characters, printable ASCII or UTF-8 without control characters
    (what a user gave is escaped and cut), no array changed, the step not
    run, the program not created.

Prints one line per failing case (its seed and what was drawn) and then
'N cases: N accepted, N refused, N failed'; exits 1 on a failure. A seeded
generator rather than hypothesis: no package to install, and a failing
case is replayed with --seed and --cases.
"""

import argparse
import ctypes
import math
import operator
import os
import random
import sys
import unicodedata
import warnings

import numpy as np

import coconet

ap = argparse.ArgumentParser()
ap.add_argument("library")
ap.add_argument("--cases", type=int, default=3000)
ap.add_argument("--seed", type=int, default=48)
args = ap.parse_args()

# NumPy's deprecation of float() on a 1-element array: a value still.
warnings.filterwarnings("ignore", category=DeprecationWarning)

LIB = os.path.abspath(args.library)
FAKE = ctypes.CDLL(LIB)
NAME = "fake_prog"
f32, f16 = np.float32, np.float16

try:
    import torch
except ImportError:  # the torch cases are drawn only with torch
    torch = None

I32_MIN, I32_MAX = -2**31, 2**31 - 1
F32_MAX = float(np.finfo(np.float32).max)


def program(**kw):
    os.environ["FAKE_RANK"] = "1"
    os.environ["FAKE_SIZE"] = "2"
    return coconet.Program(LIB, **kw)


# --- The rules, from docs/python.md ("Scalars", "Checks and errors") -----------------


def f32_rule(x):
    """None (accepted), TypeError or ValueError for an f32 scalar `x`."""
    if isinstance(x, (bool, np.bool_, str, bytes)):
        return TypeError
    t = type(x)
    if not (hasattr(t, "__float__") or hasattr(t, "__index__")):
        return TypeError
    try:
        v = float(x)
    except OverflowError:
        return ValueError  # an int past a double
    except (TypeError, ValueError):
        return TypeError  # e.g. an array of two elements
    if math.isinf(v) or math.isnan(v):
        return None  # given as such
    with np.errstate(over="ignore", under="ignore"):
        stored = float(np.float32(v))
    if math.isinf(stored) or (stored == 0 and v != 0):
        return ValueError  # out of f32's range, or rounds to 0
    return None


def i32_rule(x):
    if isinstance(x, (bool, np.bool_)):
        return TypeError
    if not hasattr(type(x), "__index__"):
        return TypeError
    try:
        v = operator.index(x)
    except (TypeError, ValueError):
        return TypeError
    return None if I32_MIN <= v <= I32_MAX else ValueError


# --- Draws ---------------------------------------------------------------------------


class Weird:
    """An object whose conversions raise, with a long message full of
    control characters (it must come back escaped and cut)."""

    def __float__(self):
        raise ValueError("\x1b]0;pwned\x07" + "x" * 100000)

    def __index__(self):
        raise TypeError("\u202e" + "y" * 100000)


def magnitude(rng):
    """A float of any magnitude and sign, and the edges of f32."""
    pick = rng.random()
    if pick < 0.15:
        return rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan, F32_MAX,
                           -F32_MAX, np.nextafter(F32_MAX, math.inf),
                           1.401298464324817e-45, 7e-46, 1e-45, 3.4028235e38,
                           3.4028236e38, 5e-324, 1.7976931348623157e308])
    return rng.choice([-1, 1]) * 10 ** rng.uniform(-60, 308.2)


def scalar_value(rng):
    """Anything a user might pass for a scalar."""
    kind = rng.randrange(16)
    v = magnitude(rng)
    if kind == 0:
        return v
    if kind == 1:
        return rng.choice([0, 1, -1, 2**31 - 1, 2**31, -2**31, -2**31 - 1,
                           2**63, 2**64, -2**63 - 1, 10**400, -10**5000])
    if kind == 2:
        return rng.randrange(-2**70, 2**70)
    if kind == 3:
        return rng.choice([True, False, np.bool_(True)])
    if kind == 4:
        return rng.choice(["0.5", b"1", None, [1.0], (2,), {}, Weird(), object()])
    if kind == 5:
        t = rng.choice([np.float16, np.float32, np.float64])
        with np.errstate(over="ignore"):
            return t(v)
    if kind == 6:
        t = rng.choice([np.int8, np.int16, np.int32, np.int64, np.uint8,
                        np.uint32, np.uint64])
        info = np.iinfo(t)
        return t(rng.randrange(int(info.min), int(info.max) + 1))
    if kind == 7:
        with np.errstate(over="ignore"):
            return np.array(v, rng.choice([np.float32, np.float64]))
    if kind == 8:
        return np.array(rng.randrange(-2**40, 2**40))
    if kind == 9:
        return np.array([1.5, 2.5][: rng.randrange(1, 3)])
    if kind == 10:
        return np.array([3, 4][: rng.randrange(1, 3)])
    if kind == 11 and torch is not None:
        return torch.tensor(v if math.isfinite(v) else 1.0)
    if kind == 12 and torch is not None:
        return torch.tensor(rng.randrange(-2**40, 2**40))
    if kind == 13 and torch is not None:
        return torch.tensor([1.0, 2.0][: rng.randrange(1, 3)])
    if kind == 14:
        return rng.choice([0.5, 2.0, 1e-3])  # plainly good
    return rng.randrange(-5, 5)


def base_arrays():
    n, size, h = 8, 2, 2
    return dict(g=np.arange(n, dtype=f32), w=np.ones(n, f32),
                m=np.full(n // size, 10, f32), x=np.zeros(4 * h // size, f16),
                out=np.zeros(n, f32))


# (name, dtype, shape, written): the fake's tensors, rank 1 of 2, N=8, H=2.
TENSORS = [("g", f32, (8,), False), ("w", f32, (8,), True),
           ("m", f32, (4,), True), ("x", f16, (4,), False),
           ("out", f32, (8,), True)]


def array_value(rng, name, dtype, shape, written, arrays):
    """A replacement for tensor `name` and what the rules say of it."""
    kind = rng.randrange(9)
    if kind == 0:  # another element type
        t = rng.choice([np.float64, np.int32, np.int64, np.uint8, np.bool_,
                        np.float16 if dtype is f32 else np.float32])
        return np.zeros(shape, t), TypeError
    if kind == 1:  # another number of dimensions
        return np.zeros(shape + (1,), dtype), ValueError
    if kind == 2:  # another length (even: the size N read from 'g' still
        # divides over the ranks, and 'm', sliced, is the wrong block)
        return np.zeros((shape[0] + rng.choice([-2, 2, 8]),), dtype), ValueError
    if kind == 3:  # not contiguous
        return np.zeros((shape[0] * 2,), dtype)[::2], ValueError
    if kind == 4:  # read-only
        a = np.zeros(shape, dtype)
        a.setflags(write=False)
        return a, (ValueError if written else None)
    if kind == 5:  # not an array (an output passed as None is allocated)
        value = rng.choice([[0.0] * shape[0], None, "w", 3.0])
        return value, (None if value is None and name == "out" else TypeError)
    if kind == 6 and torch is not None:  # a tensor of the right kind
        return torch.zeros(shape, dtype=torch.float32 if dtype is f32
                           else torch.float16), None
    if kind == 7:  # another tensor's memory, where one of them is written
        other = next(o for o in TENSORS if o[0] != name and o[1] is dtype
                     and o[2] == shape) if any(
            o[0] != name and o[1] is dtype and o[2] == shape for o in TENSORS) else None
        if other is None:
            return np.zeros(shape, dtype), None
        shares = written or other[3]
        return arrays[other[0]], (ValueError if shares else None)
    return np.zeros(shape, dtype), None  # a fresh good array


def sizes_value(rng):
    """A sizes= dict and what the rules say: H=2 (which only sizes= can
    give) and one drawn entry, refused unless a known size's name with a
    positive int (or what has __index__) that agrees with the world (P=2)
    and the call's arrays (N=8, H=2)."""
    key = rng.choice(["N", "H", "P", "Q", "\x1b[2J", "n" * 100000, 3, None])
    value = rng.choice([8, 2, 0, -4, 2**64, 8.0, True, "8", np.int64(8),
                        np.array([8]), Weird()])
    sizes = {"H": 2}
    sizes[key] = value
    if not isinstance(key, str):
        return sizes, TypeError
    if key not in ("N", "H", "P"):
        return sizes, ValueError
    rule = i32_rule(value)  # an integer: the same notion, 64-bit range
    if rule is TypeError:
        return sizes, TypeError
    v = operator.index(value)
    if v >= 2**63 or v <= 0:
        return sizes, ValueError
    if (key, v) not in (("N", 8), ("H", 2), ("P", 2)):
        return sizes, ValueError
    return sizes, None


def tables_value(rng):
    """A tables= dict for the fake's table 'layers' (FAKE_TABLE=1; its
    count is H, its lengths sum to N: create() does not look at them)."""
    kind = rng.randrange(8)
    if kind == 0:
        return {"layers": [4, 4]}, None
    if kind == 1:
        return {"layers": np.array([4, 0], rng.choice([np.int32, np.int64,
                                                       np.uint64]))}, None
    if kind == 2:
        n = rng.randrange(2)
        lengths = [rng.randrange(-3, 5) for _ in range(2)]
        ok = all(x >= 0 for x in lengths)
        return {"layers": lengths}, (None if ok and n >= 0 else ValueError)
    if kind == 3:
        return {"layers": np.zeros((2, rng.randrange(1, 4)), np.int64)}, ValueError
    if kind == 4:
        return {"layers": rng.choice([[4, 4.0], [4, "4"], [4, None], [4, True]])}, \
            TypeError
    if kind == 5:
        return {"layers": rng.choice([4, "44", None, b"\x04\x04"])}, TypeError
    if kind == 6:
        return {rng.choice(["layer", "\x1b]0;x\x07", "t" * 100000]): [4, 4]}, \
            ValueError
    return {"layers": [2**63, 1]}, ValueError


# --- The checks ---------------------------------------------------------------------


def safe_message(m):
    if len(m) > 600:
        return "a message of %d characters" % len(m)
    for c in m:
        if unicodedata.category(c) in ("Cc", "Cf", "Co", "Cn"):
            return "a raw U+%04X" % ord(c)
    return None


def describe(v):
    if isinstance(v, np.ndarray):
        return "ndarray(%s, %s, %s)" % (v.dtype, v.shape, v.strides)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**128:
        return "int of %d bits" % v.bit_length()
    try:
        return ascii(v)[:120]
    except ValueError:  # a dict holding a huge int
        return "(not printable)"


failures = 0
counts = {"accepted": 0, "refused": 0}


def fail(case, what, message):
    global failures
    failures += 1
    print("FAILED: case %d: %s: %s" % (case, what, message[:300]), flush=True)


def expect(case, what, fn, rule, names, snap=(), created=None):
    """Runs fn(); checks it against `rule` (None: accepted)."""
    calls, creates = FAKE.fake_calls(), FAKE.fake_creates()
    try:
        fn()
    except (TypeError, ValueError) as e:
        message = str(e)
        if rule is None:
            return fail(case, what, "refused (%s): %s" % (type(e).__name__, message))
        if type(e) is not rule:
            return fail(case, what, "%s, documented %s: %s" % (
                type(e).__name__, rule.__name__, message))
        if not message.startswith(NAME + ": "):
            return fail(case, what, "the message does not start with the name: " +
                        message)
        if not any(n in message for n in names):
            return fail(case, what, "the message names none of %s: %s" % (names, message))
        bad = safe_message(message)
        if bad:
            return fail(case, what, bad + ": " + ascii(message)[:200])
        for a, before in snap:
            if a.tobytes() != before:
                return fail(case, what, "an array changed: " + message)
        if FAKE.fake_calls() != calls or FAKE.fake_creates() != creates:
            return fail(case, what, "the step ran or the program was created")
        counts["refused"] += 1
        return None
    except Exception as e:  # noqa: BLE001 - any other type is a failure
        return fail(case, what, "%s: %s" % (type(e).__name__, ascii(str(e))[:200]))
    if rule is not None:
        return fail(case, what, "accepted; documented %s" % rule.__name__)
    counts["accepted"] += 1
    return None


def run_case(case, rng):
    kind = rng.randrange(4)
    if kind in (0, 1):  # a scalar
        p = program(sizes={"H": 2})
        a = base_arrays()
        p(a["g"], a["w"], a["m"], a["x"], 0.5, 1, a["out"])  # created
        a = base_arrays()
        lr, step = 0.5, 1
        if kind == 0:
            lr = scalar_value(rng)
            rule, names = f32_rule(lr), ["'lr'"]
        else:
            step = scalar_value(rng)
            rule, names = i32_rule(step), ["'step'"]
        if rule is None and step == -1:
            step = 1
        snap = [(v, v.tobytes()) for v in a.values()]
        what = "lr=%s step=%s" % (describe(lr), describe(step))
        result = {}

        def call():
            result["out"] = p(a["g"], a["w"], a["m"], a["x"], lr, step, a["out"])
        expect(case, what, call, rule, names, snap)
        if rule is None and "out" in result:
            if not np.array_equal(result["out"][0], a["w"], equal_nan=True):
                fail(case, what, "the output is not w after the step")
        return
    if kind == 2:  # an array
        p = program(sizes={"H": 2})
        a = base_arrays()
        name, dtype, shape, written = TENSORS[rng.randrange(len(TENSORS))]
        value, rule = array_value(rng, name, dtype, shape, written, a)
        a[name] = value
        snap = [(v, v.tobytes()) for v in a.values() if isinstance(v, np.ndarray)]
        what = "%s=%s" % (name, describe(value))
        # A shared array is named with the other parameter.
        names = ["'%s'" % name] + ["'%s'" % o[0] for o in TENSORS]
        expect(case, what, lambda: p(a["g"], a["w"], a["m"], a["x"], 0.5, 1,
                                     a["out"]), rule, names if rule is ValueError
               else ["'%s'" % name], snap)
        return
    # sizes= and tables= at construction
    if rng.random() < 0.5:
        sizes, rule = sizes_value(rng)
        key = list(sizes)[-1]
        names = ["sizes", "size", "'%s'" % key if isinstance(key, str) else "sizes",
                 "P=", "N", "H"]

        # Refused when the object is made, or (a size the arrays disagree
        # with) at the first call, which then changes nothing; all sizes
        # given create the program when it is made.
        made = {}

        def make():
            made["p"] = program(sizes=sizes)
        creates = FAKE.fake_creates()
        try:
            make()
        except Exception:  # noqa: BLE001 - expect() says which and why
            if FAKE.fake_creates() != creates:
                fail(case, "sizes=%s" % describe(sizes), "created, then refused")
            expect(case, "sizes=%s" % describe(sizes), make, rule, names)
            return
        a = base_arrays()
        snap = [(v, v.tobytes()) for v in a.values()]
        expect(case, "sizes=%s" % describe(sizes),
               lambda: made["p"](a["g"], a["w"], a["m"], a["x"], 0.5, 1, a["out"]),
               rule, names + ["'g'", "'m'", "'x'"], snap)
        return
    tables, rule = tables_value(rng)
    os.environ["FAKE_TABLE"] = "1"
    try:
        expect(case, "tables=%s" % describe(tables), lambda: program(tables=tables),
               rule, ["table", "'layers'"])
    finally:
        del os.environ["FAKE_TABLE"]


rng = random.Random(args.seed)
for case in range(args.cases):
    run_case(case, random.Random(rng.getrandbits(64)))
print("%d cases: %d accepted, %d refused, %d failed" % (
    args.cases, counts["accepted"], counts["refused"], failures))
sys.exit(1 if failures else 0)
