#!/usr/bin/env python3
"""A small transformer trained data parallel in JAX with coconet.jax's
optax transformations against optax's own (CTest python-jax-train,
jax_train.sh: adamw and lamb on 1 and 2 ranks):

    mpirun -np 2 python3 test/python/jax_train.py --cache DIR

Two attention + feed-forward layers (d=32, 4 heads, feed-forward 64,
pre-layernorm) written with jax.numpy over tokens from a fixed rule, the
parameters a nested pytree (a dict of lists of dicts), each rank its own
share of the batch. Each transformation trains the model twice: with
optax's (the gradients summed over the ranks with MPI_Allgather in rank
order and scaled by 1/P, then optax's update) and with coconet's (the
one-line swap, coconet.jax.adamw(...) for optax.adamw(...), its update
averaging the gradients itself inside jax.jit, the optimizer state
donated). Checks, on every rank, exit status 1 otherwise:

  - each step against optax's step from the same state: before each of
    coconet's updates, optax's state is made from coconet's (its moments
    gathered from the ranks where the schedule shards them) and updated
    with the same averaged gradients; every new weight must be within
    2 ulp(w) + 2^-12 * (that step's largest update) of optax's, and every
    moment within 4 ulp of optax's plus 2^-22 of its terms' magnitudes
    (|old| + |g| for m, |old| + g^2 for v: where b * old and (1 - b) * g
    nearly cancel, XLA's contracted multiply-add and the program's two
    roundings differ by a rounding of a term, not of the result). The bound: both compute in f32 from
    the same values, but in different orders (optax: w + -lr * (mhat /
    (sqrt(vhat) + eps) + wd * w), divided by the bias corrections first;
    coconet: w * (1 - lr * wd) - (lr / bc1) * m / (sqrt(v) / sqrt(bc2) +
    eps), torch's order), and XLA may contract a multiply-add that the
    program rounds twice: a few roundings of the update (relative 2^-21
    each, so far below 2^-12 of the largest update) and of the weight at
    the last add (the 2 ulp); LAMB's trust ratio, a quotient of two norms
    summed in different orders, adds a relative 2^-20 or so;
  - optax's own run and coconet's: their losses within --loss-tolerance
    (relative, 1e-2) at every step (measured: about 1e-6 for adamw and
    1e-5 for lamb over 60 steps when this was written);
  - the weights are the same on every rank, bit for bit;
  - at --restore-at, the parameters and the optimizer state are written
    with numpy.save, read back into new arrays, and a new transformation
    (its program made anew) goes on from them: equal bit for bit to the
    run that did not stop, after every step.
"""
import argparse
import io
import sys

import numpy as np
from mpi4py import MPI

import jax
import jax.numpy as jnp
import optax

import coconet.jax as cj

V, D, HEADS, FF, SEQ, BATCH, LAYERS = 32, 32, 4, 64, 12, 4, 2


def init_params(seed):
    key = jax.random.PRNGKey(seed)
    keys = iter(jax.random.split(key, 64))

    def dense(n, m):
        return jax.random.normal(next(keys), (n, m), jnp.float32) / np.sqrt(n)

    layers = []
    for _ in range(LAYERS):
        layers.append({
            "ln1": jnp.ones(D, jnp.float32), "wq": dense(D, D), "wk": dense(D, D),
            "wv": dense(D, D), "wo": dense(D, D),
            "ln2": jnp.ones(D, jnp.float32), "w1": dense(D, FF),
            "b1": jnp.zeros(FF, jnp.float32), "w2": dense(FF, D),
            "b2": jnp.zeros(D, jnp.float32)})
    return {"embed": jax.random.normal(next(keys), (V, D), jnp.float32) * 0.5,
            "pos": jax.random.normal(next(keys), (SEQ, D), jnp.float32) * 0.1,
            "layers": layers, "head": dense(D, V)}


def norm(x, scale):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * scale


