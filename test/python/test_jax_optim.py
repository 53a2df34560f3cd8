"""coconet.jax on one rank (CTest python-jax-optim; jax_train.py is the
training test against optax on 1 and 2 ranks).

    PYTHONPATH=build/python python3 test/python/test_jax_optim.py WORK

What a JAX user relies on: ffi_step runs a module's step under jax.jit
equal bit for bit to the module's own call (samples/python/adam.coco on
each schedule: tensors updated in place, an i32 scalar; and
stdlib/nn/bias_dropout_residual.coco: f16 tensors, an output, a u64
scalar), every buffer checked by the FFI handler itself (a call made
around ffi_step's own checks is refused, not run), the optimizer state
updated where it lies when donated (its buffers' addresses unchanged), a
learning-rate schedule, tensors passed as pieces (a pytree's leaves, with
optax's new - old as the result) bit for bit the module's call on the flat
buffers, and the refusals. Prints ok/FAILED per case;
exits 1 on a failure.
"""
import os
import runpy
import shutil
import sys

# Skipped (77, the reason) without JAX or coconet.jax's FFI handler.
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_skip.py"))

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

import coconet.cache  # noqa: E402
import coconet.jax as cj  # noqa: E402

work = os.path.abspath(sys.argv[1])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
CACHE = os.path.join(work, "cache")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures = []


def case(fn):
    try:
        fn()
        print("ok:", fn.__name__)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failures.append(fn.__name__)
        print("FAILED: %s: %s: %s" % (fn.__name__, type(e).__name__, e))
    return fn


