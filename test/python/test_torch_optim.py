"""coconet.torch's optimizers on one rank, against torch.optim (CTest
python-torch-optim; torch_train.py is the training test on 1, 2, 4 ranks).

    PYTHONPATH=build/python python3 test/python/test_torch_optim.py WORK

What a user of torch.optim relies on: .grad set to None by
model.zero_grad() (the new gradient copied in, not a stale one read), a
.grad replaced, frozen and unused parameters left alone, parameter groups
and LR schedulers, torch's state_dict in both directions, and the
refusals. Each case compares with torch.optim on the same model and data
within a bound of f32 roundings (|w - w_torch| <= 2^-20 * steps * the
largest update, after a few steps of a small model, where both compute in
f32 in the same order except for fused multiply-adds). Prints ok/FAILED
per case; exits 1 on a failure.
"""
import io
import os
import shutil
import sys
import warnings

import torch

import coconet.torch as ct

work = os.path.abspath(sys.argv[1])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
CACHE = os.path.join(work, "cache")
failures = []


def case(fn):
    try:
        fn()
        print("ok:", fn.__name__)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failures.append(fn.__name__)
        print("FAILED: %s: %s: %s" % (fn.__name__, type(e).__name__, e))
    return fn


class Net(torch.nn.Module):
    """A small MLP with a frozen layer and one the forward does not use."""

    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.a = torch.nn.Linear(6, 10)
        self.b = torch.nn.Linear(10, 3)
        self.frozen = torch.nn.Linear(3, 3)
        self.unused = torch.nn.Linear(3, 3)
        self.frozen.weight.requires_grad_(False)

    def forward(self, x):
        return self.frozen(self.b(torch.tanh(self.a(x))))


GEN = torch.Generator().manual_seed(7)
X = torch.randn(32, 6, generator=GEN)
Y = torch.randn(32, 3, generator=GEN)


#: a max_norm between the norms of the gradients of the steps below
CLIP = float(os.environ.get("COCONET_TEST_CLIP", "0.5"))


def loss(model, k=0):
    x, y = X[k % 4 * 8:(k % 4 + 1) * 8], Y[k % 4 * 8:(k % 4 + 1) * 8]
    return ((model(x) - y) ** 2).mean()


def close(ref, got, steps, what):
    """Every parameter within 2^-20 * steps * max(1, |w|) of torch's."""
    for (name, p), q in zip(ref.named_parameters(), got.parameters()):
        d = (p - q).abs().max().item()
        bound = 2.0 ** -20 * steps * max(1.0, p.abs().max().item())
        if not d <= bound:
            raise AssertionError("%s: %s differs from torch's by %.3g > %.3g"
                                 % (what, name, d, bound))


def train(model, opt, steps, zero):
    for k in range(steps):
        zero(model, opt)
        loss(model, k).backward()
        opt.step()


OPTIMIZERS = [
    ("AdamW", torch.optim.AdamW, ct.AdamW, dict(lr=1e-2, weight_decay=0.1)),
    ("Adam", torch.optim.Adam, ct.Adam, dict(lr=1e-2, weight_decay=0.1)),
    ("SGD", torch.optim.SGD, ct.SGD, dict(lr=1e-2, momentum=0.9, dampening=0.1,
                                        weight_decay=0.1)),
    ("SGD-nesterov", torch.optim.SGD, ct.SGD, dict(lr=1e-2, momentum=0.9,
                                                  nesterov=True)),
    ("SGD-plain", torch.optim.SGD, ct.SGD, dict(lr=1e-2, dampening=0.5, weight_decay=0.1)),
]


def against_torch(zero, steps=12, schedule="fused_rs_c_ag"):
    for name, ref_cls, cls, kw in OPTIMIZERS:
        ref, got = Net(1), Net(1)
        train(ref, ref_cls(ref.parameters(), **kw), steps, zero)
        opt = cls(got.parameters(), schedule=schedule, cache_dir=CACHE, **kw)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            train(got, opt, steps, zero)
        close(ref, got, steps, name)
        # Frozen and unused parameters: untouched, as torch leaves them.
        for mod in ("frozen", "unused"):
            before = getattr(Net(1), mod).weight
            if not torch.equal(getattr(got, mod).weight, before):
                raise AssertionError("%s: %s.weight changed" % (name, mod))


@case
def optimizer_zero_grad_default():
    """The trap of issue 52: opt.zero_grad() with torch's default
    (set_to_none=True) keeps the views; the new gradients are read."""
    against_torch(lambda m, o: o.zero_grad())


