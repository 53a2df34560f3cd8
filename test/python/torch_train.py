#!/usr/bin/env python3
"""A small transformer trained data parallel with each coconet.torch
optimizer against torch's own (CTest python-torch-train, torch_train.sh:
every optimizer on 1 and 2 ranks, AdamW and LAMB on 4 in the extended tier;
adamw-clip, sgd-clip and lamb-clip are the optimizer with max_norm= against
torch's clip_grad_norm_ before its step, with the norm checked too):

    mpirun -np 2 python3 test/python/torch_train.py --cache DIR

Two encoder layers (d=32, 4 heads, feed-forward 64, no dropout) over
tokens from a fixed rule, each rank its own share of the batch. Every
optimizer trains two copies of one model:
torch's (the gradients summed over the ranks with MPI_Allreduce and scaled
by 1/P, then torch.optim's step; LAMB's reference is written here, below)
and coconet's (the one-line swap: coconet.torch.X(model.parameters(),
...), its step averaging the gradients itself). Checks, on every rank,
exit status 1 otherwise:

  - each step against torch's step from the same state: before each of
    coconet's steps, torch's optimizer is loaded with its state_dict (the
    state gathered from the ranks where the schedule shards it), given the
    same averaged gradients and stepped; every weight must be within
    2 ulp(w) + 2^-12 * (that step's largest update) of torch's. The bound:
    both compute each update in f32 in torch's order of operations, but
    torch fuses some multiply-adds (add with alpha, addcmul), which differ
    by a rounding of an intermediate: a few ulps of the weight at the last
    add, and where a gradient nearly cancels (g + wd * w in Adam's L2 term)
    a relative difference of the gradient that Adam's division by sqrt(v)
    carries into the update (2^-15 of the largest update at worst here:
    the margin is 8x);
  - torch's own run and coconet's: their losses within --loss-tolerance
    (relative, 1e-2) at every step. Each step's differences feed the next
    step's gradients, so the runs drift apart: 2e-7 for AdamW, Adam and
    SGD and about 1e-3 for LAMB (its trust ratios amplify it) over 100
    steps on the runs this was written with;
  - the weights are the same on every rank, bit for bit;
  - at --restore-at, the model's and the optimizer's state_dicts (through
    torch.save) are loaded into a new model and optimizer, and both runs
    go on to --steps equal bit for bit after every step.
"""
import argparse
import io
import math
import sys

import numpy as np
import torch
from mpi4py import MPI

import coconet.torch as ct

V, D, HEADS, FF, SEQ, BATCH = 32, 32, 4, 64, 12, 4


class Tiny(torch.nn.Module):
    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.randn(SEQ, D) * 0.1)
        layer = torch.nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0,
                                                 batch_first=True)
        self.body = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(D, V)

    def forward(self, tokens):
        return self.head(self.body(self.embed(tokens) + self.pos))


def batch(step, rank):
    """This rank's share of step `step`'s batch: the target of a token is
    (3 x + 1) mod V of the one before it."""
    gen = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randint(0, V, (BATCH, SEQ), generator=gen)
    y = (3 * torch.roll(x, 1, dims=1) + 1) % V
    return x, y


def loss_of(model, step, rank):
    x, y = batch(step, rank)
    # In f32 (a bf16 model's logits widened): a bf16 loss is too coarse to
    # compare two runs by.
    return torch.nn.functional.cross_entropy(model(x).float().reshape(-1, V),
                                             y.reshape(-1))


class RefLamb(torch.optim.Optimizer):
    """LAMB as coconet.torch.LAMB defines it, in torch: AdamW's direction
    u = (m / bc1) / (sqrt(v) / sqrt(bc2) + eps) + wd * w, scaled by
    ||w|| / ||u|| (each norm summed in f64, rounded once; 1 where either
    is 0)."""

    def __init__(self, params, lr, betas, eps, weight_decay):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps,
                                      weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                t = st["step"]
                m, v, g = st["exp_avg"], st["exp_avg_sq"], p.grad
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                denom = (v.sqrt() / math.sqrt(1 - b2 ** t)).add_(group["eps"])
                u = (m / (1 - b1 ** t)).div_(denom).add_(p, alpha=group["weight_decay"])
                wn = torch.linalg.vector_norm(p.double()).float()
                un = torch.linalg.vector_norm(u.double()).float()
                one = torch.ones_like(wn)
                ratio = torch.where(wn > 0, torch.where(un > 0, wn / un, one), one)
                p.sub_(u * (torch.tensor(group["lr"], dtype=torch.float32) * ratio))