def raises(kind, text, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except kind as e:
        assert text in str(e), "%s raised %r, without %r" % (kind.__name__, str(e), text)
        return
    raise AssertionError("expected %s (%s)" % (kind.__name__, text))


def bits(x):
    x = np.asarray(x)
    return x.view(np.dtype("u%d" % x.dtype.itemsize))


def adam_module(schedule):
    return coconet.cache.load(os.path.join(ROOT, "samples", "python", "adam.coco"),
                              "adam", schedule, cache_dir=CACHE)


N = 1000


def adam_inputs(seed):
    rng = np.random.default_rng(seed)
    # Values whose sums depend on the order of addition: a wide range.
    g = (rng.standard_normal(N) * 10.0 ** rng.integers(-4, 4, N)).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    return g, w


@case
def ffi_step_equals_the_modules_call():
    for schedule in (None, "rs_c_ag", "fused_rs_c_ag"):
        module = adam_module(schedule)
        ref = module.Step(sizes={"N": N})
        ours = module.Step(sizes={"N": N})
        f = jax.jit(cj.ffi_step(ours))
        g, w = adam_inputs(1)
        _, shape = ref.block("m")
        m, v = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
        jw, jm, jv = jnp.asarray(w), jnp.asarray(m), jnp.asarray(v)
        w, m, v = w.copy(), m.copy(), v.copy()
        for t in (1, 2, 3):
            ref(g, w, m, v, 1e-3, 0.9, 0.999, 1e-8, t)
            jw, jm, jv = f(jnp.asarray(g), jw, jm, jv, 1e-3, 0.9, 0.999, 1e-8, t)
            for name, a, b in (("w", jw, w), ("m", jm, m), ("v", jv, v)):
                assert np.array_equal(bits(a), bits(b)), \
                    "%s, step %d: %s differs from the module's call" % (schedule, t, name)


@case
def the_handler_checks_every_buffer():
    # Around ffi_step's own checks: the raw FFI call with a wrong size, a
    # wrong element type, too few operands. Each is refused by the handler
    # and writes nothing.
    step = adam_module("rs_c_ag").Step(sizes={"N": N})
    address = step._program.ffi_call()
    cj._register()
    f32 = jax.ShapeDtypeStruct((N,), jnp.float32)
    call = cj._ffi.ffi_call(cj._TARGET, (f32, f32, f32), has_side_effect=True,
                            input_output_aliases={1: 0, 2: 1, 3: 2})
    g = jnp.ones(N, jnp.float32)
    s = [jnp.float32(x) for x in (1e-3, 0.9, 0.999, 1e-8)] + [jnp.int32(1)]
    short = jnp.ones(N - 16, jnp.float32)
    raises(Exception, "'g': expected f32 of shape (1000,) (this rank's block), got f32[984]",
           lambda: jax.block_until_ready(call(short, g, g, g, *s, call=np.int64(address))))
    raises(Exception, "'lr': expected a f32 scalar",
           lambda: jax.block_until_ready(call(g, g, g, g, jnp.int32(1), *s[1:],
                                              call=np.int64(address))))
    raises(Exception, "the program takes 9 and writes 3",
           lambda: jax.block_until_ready(call(g, g, g, g, *s[:-1], call=np.int64(address))))
    raises(Exception, "not a live program's",
           lambda: jax.block_until_ready(call(g, g, g, g, *s, call=np.int64(16))))


@case
def ffi_step_checks_before_calling():
    step = adam_module(None).Step(sizes={"N": N})
    f = cj.ffi_step(step)
    g, w = adam_inputs(2)
    raises(TypeError, "takes 9 arguments", f, g, w)
    raises(TypeError, "'g': expected float32, got int32", f,
           g.astype(np.int32), w, w, w, 1e-3, 0.9, 0.999, 1e-8, 1)
    raises(ValueError, "'w': expected shape (1000,), got shape (10,)", f,
           g, w[:10], w, w, 1e-3, 0.9, 0.999, 1e-8, 1)
    raises(ValueError, "'lr' is a scalar", f, g, w, w, w, np.ones(2), 0.9, 0.999, 1e-8, 1)
    raises(TypeError, "expected a Step", cj.ffi_step, object())


@case
def pieces_and_deltas():
    # g and w as three pieces each (leaves of shapes (10, 20), (7,), (9, 3)
    # at offsets 0, 208, 224: gaps between them), w's result as new values
    # and as new - old: each equal bit for bit to the module's own call on
    # the flat buffers (zero in the gaps).
    module = adam_module("rs_c_ag")
    shapes, offsets = [(10, 20), (7,), (9, 3)], [0, 208, 224]
    where = list(zip(offsets, shapes))
    ref = module.Step(sizes={"N": 256})
    news = jax.jit(cj.ffi_step(module.Step(sizes={"N": 256}),
                               pieces={"g": where, "w": where}))
    deltas = jax.jit(cj.ffi_step(module.Step(sizes={"N": 256}),
                                 pieces={"g": where, "w": where}, deltas=["w"]))
    rng = np.random.default_rng(4)
    gs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ws = [rng.standard_normal(s).astype(np.float32) for s in shapes]

    def flat(xs):
        out = np.zeros(256, np.float32)
        for o, x in zip(offsets, xs):
            out[o:o + x.size] = x.ravel()
        return out

    g, w = flat(gs), flat(ws)
    _, shape = ref.block("m")
    m, v = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
    # Copies: jnp.asarray may alias a 64-byte-aligned numpy array on the
    # CPU, and ref() below updates m and v in place.
    m1, v1, m2, v2 = (jnp.array(m, copy=True) for _ in range(4))
    w1, w2 = [jnp.asarray(x) for x in ws], [jnp.asarray(x) for x in ws]
    for t in (1, 2):
        ref(g, w, m, v, 1e-2, 0.9, 0.999, 1e-8, t)
        w1, m1, v1 = news(gs, w1, m1, v1, 1e-2, 0.9, 0.999, 1e-8, t)
        d, m2, v2 = deltas(gs, w2, m2, v2, 1e-2, 0.9, 0.999, 1e-8, t)
        w2 = [a + b for a, b in zip(w2, d)]
        assert np.array_equal(bits(flat([np.asarray(x) for x in w1])), bits(w)), t
        assert np.array_equal(bits(m1), bits(m)) and np.array_equal(bits(v2), bits(v)), t
        for a, b in zip(w2, w1):  # old + (new - old) == new here
            assert np.array_equal(bits(a), bits(b)), t
    step = module.Step(sizes={"N": 256})
    raises(ValueError, "overlaps the one before it", cj.ffi_step, step,
           pieces={"w": [(0, (20,)), (10, (4,))]})
    raises(ValueError, "lies outside the block of 256 elements", cj.ffi_step, step,
           pieces={"w": [(250, (7,))]})
    raises(ValueError, "'zz' is not a tensor parameter", cj.ffi_step, step,
           pieces={"zz": [(0, (1,))]})
    raises(ValueError, "deltas: 'g' is not written", cj.ffi_step, step,
           pieces={"g": where}, deltas=["g"])
    raises(ValueError, "deltas: 'w' is not passed as pieces", cj.ffi_step, step,
           deltas=["w"])
    raises(ValueError, "'w': expected 3 pieces, got 2", news, gs, ws[:2], m, v,
           1e-2, 0.9, 0.999, 1e-8, 1)
    # The handler's own check of a piece, around ffi_step's.
    address = step._program.ffi_call({"g": [(0, 200), (208, 7)]}, [])
    f32 = jax.ShapeDtypeStruct((256,), jnp.float32)
    call = cj._ffi.ffi_call(cj._TARGET, (f32, f32, f32), has_side_effect=True)
    s5 = [jnp.float32(x) for x in (1e-3, 0.9, 0.999, 1e-8)] + [jnp.int32(1)]
    full = jnp.ones(256, jnp.float32)
    raises(Exception, "'g', piece 1: expected f32 of 7 elements, got f32[8]",
           lambda: jax.block_until_ready(call(jnp.ones(200), jnp.ones(8), full, full,
                                              full, *s5, call=np.int64(address))))


@case
def donated_state_is_updated_where_it_lies():
    params = {"a": jnp.arange(40, dtype=jnp.float32).reshape(8, 5) / 7,
              "b": jnp.ones(3, jnp.float32)}
    opt = cj.adamw(1e-2, cache_dir=CACHE)
    state = opt.init(params)

    @jax.jit
    def grads_of(p):
        return jax.grad(lambda p: jnp.sum(jnp.sin(p["a"])) + jnp.sum(p["b"] ** 2))(p)

    def step(p, s, g):
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s

    step = jax.jit(step, donate_argnums=(1,))
    where = (state.m.unsafe_buffer_pointer(), state.v.unsafe_buffer_pointer())
    for _ in range(3):
        params, state = step(params, state, grads_of(params))
        now = (state.m.unsafe_buffer_pointer(), state.v.unsafe_buffer_pointer())
        assert now == where, "the moments moved: %s -> %s (a copy)" % (where, now)
    assert int(state.count) == 3
    # In the handler, every result was its operand's buffer.
    (_, run, _), = opt.update.__self__.made.values()
    stats = run.program.ffi_stats
    assert stats == {"calls": 3, "copies": 0}, stats


@case
def a_learning_rate_schedule_and_a_mask():
    # Against optax on one rank, no jit: the schedule is read at the
    # update's count, the mask keeps the vector leaf from decaying.
    params = {"w": jnp.linspace(-1, 1, 24, dtype=jnp.float32).reshape(4, 6),
              "b": jnp.linspace(0.5, 2, 6, dtype=jnp.float32)}
    lr = optax.exponential_decay(0.05, 1, 0.5)
    mask = {"w": True, "b": False}
    for ours, ref in ((cj.adamw(lr, weight_decay=0.5, mask=mask, cache_dir=CACHE),
                       optax.adamw(lr, weight_decay=0.5, mask=mask)),
                      (cj.lamb(lr, weight_decay=0.5, mask=mask, cache_dir=CACHE),
                       optax.lamb(lr, weight_decay=0.5, mask=mask))):
        p1, p2 = params, params
        s1, s2 = ours.init(params), ref.init(params)
        for k in range(4):
            g = jax.tree_util.tree_map(lambda x: jnp.cos(x * (k + 1)), p1)
            u1, s1 = ours.update(g, s1, p1)
            u2, s2 = ref.update(g, s2, p1)
            p2 = optax.apply_updates(p1, u2)
            p1 = optax.apply_updates(p1, u1)
            for name in params:
                a, b, old = np.asarray(p1[name]), np.asarray(p2[name]), np.asarray(params[name])
                err = np.max(np.abs(a - b))
                assert err <= 1e-6, "step %d, %s: %g from optax's" % (k, name, err)
            params = p1


@case
def refusals():
    p64 = {"w": np.ones(4, np.float64)}
    raises(TypeError, "leaf 0 (shape (4,)) is float64", cj.adamw(1e-3, cache_dir=CACHE).init, p64)
    raises(ValueError, "eps_root=1e-08 is not supported", cj.adamw, 1e-3, eps_root=1e-8)
    raises(ValueError, "nesterov=True is not supported", cj.adamw, 1e-3, nesterov=True)
    raises(ValueError, "mu_dtype", cj.adamw, 1e-3, mu_dtype=jnp.bfloat16)
    raises(ValueError, "learning_rate must be >= 0", cj.lamb, -1.0)
    raises(ValueError, "b2 must be in [0, 1)", cj.adamw, 1e-3, b2=1.0)
    raises(ValueError, "schedule is one of", cj.adamw, 1e-3, schedule="fast")
    raises(ValueError, "needs machine=", cj.adamw, 1e-3, schedule="auto")
    opt = cj.adamw(1e-3, cache_dir=CACHE)
    params = {"w": jnp.ones(4, jnp.float32)}
    state = opt.init(params)
    raises(ValueError, "needs the parameters", opt.update, params, state)
    raises(ValueError, "no leaves", opt.init, {})


@case
def an_output_f16_and_a_u64_scalar():
    # Last: 64-bit types on (jax_enable_x64) for the u64 seed. Without them
    # the seed is refused by ffi_step, naming the switch.
    module = coconet.cache.load(
        os.path.join(ROOT, "stdlib", "nn", "bias_dropout_residual.coco"),
        "bias_dropout_residual", "bdr_rs_c_ag", cache_dir=CACHE)
    sizes = {"B": 8, "H": 64}
    ref = module.Step(sizes=sizes)
    f = cj.ffi_step(module.Step(sizes=sizes))
    rng = np.random.default_rng(3)
    y = rng.standard_normal((8, 64)).astype(np.float16)
    bias = rng.standard_normal(64).astype(np.float16)
    res = rng.standard_normal((8, 64)).astype(np.float16)
    raises(TypeError, "enable 64-bit types", f, y, bias, res, 0.25, 12345)
    jax.config.update("jax_enable_x64", True)
    out = ref(y, bias, res, 0.25, 12345)
    (mine,) = jax.jit(f)(y, bias, res, 0.25, np.uint64(12345))
    assert np.array_equal(bits(mine), bits(out)), "the output differs from the module's"
    assert np.count_nonzero(np.asarray(out) == np.asarray(res)) > 0, "no element dropped"


@case
def a_requirement_refuses_the_call():
    # samples/python/adam.coco requires step >= 1 (its bias corrections
    # divide by 1 - beta^step): the module's call raises ValueError and
    # changes nothing; through the FFI, JAX raises with the same reason.
    module = adam_module("rs_c_ag")
    step = module.Step(sizes={"N": N})
    g, w = adam_inputs(5)
    _, shape = step.block("m")
    m, v = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
    w0 = w.copy()
    why = "step = 0: the step counts from 1 (require(step >= 1) at adam.coco:"
    raises(ValueError, why, step, g, w, m, v, 1e-3, 0.9, 0.999, 1e-8, 0)
    raises(ValueError, "beta2 = 1: beta2 must be below 1", step, g, w, m, v,
           1e-3, 0.9, 1.0, 1e-8, 3)
    assert np.array_equal(bits(w), bits(w0)) and not m.any() and not v.any()
    f = jax.jit(cj.ffi_step(module.Step(sizes={"N": N})))
    raises(Exception, why, lambda: jax.block_until_ready(
        f(g, w, m, v, 1e-3, 0.9, 0.999, 1e-8, 0)))
    step(g, w, m, v, 1e-3, 0.9, 0.999, 1e-8, 1)  # holds: runs
    assert not np.array_equal(bits(w), bits(w0))


print("%d cases, %d failed%s" % (9, len(failures),
                                  (": " + ", ".join(failures)) if failures else ""))
sys.exit(1 if failures else 0)