@case
def model_zero_grad_set_to_none():
    """model.zero_grad(set_to_none=True) drops the views: backward makes
    new .grad tensors, which step() copies in (with a warning)."""
    against_torch(lambda m, o: m.zero_grad(set_to_none=True))


@case
def used_sometimes():
    """A layer backward reaches on the first step only: after
    zero_grad(set_to_none=True) torch skips it (its .grad is None), after
    zero_grad(set_to_none=False) it steps it with a zero gradient."""
    class Branchy(Net):
        def forward(self, x, k=0):
            y = super().forward(x)
            return self.unused(y) if k == 0 else y

    for set_to_none in (True, False):
        for name, ref_cls, cls, kw in OPTIMIZERS[:3]:
            ref, got = Branchy(6), Branchy(6)
            for model, opt in ((ref, ref_cls(ref.parameters(), **kw)),
                               (got, cls(got.parameters(), cache_dir=CACHE, **kw))):
                for k in range(4):
                    opt.zero_grad(set_to_none=set_to_none)
                    x, y = X[k * 8:(k + 1) * 8], Y[k * 8:(k + 1) * 8]
                    ((model(x, k) - y) ** 2).mean().backward()
                    opt.step()
            close(ref, got, 4, "%s set_to_none=%s" % (name, set_to_none))


@case
def rewiring_warns():
    model = Net(1)
    opt = ct.AdamW(model.parameters(), cache_dir=CACHE)
    model.zero_grad(set_to_none=True)
    loss(model).backward()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        opt.step()
    if not any("were copied into it" in str(w.message) for w in seen):
        raise AssertionError("no warning: %s" % [str(w.message) for w in seen])
    # The .grad is the view again: the next step copies nothing.
    opt.zero_grad()
    loss(model).backward()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        opt.step()
    if seen:
        raise AssertionError("warned again: %s" % seen[0].message)


@case
def grad_replaced_and_accumulated():
    """A .grad the user assigns is read; two backwards accumulate."""
    ref, got = Net(2), Net(2)
    ropt = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    gopt = ct.AdamW(got.parameters(), lr=1e-2, cache_dir=CACHE)
    for model, opt in ((ref, ropt), (got, gopt)):
        opt.zero_grad()
        loss(model, 0).backward()
        loss(model, 1).backward()
        model.a.bias.grad = torch.full_like(model.a.bias, 0.25)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            opt.step()
    close(ref, got, 1, "replaced")


@case
def groups_and_scheduler():
    """Two groups with their own lr and weight decay; StepLR halves lr."""
    for name, ref_cls, cls, kw in OPTIMIZERS[:3]:
        kw = dict(kw)
        kw.pop("weight_decay", None)
        ref, got = Net(3), Net(3)
        opts = []
        for model, c in ((ref, ref_cls), (got, cls)):
            groups = [{"params": list(model.a.parameters()), "lr": 3e-2,
                       "weight_decay": 0.0},
                      {"params": list(model.b.parameters()) +
                       list(model.frozen.parameters()), "weight_decay": 0.2}]
            extra = {} if c is ref_cls else {"cache_dir": CACHE}
            opt = c(groups, **kw, **extra)
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
            for k in range(10):
                opt.zero_grad()
                loss(model, k).backward()
                opt.step()
                sched.step()
            opts.append(opt)
        close(ref, got, 10, name)
        if opts[1].param_groups[0]["lr"] != opts[0].param_groups[0]["lr"]:
            raise AssertionError("lr not scheduled")