# name, torch's optimizer, coconet's, arguments, schedule
OPTIMIZERS = {
    "adamw": (torch.optim.AdamW, ct.AdamW, dict(lr=3e-3, weight_decay=0.05), "fused_rs_c_ag"),
    "adam": (torch.optim.Adam, ct.Adam, dict(lr=3e-3, weight_decay=0.01), "rs_c_ag"),
    "sgd": (torch.optim.SGD, ct.SGD, dict(lr=0.05, momentum=0.9, weight_decay=1e-4), "ar_c"),
    "lamb": (RefLamb, ct.LAMB, dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-6,
                                    weight_decay=0.01), "fused_rs_c_ag"),
    "adamw-clip": (torch.optim.AdamW, ct.AdamW, dict(lr=3e-3, weight_decay=0.05),
                   "rs_c_ag"),
    "sgd-clip": (torch.optim.SGD, ct.SGD, dict(lr=0.05, momentum=0.9, weight_decay=1e-4),
                 "rs_c_ag"),
    "lamb-clip": (RefLamb, ct.LAMB, dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-6,
                                         weight_decay=0.01), "rs_c_ag"),
}
#: Ours clips inside the step (max_norm=); torch's runs clip_grad_norm_ on
#: the averaged gradients before its step. A max_norm that the run's
#: gradient norms cross, so that some steps are clipped and some not
#: (scaled by 1/sqrt(ranks): the average of P ranks' gradients has a
#: smaller norm: 0.73-1.11 on 1 rank, 0.55-0.75 on 2).
CLIP = {"adamw-clip": 0.9, "sgd-clip": 0.9, "lamb-clip": 0.9}


def average(model, comm):
    """torch's side of data parallelism: each gradient summed over the
    ranks, scaled by 1/P."""
    scale = np.float32(1.0 / comm.Get_size())
    for p in model.parameters():
        g = p.grad.numpy()
        comm.Allreduce(MPI.IN_PLACE, g, op=MPI.SUM)
        g *= scale


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def averaged_grads(model, comm):
    """The model's gradients (a bf16 model's widened to f32) summed over
    the ranks and scaled by 1/P (what the coconet step computes from them)."""
    grads = [p.grad.detach().float().clone() for p in model.parameters()]
    scale = np.float32(1.0 / comm.Get_size())
    for g in grads:
        comm.Allreduce(MPI.IN_PLACE, g.numpy(), op=MPI.SUM)
        g.numpy()[...] *= scale
    return grads


class Shadow:
    """What torch's optimizer makes of the coconet run's state: a model and
    torch's optimizer, loaded each step with the coconet run's weights and
    state_dict, given the averaged gradients and stepped."""

    def __init__(self, name, comm):
        ref_cls, _, kw, _ = OPTIMIZERS[name]
        self.model = Tiny(0)
        self.opt = ref_cls(self.model.parameters(), **kw)
        self.max_norm = (CLIP[name] / math.sqrt(comm.Get_size())
                         if name in CLIP else None)

    def step(self, model, state, comm):
        """The weights before and after torch's step from `model` and `state`."""
        self.model.load_state_dict(model.state_dict())
        self.opt.load_state_dict(state)
        for p, g in zip(self.model.parameters(), averaged_grads(model, comm)):
            p.grad = g
        if self.max_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        before = flat(self.model)
        self.opt.step()
        return before, flat(self.model)


def agree(comm, problem):
    """Raises on every rank where any rank found a problem (a check that
    failed on one rank alone would leave the others waiting in the next
    collective)."""
    problems = [(r, p) for r, p in enumerate(comm.allgather(problem)) if p]
    if problems:
        raise AssertionError("rank %d: %s" % problems[0])


def backward(runs, t, rank):
    """Each (model, optimizer)'s gradients of step t; the first's loss."""
    losses = []
    for model, opt in runs:
        opt.zero_grad()
        losses.append(loss_of(model, t, rank))
        losses[-1].backward()
    return losses[0]


def checkpoint(got, gopt, model, make):
    """`model` and a new optimizer (`make(params)`) restored from got's and
    gopt's state_dicts through torch.save, as a run stopped and resumed."""
    buf = io.BytesIO()
    torch.save({"model": got.state_dict(), "opt": gopt.state_dict()}, buf)
    buf.seek(0)
    saved = torch.load(buf)
    model.load_state_dict(saved["model"])
    opt = make(model.parameters())
    opt.load_state_dict(saved["opt"])
    return model, opt


def report(name, schedule, size, args, first_loss, last, last_ref, worst_loss,
           worst_step):
    print("%-10s %-14s %d ranks %3d steps  loss %.4f -> %.4f (torch's run %.4f; "
          "largest difference %.1e)  step vs torch's: largest / bound %.3f  "
          "restored at %d: equal"
          % (name, schedule, size, args.steps, first_loss, last, last_ref,
             worst_loss, worst_step, args.restore_at), flush=True)