def forward(params, tokens):
    x = params["embed"][tokens] + params["pos"]
    for p in params["layers"]:
        h = norm(x, p["ln1"])
        q, k, v = (
            (h @ p[w]).reshape(BATCH, SEQ, HEADS, D // HEADS) for w in ("wq", "wk", "wv"))
        a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(D // HEADS), -1)
        x = x + jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(BATCH, SEQ, D) @ p["wo"]
        h = norm(x, p["ln2"])
        x = x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return x @ params["head"]


def batch(step, rank):
    """This rank's share of step `step`'s batch: the target of a token is
    (3 x + 1) mod V of the one before it."""
    rng = np.random.default_rng(1000 * step + rank)
    x = rng.integers(0, V, (BATCH, SEQ))
    y = (3 * np.roll(x, 1, axis=1) + 1) % V
    return jnp.asarray(x), jnp.asarray(y)


def loss_fn(params, x, y):
    logits = forward(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


grad_fn = jax.jit(jax.value_and_grad(loss_fn))


def averaged(comm, grads):
    """The gradients summed over the ranks in rank order, scaled by 1/P."""
    leaves, treedef = jax.tree_util.tree_flatten(grads)
    flat = np.concatenate([np.asarray(g, np.float32).ravel() for g in leaves])
    every = np.empty((comm.Get_size(), flat.size), np.float32)
    comm.Allgather(flat, every)
    total = every[0].copy()
    for r in range(1, comm.Get_size()):
        total += every[r]
    total *= np.float32(1.0 / comm.Get_size())
    out, o = [], 0
    for g in leaves:
        out.append(jnp.asarray(total[o:o + g.size].reshape(g.shape)))
        o += g.size
    return treedef.unflatten(out)


def gathered(comm, local, n):
    """The whole flat buffer of a state slice."""
    local = np.asarray(local, np.float32).ravel()
    if local.size == n:
        return local
    full = np.empty(n, np.float32)
    comm.Allgather(local, full)
    return full


def ulp(x):
    x = np.abs(np.asarray(x, np.float32))
    return np.spacing(np.maximum(x, np.finfo(np.float32).tiny))


class Failures:
    def __init__(self, rank):
        self.rank, self.count = rank, 0

    def check(self, ok, what):
        if not ok:
            self.count += 1
            if self.count <= 20:
                print("rank %d: FAIL %s" % (self.rank, what), file=sys.stderr, flush=True)


def make(kind, args, ours):
    kw = dict(weight_decay=args.weight_decay)
    if kind == "adamw":
        lr = optax.linear_schedule(args.lr, args.lr / 4, args.steps)
        kw["mask"] = lambda p: jax.tree_util.tree_map(lambda x: x.ndim > 1, p)
        if ours:
            return cj.adamw(lr, schedule=args.schedule, cache_dir=args.cache, **kw)
        return optax.adamw(lr, **kw)
    if ours:
        return cj.lamb(args.lr, schedule=args.schedule, cache_dir=args.cache, **kw)
    return optax.lamb(args.lr, **kw)


def stepper(opt):
    def step(params, state, grads):
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state
    # The optimizer state donated: coconet's moments updated where they lie.
    return jax.jit(step, donate_argnums=(1,))


def saved(tree):
    """The arrays of `tree` through numpy.save and back: new arrays."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    out = []
    for x in leaves:
        buf = io.BytesIO()
        np.save(buf, np.asarray(x))
        buf.seek(0)
        out.append(jnp.asarray(np.load(buf)))
    return treedef.unflatten(out)


def train(kind, args, comm, fail):
    rank, ranks = comm.Get_rank(), comm.Get_size()
    ours, ref = make(kind, args, True), make(kind, args, False)
    ours_step, ref_step = stepper(ours), jax.jit(
        lambda p, s, g: (lambda u, s: (optax.apply_updates(p, u), s))(*ref.update(g, s, p)))
    params = init_params(7)
    p_ours, s_ours = params, ours.init(params)
    p_ref, s_ref = params, ref.init(params)
    p_restored = s_restored = restored_step = None
    leaves, _ = jax.tree_util.tree_flatten(params)
    n = sum(-(-x.size // cj.ALIGN) * cj.ALIGN for x in leaves)
    n = -(-n // (cj.ALIGN * ranks)) * (cj.ALIGN * ranks)
    worst_w = worst_m = worst_loss = 0.0
    for step in range(args.steps):
        x, y = batch(step, rank)
        loss_o, g_o = grad_fn(p_ours, x, y)
        loss_r, g_r = grad_fn(p_ref, x, y)
        lo = comm.allreduce(float(loss_o)) / ranks
        lr_ = comm.allreduce(float(loss_r)) / ranks
        rel = abs(lo - lr_) / max(abs(lr_), 1e-30)
        worst_loss = max(worst_loss, rel)
        fail.check(rel <= args.loss_tolerance,
                   "%s step %d: loss %.9g, optax's %.9g" % (kind, step, lo, lr_))

        # optax's step from coconet's state.
        avg = averaged(comm, g_o)
        m_full = gathered(comm, s_ours.m, n)
        v_full = gathered(comm, s_ours.v, n)
        unflat = ours_layout(p_ours, ranks)
        from_ours = optax.tree_utils.tree_set(
            ref.init(p_ours), count=s_ours.count, mu=unflat(m_full), nu=unflat(v_full))
        p_check, s_check = ref_step(p_ours, from_ours, avg)

        p_new, s_ours = ours_step(p_ours, s_ours, g_o)
        for name, a, b, old in zip(*names_and(p_new, p_check, p_ours)):
            a, b, old = np.asarray(a), np.asarray(b), np.asarray(old)
            upd = np.max(np.abs(b - old)) if b.size else 0.0
            err = np.abs(a - b)
            bound = 2 * ulp(b) + 2.0 ** -12 * upd
            worst_w = max(worst_w, float(np.max(err / bound)) if err.size else 0.0)
            fail.check(np.all(err <= bound),
                       "%s step %d: %s differs from optax's by %.3g (bound %.3g)"
                       % (kind, step, name, float(np.max(err)),
                          float(bound.ravel()[np.argmax(err)])))
        m_new = unflat(gathered(comm, s_ours.m, n))
        v_new = unflat(gathered(comm, s_ours.v, n))
        mu = optax.tree_utils.tree_get(s_check, "mu")
        nu = optax.tree_utils.tree_get(s_check, "nu")
        m_old, v_old = unflat(m_full), unflat(v_full)
        for which, mine, theirs, old, scale in (("m", m_new, mu, m_old, 1),
                                                ("v", v_new, nu, v_old, 2)):
            for name, a, b, o, g in zip(*names_and(mine, theirs, old, avg)):
                a, b, o, g = (np.asarray(z) for z in (a, b, o, g))
                err = np.abs(a - b)
                # A moment is b * old + (1 - b) * g (or g * g): where the
                # two nearly cancel, a contracted multiply-add differs by a
                # rounding of the terms, not of the result.
                bound = 4 * ulp(b) + 2.0 ** -22 * (np.abs(o) + np.abs(g) ** scale)
                worst_m = max(worst_m, float(np.max(err / bound)) if err.size else 0.0)
                fail.check(np.all(err <= bound), "%s step %d: %s of %s differs from "
                           "optax's by %.3g" % (kind, step, which, name, float(np.max(err))))
        p_ours = p_new

        # The weights equal on every rank.
        flat = np.concatenate([np.asarray(z).ravel() for z in jax.tree_util.tree_leaves(p_ours)])
        first = comm.bcast(flat if rank == 0 else None, root=0)
        fail.check(np.array_equal(flat.view(np.uint32), first.view(np.uint32)),
                   "%s step %d: the weights differ between rank 0 and rank %d" % (kind, step, rank))

        # optax's own run.
        p_ref, s_ref = ref_step(p_ref, s_ref, averaged(comm, g_r))

        # The restored run, from --restore-at on.
        if step + 1 == args.restore_at:
            restored = make(kind, args, True)
            restored.init(p_ours)  # its program made anew
            restored_step = stepper(restored)
            p_restored = saved(p_ours)
            s_restored = cj.CoconetState(*saved(tuple(s_ours)))
        elif restored_step is not None:
            _, g = grad_fn(p_restored, x, y)
            p_restored, s_restored = restored_step(p_restored, s_restored, g)
            same = all(np.array_equal(np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32))
                       for a, b in zip(jax.tree_util.tree_leaves((p_restored, tuple(s_restored)[1:])),
                                       jax.tree_util.tree_leaves((p_ours, tuple(s_ours)[1:]))))
            fail.check(same, "%s step %d: the run restored at step %d differs from the "
                       "one that went on" % (kind, step, args.restore_at))
    if rank == 0:
        print("%s, %d ranks, %s: %d steps, loss %.4f (optax's %.4f); worst weight "
              "difference %.3g of the bound, moment %.3g of its bound, loss %.2g"
              % (kind, ranks, args.schedule, args.steps, lo, lr_, worst_w, worst_m,
                 worst_loss), flush=True)


def ours_layout(params, ranks):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    layout = cj._Layout(leaves, treedef, ranks)
    return lambda flat: layout.unflatten(jnp.asarray(flat))


def names_and(*trees):
    paths = [jax.tree_util.keystr(k) for k, _ in
             jax.tree_util.tree_flatten_with_path(trees[0])[0]]
    return [paths] + [jax.tree_util.tree_leaves(t) for t in trees]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--optimizers", default="adamw,lamb")
    ap.add_argument("--schedule", default="rs_c_ag")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--restore-at", type=int, default=30)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--loss-tolerance", type=float, default=1e-2)
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    fail = Failures(comm.Get_rank())
    for kind in args.optimizers.split(","):
        train(kind, args, comm, fail)
    failed = comm.allreduce(fail.count)
    if failed:
        if comm.Get_rank() == 0:
            print("jax_train: %d checks failed" % failed, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