@case
def state_dict_round_trips():
    """Ours into torch's and torch's into ours: the same keys and shapes,
    and training on from either continues within the bound; ours into ours
    continues bit for bit."""
    for name, ref_cls, cls, kw in OPTIMIZERS[:4]:
        ref, got = Net(4), Net(4)
        ropt = ref_cls(ref.parameters(), **kw)
        gopt = cls(got.parameters(), cache_dir=CACHE, **kw)
        train(ref, ropt, 5, lambda m, o: o.zero_grad())
        train(got, gopt, 5, lambda m, o: o.zero_grad())
        rsd, gsd = ropt.state_dict(), gopt.state_dict()
        buf = io.BytesIO()
        torch.save(gsd, buf)
        buf.seek(0)
        gsd = torch.load(buf)
        if sorted(rsd["state"]) != sorted(gsd["state"]):
            raise AssertionError("%s: state keys %s, torch's %s" % (
                name, sorted(gsd["state"]), sorted(rsd["state"])))
        for i, st in rsd["state"].items():
            for k, v in st.items():
                if k not in gsd["state"][i] or gsd["state"][i][k].shape != v.shape:
                    raise AssertionError("%s: state %d %s missing or misshapen" % (name, i, k))
                if float((gsd["state"][i][k].float() - v.float()).abs().max()) > 1e-5:
                    raise AssertionError("%s: state %d %s differs" % (name, i, k))
        # Torch's state into a fresh coconet optimizer, and ours into torch.
        ref2, got2, got3 = Net(0), Net(0), Net(0)
        ref2.load_state_dict(got.state_dict())
        got2.load_state_dict(ref.state_dict())
        got3.load_state_dict(got.state_dict())
        ropt2 = ref_cls(ref2.parameters(), **kw)
        ropt2.load_state_dict(gsd)
        gopt2 = cls(got2.parameters(), cache_dir=CACHE, **kw)
        gopt2.load_state_dict(rsd)
        gopt3 = cls(got3.parameters(), cache_dir=CACHE, **kw)
        gopt3.load_state_dict(gsd)
        for model, opt in ((ref, ropt), (got, gopt), (ref2, ropt2), (got2, gopt2),
                           (got3, gopt3)):
            train(model, opt, 5, lambda m, o: o.zero_grad())
        close(ref, got2, 10, name + " from torch's state")
        close(got, ref2, 10, name + " into torch")
        for p, q in zip(got.parameters(), got3.parameters()):
            if not torch.equal(p, q):
                raise AssertionError("%s: restored run differs" % name)


@case
def clip_grad_norm():
    """max_norm= against torch.nn.utils.clip_grad_norm_ then torch's step:
    the weights within the bound and the norm within a few f32 roundings of
    clip_grad_norm_'s, with max_norm between the steps' norms so that some
    steps are clipped and some not. Unused and frozen parameters (no .grad)
    count for nothing in the norm."""
    steps, max_norm = 12, CLIP
    for name, ref_cls, cls, kw in (
            ("AdamW", torch.optim.AdamW, ct.AdamW, dict(lr=1e-2, weight_decay=0.1)),
            ("Adam", torch.optim.Adam, ct.Adam, dict(lr=1e-2, weight_decay=0.1)),
            ("SGD", torch.optim.SGD, ct.SGD, dict(lr=1e-2, momentum=0.9,
                                                weight_decay=0.1))):
        for schedule in ("ar_c", "rs_c_ag", None):
            ref, got = Net(1), Net(1)
            ropt = ref_cls(ref.parameters(), **kw)
            opt = cls(got.parameters(), max_norm=max_norm, schedule=schedule,
                      cache_dir=CACHE, **kw)
            clipped = 0
            for k in range(steps):
                ropt.zero_grad()
                loss(ref, k).backward()
                norm = torch.nn.utils.clip_grad_norm_(ref.parameters(), max_norm)
                ropt.step()
                opt.zero_grad()
                loss(got, k).backward()
                opt.step()
                clipped += norm.item() > max_norm
                d = abs(opt.grad_norm.item() - norm.item())
                if not d <= 4 * 2.0 ** -24 * norm.item():
                    raise AssertionError("%s %s: step %d: norm %r, torch's %r"
                                         % (name, schedule, k, opt.grad_norm.item(),
                                            norm.item()))
            if not 0 < clipped < steps:
                raise AssertionError("%s: %d of %d steps clipped: choose another "
                                     "max_norm" % (name, clipped, steps))
            close(ref, got, steps, "%s max_norm %s" % (name, schedule))