def judge(name, t, args, comm, mine, w, expected, before, lgot, lref, restored,
          what="weight"):
    """One step's checks: `mine` (the weights, or a bf16 model's master
    weights) within 2 ulp + 2^-12 of the step's largest update of torch's
    step from the same state (`expected`, from `before`), the loss within
    the tolerance of torch's run, the model's weights `w` rank 0's and the
    restored run's. Returns (the problem or None, the largest error / bound,
    the loss's relative difference)."""
    eps = torch.finfo(torch.float32).eps
    bound = 2 * eps * expected.abs() + 2.0 ** -12 * (expected - before).abs().max()
    excess = ((mine - expected).abs() / bound).max().item()
    rel = abs(lgot.item() - lref.item()) / abs(lref.item())
    w0 = w.float().numpy().copy()
    comm.Bcast(w0, root=0)
    problem = None
    if not excess <= 1.0:
        i = int(((mine - expected).abs() / bound).argmax())
        problem = ("%s: step %d: %s %d is %.9g, torch's step from the same "
                   "state gives %.9g (bound %.3g)"
                   % (name, t, what, i, mine[i], expected[i], bound[i]))
    elif not rel <= args.loss_tolerance:
        problem = ("%s: step %d: loss %.6f, torch's run %.6f"
                   % (name, t, lgot.item(), lref.item()))
    elif not np.array_equal(w.float().numpy(), w0):
        problem = "%s: step %d: the weights differ from rank 0's" % (name, t)
    elif restored and not torch.equal(flat(restored[0]), w):
        problem = "%s: step %d: the restored run differs" % (name, t)
    return problem, excess, rel


def run(name, args, comm):
    ref_cls, cls, kw, schedule = OPTIMIZERS[name]
    rank, size = comm.Get_rank(), comm.Get_size()
    ref, got = Tiny(0), Tiny(0)
    ropt = ref_cls(ref.parameters(), **kw)
    max_norm = CLIP[name] / math.sqrt(size) if name in CLIP else None
    ours = dict(kw, max_norm=max_norm) if max_norm is not None else kw
    gopt = cls(got.parameters(), schedule=schedule, cache_dir=args.cache, **ours)
    clipped, norms = 0, []
    restored = None
    shadow = Shadow(name, comm)
    worst_step, worst_loss, first_loss = 0.0, 0.0, None
    eps = torch.finfo(torch.float32).eps
    for t in range(1, args.steps + 1):
        # torch's run: its own trajectory.
        ropt.zero_grad()
        lref = loss_of(ref, t, rank)
        lref.backward()
        average(ref, comm)
        if max_norm is not None:
            norm = torch.nn.utils.clip_grad_norm_(ref.parameters(), max_norm)
            clipped += norm.item() > max_norm
            norms.append(norm.item())
        ropt.step()

        # coconet's run, each step against torch's step from the same state.
        lgot = backward([(got, gopt)] + ([restored] if restored else []), t, rank)
        before, expected = shadow.step(got, gopt.state_dict(), comm)
        for model, opt in [(got, gopt)] + ([restored] if restored else []):
            opt.step()
        if first_loss is None:
            first_loss = lref.item()

        w = flat(got)
        problem, excess, rel = judge(name, t, args, comm, w, w, expected, before,
                                     lgot, lref, restored)
        worst_step, worst_loss = max(worst_step, excess), max(worst_loss, rel)
        if max_norm is not None and problem is None:
            # The norm before clipping, within a few f32 roundings of
            # clip_grad_norm_'s on the same gradients (the shadow's).
            mine = gopt.grad_norm.item()
            theirs = torch.linalg.vector_norm(torch.stack([
                torch.linalg.vector_norm(g) for g in averaged_grads(got, comm)])).item()
            if not abs(mine - theirs) <= 8 * eps * theirs:
                problem = "%s: step %d: norm %r, clip_grad_norm_'s %r" % (
                    name, t, mine, theirs)
        agree(comm, problem)
        if t == args.restore_at:
            restored = checkpoint(got, gopt, Tiny(99), lambda ps: cls(
                ps, schedule=schedule, cache_dir=args.cache, **ours))
    if max_norm is not None and not 0 < clipped < args.steps:
        raise AssertionError("%s: %d of %d steps clipped (norms %.3g to %.3g): "
                             "choose another max_norm"
                             % (name, clipped, args.steps, min(norms), max(norms)))
    if rank == 0:
        report(name, schedule, size, args, first_loss, lgot.item(), lref.item(),
               worst_loss, worst_step)