@case
def bf16_master_weights():
    """bfloat16 parameters: the step updates float32 master weights (in the
    state_dict as master_weight) and writes their bf16 rounding into the
    model. Each step against torch.optim's step from the same state: an f32
    shadow model loaded with our master weights and state_dict and given
    our gradients widened to f32; our masters within 2^-20 * max(1, |w|)
    of its weights, our bf16 weights their rounding exactly; frozen and
    unused parameters untouched."""
    for name, ref_cls, cls in (("AdamW", torch.optim.AdamW, ct.AdamW),
                               ("Adam", torch.optim.Adam, ct.Adam)):
        for schedule in ("rs_c_ag", "ar_c", "fused_rs_c_ag", None):
            model = Net(1).bfloat16()
            start = [p.detach().clone() for p in model.parameters()]
            opt = cls(model.parameters(), lr=1e-2, weight_decay=0.1,
                      schedule=schedule, cache_dir=CACHE)
            shadow = Net(1)
            sopt = ref_cls(shadow.parameters(), lr=1e-2, weight_decay=0.1)
            what = "%s bf16 %s" % (name, schedule)
            for k in range(6):
                opt.zero_grad()
                x, y = X[k % 4 * 8:(k % 4 + 1) * 8], Y[k % 4 * 8:(k % 4 + 1) * 8]
                ((model(x.bfloat16()) - y.bfloat16()) ** 2).float().mean().backward()
                st = opt.state_dict()
                with torch.no_grad():
                    for i, (q, p) in enumerate(zip(shadow.parameters(), model.parameters())):
                        q.copy_(st["state"][i]["master_weight"] if i in st["state"]
                                else p.float())
                        q.grad = None if p.grad is None else p.grad.float()
                sopt.load_state_dict(st)
                sopt.step()
                opt.step()
                masters = opt.state_dict()["state"]
                for i, (q, p) in enumerate(zip(shadow.parameters(), model.parameters())):
                    if i not in masters:
                        if not torch.equal(p, start[i]):
                            raise AssertionError("%s: parameter %d changed without "
                                                 "a gradient" % (what, i))
                        continue
                    mw = masters[i]["master_weight"]
                    d = (mw - q).abs().max().item()
                    bound = 2.0 ** -20 * max(1.0, q.abs().max().item())
                    if not d <= bound:
                        raise AssertionError("%s: step %d: parameter %d's master "
                                             "weights differ from torch's by %.3g > %.3g"
                                             % (what, k, i, d, bound))
                    if not torch.equal(p, mw.bfloat16()):
                        raise AssertionError("%s: step %d: parameter %d is not its "
                                             "master weights' bf16 rounding" % (what, k, i))


def refuses(what, fn, exc, text):
    try:
        fn()
    except exc as e:
        if text not in str(e):
            raise AssertionError("%s: message %r lacks %r" % (what, str(e), text))
        return
    raise AssertionError("%s: not refused" % what)


def own_program(name, body_change=None, params_change=None):
    """A copy of stdlib's torch_adam (and its rs_c_ag schedule) named
    `name`, with `body_change`/`params_change` (old, new) applied."""
    here = os.path.dirname(os.path.abspath(__file__))
    std = open(os.path.join(here, "..", "..", "stdlib", "optim", "torch.coco")).read()
    start = std.index("program torch_adam(")
    end = std.index("// The same as one fused collective kernel.", start)
    text = std[start:end].replace("torch_adam", name)
    for change in (body_change, params_change):
        if change:
            assert change[0] in text, change
            text = text.replace(change[0], change[1], 1)
    path = os.path.join(work, name + ".coco")
    with open(path, "w") as f:
        f.write(text)
    return path


@case
def users_own_program():
    """program=(file, name): a program of the user's that follows the
    convention steps the model (a copy of torch_adam: bit for bit
    coconet.torch.AdamW's own; one whose step size is doubled: other
    weights); one that does not is refused at the first step, naming the
    parameter."""
    same = own_program("my_adam")
    other = own_program("my_adam2", ("expand(ss, layers) * m1",
                                      "expand(ss, layers) * 2.0 * m1"))
    runs = {}
    for key, program in (("std", None), ("same", (same, "my_adam")),
                         ("other", (other, "my_adam2"))):
        model = Net(1)
        opt = ct.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1,
                       program=program, cache_dir=CACHE)
        train(model, opt, 4, lambda m, o: o.zero_grad())
        runs[key] = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    if not torch.equal(runs["std"], runs["same"]):
        raise AssertionError("the copy of torch_adam differs from AdamW's own")
    if torch.equal(runs["std"], runs["other"]):
        raise AssertionError("program= did not run the user's program")
    fewer = own_program("my_adam3", None, ("eps: f32)", ")"))
    fewer_text = open(fewer).read().replace(" + eps;", ";")
    with open(fewer, "w") as f:
        f.write(fewer_text)
    m = Net(0)
    opt = ct.AdamW(m.parameters(), program=(fewer, "my_adam3"), cache_dir=CACHE)
    loss(m).backward()
    refuses("fewer", opt.step, ValueError, "takes 14 parameters after its segment table; AdamW passes 15 (g, w, "
            "m, v, 5 [T] vectors and 6 scalars")
    wide = own_program("my_adam4", ("gs * gscale", "gs * f32(gscale)"),
                       ("gscale: f32", "gscale: f64"))
    m = Net(0)
    opt = ct.AdamW(m.parameters(), program=(wide, "my_adam4"), cache_dir=CACHE)
    loss(m).backward()
    refuses("f64 gscale", opt.step, ValueError,
            "parameter 9 is gscale: f64; AdamW passes f32 scalar here")
    refuses("pair", lambda: ct.AdamW(m.parameters(), program="my.coco"), TypeError,
            "program is a pair (a .coco file, a program's name), not 'my.coco'")
    refuses("clip", lambda: ct.AdamW(m.parameters(), program=(same, "my_adam"),
                                     max_norm=1.0),
            ValueError, "program= with max_norm=")