def masters(model, state):
    """Each parameter's f32 master weights in `state` (our state_dict), or
    its weights where it has none yet."""
    return [state["state"][i]["master_weight"] if i in state["state"]
            else p.detach().float() for i, p in enumerate(model.parameters())]


def run_bf16(args, comm):
    """AdamW on a bf16 model with f32 master weights (coconet.torch with
    bfloat16 parameters) under rs_c_ag, where the masters are sharded: each
    step's masters against torch.optim.AdamW's step of an f32 copy loaded
    with the same masters and state, within 2 ulp(w) + 2^-12 of the step's
    largest update; the model's weights their bf16 rounding exactly; torch's
    own mixed-precision run (an f32 master copy stepped by torch, the bf16
    model its rounding) and ours within the loss tolerance; a restore at
    --restore-at equal bit for bit."""
    name, kw, schedule = "adamw-bf16", dict(lr=3e-3, weight_decay=0.05), "rs_c_ag"
    rank, size = comm.Get_rank(), comm.Get_size()
    refb, got = Tiny(0).bfloat16(), Tiny(0).bfloat16()
    ref32 = Tiny(0)
    with torch.no_grad():
        for q, p in zip(ref32.parameters(), refb.parameters()):
            q.copy_(p.float())
    ropt = torch.optim.AdamW(ref32.parameters(), **kw)
    gopt = ct.AdamW(got.parameters(), schedule=schedule, cache_dir=args.cache, **kw)
    shadow = Tiny(0)
    sopt = torch.optim.AdamW(shadow.parameters(), **kw)
    restored = None
    worst_step, worst_loss, first_loss = 0.0, 0.0, None
    for t in range(1, args.steps + 1):
        refb.zero_grad()
        lref = loss_of(refb, t, rank)
        lref.backward()
        for q, g in zip(ref32.parameters(), averaged_grads(refb, comm)):
            q.grad = g
        ropt.step()
        with torch.no_grad():
            for p, q in zip(refb.parameters(), ref32.parameters()):
                p.copy_(q)

        lgot = backward([(got, gopt)] + ([restored] if restored else []), t, rank)
        state = gopt.state_dict()
        with torch.no_grad():
            for q, mw in zip(shadow.parameters(), masters(got, state)):
                q.copy_(mw)
        sopt.load_state_dict(state)
        for q, g in zip(shadow.parameters(), averaged_grads(got, comm)):
            q.grad = g
        before = flat(shadow)
        sopt.step()
        expected = flat(shadow)
        for model, opt in [(got, gopt)] + ([restored] if restored else []):
            opt.step()
        if first_loss is None:
            first_loss = lref.item()
        mine = torch.cat([m.reshape(-1) for m in masters(got, gopt.state_dict())])
        w = flat(got)
        problem, excess, rel = judge(name, t, args, comm, mine, w, expected, before,
                                     lgot, lref, restored, "master weight")
        worst_step, worst_loss = max(worst_step, excess), max(worst_loss, rel)
        if problem is None and not torch.equal(w, mine.bfloat16()):
            problem = "%s: step %d: the weights are not the masters' bf16 rounding" % (
                name, t)
        agree(comm, problem)
        if t == args.restore_at:
            restored = checkpoint(got, gopt, Tiny(99).bfloat16(), lambda ps: ct.AdamW(
                ps, schedule=schedule, cache_dir=args.cache, **kw))
    if rank == 0:
        report(name, schedule, size, args, first_loss, lgot.item(), lref.item(),
               worst_loss, worst_step)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", required=True, help="coconet.cache's directory")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--restore-at", type=int, default=50)
    parser.add_argument("--optimizers", default=",".join(list(OPTIMIZERS) + ["adamw-bf16"]))
    parser.add_argument("--loss-tolerance", type=float, default=1e-2,
                        help="the largest relative difference of the losses")
    args = parser.parse_args()
    torch.set_num_threads(1)
    comm = MPI.COMM_WORLD
    failed = False
    for name in args.optimizers.split(","):
        try:
            if name == "adamw-bf16":
                run_bf16(args, comm)
            else:
                run(name, args, comm)
        except AssertionError as e:  # raised on every rank (agree)
            if comm.Get_rank() == 0:
                print("FAILED: %s" % e, flush=True)
            failed = True
    if comm.allreduce(failed, op=MPI.LOR):
        sys.exit(1)
    if comm.Get_rank() == 0:
        print("ok: every optimizer within the bound of torch's, equal on every "
              "rank, restored bit for bit")


if __name__ == "__main__":
    main()