@case
def refusals():
    m = Net(0)
    refuses("f64", lambda: ct.AdamW(torch.nn.Linear(2, 2).double().parameters()),
            TypeError, "is torch.float64: coconet.torch's optimizers step float32")
    refuses("f16", lambda: ct.AdamW(torch.nn.Linear(2, 2).half().parameters()),
            TypeError, "or bfloat16 ones with float32 master weights")
    refuses("two dtypes", lambda: ct.AdamW([torch.nn.Parameter(torch.zeros(2)),
                                            torch.nn.Parameter(torch.zeros(2).bfloat16())]),
            TypeError, "parameter 1 (shape (2,)) is torch.bfloat16, parameter 0 "
            "torch.float32: give parameters of one dtype")
    refuses("bf16 LAMB", lambda: ct.LAMB(torch.nn.Linear(2, 2).bfloat16().parameters()),
            TypeError, "LAMB does not keep float32 master weights")
    refuses("bf16 max_norm", lambda: ct.AdamW(torch.nn.Linear(2, 2).bfloat16().parameters(),
                                               max_norm=1.0),
            ValueError, "max_norm with bfloat16 parameters is not supported yet")
    refuses("duplicate", lambda: ct.AdamW([m.a.weight, m.a.weight]), ValueError,
            "appears twice")
    refuses("lr", lambda: ct.AdamW(m.parameters(), lr=-1.0), ValueError,
            "Invalid learning rate")
    refuses("betas", lambda: ct.AdamW(m.parameters(), betas=(1.0, 0.9)), ValueError,
            "Invalid beta parameter at index 0")
    refuses("amsgrad", lambda: ct.AdamW(m.parameters(), amsgrad=True), ValueError,
            "amsgrad=True is not supported")
    refuses("schedule", lambda: ct.AdamW(m.parameters(), schedule="fast\x1b[2J"),
            ValueError, "not 'fast\\x1b[2J'")
    refuses("auto", lambda: ct.AdamW(m.parameters(), schedule="auto"), ValueError,
            "needs machine=")
    refuses("group betas", lambda: ct.AdamW([{"params": [m.a.weight]},
                                             {"params": [m.b.weight], "betas": (0.8, 0.9)}]),
            ValueError, "every parameter group has the same betas")
    refuses("max_norm", lambda: ct.AdamW(m.parameters(), max_norm=-1.0), ValueError,
            "max_norm must be 0 or more, not -1.0")
    refuses("max_norm type", lambda: ct.AdamW(m.parameters(), max_norm="1"), TypeError,
            "max_norm is a number, not str")
    refuses("max_norm fused", lambda: ct.AdamW(m.parameters(), max_norm=1.0,
                                                schedule="fused_rs_c_ag"),
            ValueError, "max_norm has no fused_rs_c_ag schedule")
    refuses("nesterov", lambda: ct.SGD(m.parameters(), nesterov=True), ValueError,
            "Nesterov momentum requires a momentum")
    opt = ct.AdamW(m.parameters(), cache_dir=CACHE)
    refuses("add group", lambda: opt.add_param_group({"params": [torch.zeros(2)]}),
            RuntimeError, "give every group then")
    m.a.weight.data = torch.zeros(3, 3)
    refuses("data replaced", opt.step, ValueError,
            ".data was replaced by a torch.float32 tensor of shape (3, 3)")


@case
def data_replaced_same_shape():
    """p.data = a new tensor of the same shape: its values are copied in
    and stepped."""
    m = Net(5)
    opt = ct.SGD(m.parameters(), lr=0.5, cache_dir=CACHE)
    m.a.bias.data = torch.full((10,), 2.0)
    opt.zero_grad()
    m.a.bias.grad = torch.ones(10)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        opt.step()
    if not torch.equal(m.a.bias.detach(), torch.full((10,), 1.5)):
        raise AssertionError("got %s" % m.a.bias)


for name in failures:
    print("FAILED:", name)
sys.exit(1 if failures else 0)
