"""PyTorch optimizers whose step is a compiled coconet program.

    import coconet.torch
    opt = coconet.torch.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    ...
    loss.backward()
    opt.step()          # the gradients averaged over the ranks, then AdamW
    opt.zero_grad()

`AdamW`, `Adam` and `SGD` take torch.optim's arguments and follow its
definitions; `LAMB` is timm's without clipping. Each is a
torch.optim.Optimizer (param groups, LR schedulers, state_dict), data
parallel over the ranks of an MPI communicator (run one process per rank
under mpirun; one process is one rank): use it instead of
DistributedDataParallel's gradient allreduce, not with it.

The program (stdlib/optim/torch.coco, under `schedule`, rs_c_ag by default) is compiled on the
first step and cached (coconet.cache). The parameters are moved into one
flat buffer and their gradients into another: each parameter's `.data`
and `.grad` become views into them (each aligned to 64 bytes, the buffer
padded to a multiple of the ranks), so the step reads and writes the
tensors the model computes with. docs/python.md ("PyTorch optimizers")
has the rest: the rules for `.grad`, what is checked, the bound against
torch.optim.
"""

import inspect
import math
import os
import warnings

import numpy as np
import torch

from . import _config
from . import cache as _cache
from . import runtime as _runtime

__all__ = ["AdamW", "Adam", "SGD", "LAMB", "SOURCE"]

#: The programs the optimizers run (the optimizer convention: its header).
SOURCE = os.path.join(_config.STDLIB_DIR, "optim", "torch.coco")

#: Each parameter starts at a multiple of ALIGN elements (64 bytes of f32).
ALIGN = 16

_SCHEDULES = ("ar_c", "rs_c_ag", "fused_rs_c_ag")

# torch.optim.Optimizer.zero_grad's default: False before torch 2.0, True since.
_SET_TO_NONE = inspect.signature(
    torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default


def _world(communicator):
    """(the mpi4py communicator or None, its number of ranks, this rank)."""
    return _runtime.mpi_world(
        communicator, "coconet.torch", "the optimizer exchanges which "
        "parameters have gradients, and gathers sharded state, over MPI")


class _FlatOptimizer(torch.optim.Optimizer):
    """What every optimizer here shares: the flat buffers, the checks of
    .data and .grad, the program's call, state_dict."""

    #: the program of stdlib/optim/torch.coco
    _program_name = None
    #: the program's state parameters and torch's names for them (None:
    #: not in torch's state)
    _state = ()
    #: whether torch's state has each parameter's "step"
    _counted = True
    #: clip_grad_norm_'s max_norm inside the step (the program "<name>_clip"),
    #: or None
    _max_norm = None
    #: whether bfloat16 parameters are stepped with float32 master weights
    #: (the program "<name>_mixed", its state "master" first)
    _mixed_ok = False
    #: the gradients' global norm before clipping, as clip_grad_norm_
    #: returns it (a 0-d tensor), after each step() with max_norm; else None
    grad_norm = None

    def __init__(self, params, defaults, schedule, communicator, average,
                 machine, cache_dir):
        self._ready = False
        super().__init__(params, defaults)
        if schedule not in (None, "none", "auto") + _SCHEDULES:
            raise ValueError(
                "coconet.torch: schedule is one of %s, 'auto' or None, not %s"
                % (", ".join(repr(s) for s in _SCHEDULES), ascii(schedule)[:64]))
        if schedule == "auto" and not machine:
            raise ValueError("coconet.torch: schedule='auto' needs machine= (a "
                             "machine file's name or path, e.g. 'cpu-2x1')")
        self._schedule = None if schedule == "none" else schedule
        self._machine = machine
        self._cache_dir = cache_dir
        self._average = bool(average)
        self._comm, self._ranks, self._rank = _world(communicator)
        self._communicator = communicator
        self._params = [p for g in self.param_groups for p in g["params"]]
        self._group_of = [i for i, g in enumerate(self.param_groups)
                          for _ in g["params"]]
        self._check_params()
        for g in self.param_groups:
            self._check_group(g)
        self._layout()
        self._module = None
        self._step_fn = None
        self._tensors = None  # the state buffers, by program name
        self._pending = None  # state loaded before the program was made
        self._rewired = 0
        self._ready = True

    #: the .coco file of the program (program= gives another)
    _source = SOURCE
    #: program= gave the user's own program
    _custom = False

    def _use_program(self, program):
        """program=(file, name): the user's own program in place of the
        standard library's (before __init__); it must follow the
        convention of stdlib/optim/torch.coco, checked at the first step."""
        if program is None:
            return
        if (not isinstance(program, (tuple, list)) or len(program) != 2
                or not isinstance(program[0], (str, os.PathLike))
                or not isinstance(program[1], str)):
            raise TypeError("coconet.torch: program is a pair (a .coco file, a "
                            "program's name), not %s" % ascii(program)[:64])
        self._source = os.fspath(program[0])
        self._program_name = program[1]
        self._custom = True

    def _clip(self, max_norm, schedule):
        """max_norm=: the program NAME_clip (before __init__)."""
        if max_norm is None:
            return
        if self._custom:
            raise ValueError("coconet.torch: program= with max_norm=: give a "
                             "program that clips (as stdlib's NAME_clip do)")
        if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)):
            raise TypeError("coconet.torch: max_norm is a number, not %s"
                            % type(max_norm).__name__)
        if not max_norm >= 0.0:
            raise ValueError("coconet.torch: max_norm must be 0 or more, not %s"
                             % max_norm)
        if schedule == "fused_rs_c_ag":
            raise ValueError(
                "coconet.torch: max_norm has no fused_rs_c_ag schedule (the "
                "norm of every gradient comes between the reducescatter and "
                "the update): use rs_c_ag")
        self._program_name = self._program_name + "_clip"
        self._max_norm = float(max_norm)

    # --- the parameters -------------------------------------------------------
    def add_param_group(self, param_group):
        if getattr(self, "_ready", False):
            raise RuntimeError(
                "coconet.torch: parameter groups are laid out in the flat "
                "buffers when the optimizer is made: give every group then")
        super().add_param_group(param_group)

    def _check_params(self):
        seen = set()
        if not self._params:
            raise ValueError("coconet.torch: the optimizer got no parameters")
        device = self._params[0].device
        dtype = self._params[0].dtype
        for i, p in enumerate(self._params):
            what = "coconet.torch: parameter %d (shape %s)" % (i, tuple(p.shape))
            if id(p) in seen:
                raise ValueError("%s appears twice: give each parameter once"
                                 % what)
            seen.add(id(p))
            if not p.is_leaf:
                raise ValueError("%s is not a leaf tensor: an optimizer steps "
                                 "a model's parameters" % what)
            if p.dtype not in (torch.float32, torch.bfloat16):
                raise TypeError("%s is %s: coconet.torch's optimizers step "
                                "float32 parameters, or bfloat16 ones with "
                                "float32 master weights" % (what, p.dtype))
            if p.dtype != dtype:
                raise TypeError("%s is %s, parameter 0 %s: give parameters of "
                                "one dtype" % (what, p.dtype, dtype))
            if p.is_sparse or p.layout != torch.strided:
                raise TypeError("%s is sparse: give dense parameters" % what)
            if p.device != device:
                raise ValueError("%s is on %s, parameter 0 on %s: give "
                                 "parameters on one device" % (what, p.device, device))
        if dtype == torch.bfloat16:
            if not self._mixed_ok:
                raise TypeError("coconet.torch: bfloat16 parameters: %s does not "
                                "keep float32 master weights (AdamW and Adam do)"
                                % type(self).__name__)
            if self._max_norm is not None:
                raise ValueError("coconet.torch: max_norm with bfloat16 "
                                 "parameters is not supported yet")
            if self._custom:
                raise ValueError("coconet.torch: program= with bfloat16 "
                                 "parameters is not supported yet")
            self._program_name += "_mixed"
            self._state = (("master", "master_weight"),) + tuple(self._state)
        self._dtype = dtype
        if device.type == "cpu":
            self._target = "cpu"
        elif device.type == "cuda":
            self._target = "cuda"
        else:
            raise ValueError("coconet.torch: parameters on %s: the cpu and cuda "
                             "targets take CPU and CUDA tensors" % device)
        self._device = device

    def _check_group(self, g):
        """torch.optim's checks of a group's values, and this program's."""
        lr = float(g["lr"])
        if not lr >= 0.0 or math.isinf(lr):
            raise ValueError("Invalid learning rate: %s" % g["lr"])
        if not g.get("weight_decay", 0.0) >= 0.0:
            raise ValueError("Invalid weight_decay value: %s" % g["weight_decay"])
        for flag in ("maximize", "amsgrad", "capturable", "differentiable"):
            if g.get(flag):
                raise ValueError("coconet.torch: %s=True is not supported by %s"
                                 % (flag, type(self).__name__))
        for name in self._shared:
            if g[name] != self.param_groups[0][name]:
                index = next(i for i, x in enumerate(self.param_groups) if x is g)
                raise ValueError(
                    "coconet.torch: every parameter group has the same %s (the "
                    "program takes one); group %d has %s, group 0 %s"
                    % (name, index, g[name], self.param_groups[0][name]))

    def _layout(self):
        """The flat buffers w and g; each parameter's .data and .grad views."""
        self._offsets, self._lengths = [], []
        n = 0
        for p in self._params:
            self._offsets.append(n)
            k = -(-p.numel() // ALIGN) * ALIGN
            self._lengths.append(k)
            n += k
        quantum = ALIGN * self._ranks
        total = -(-n // quantum) * quantum
        self._lengths[-1] += total - n  # the padding belongs to the last tensor
        self._n = total
        self._w = torch.zeros(total, dtype=self._dtype, device=self._device)
        self._g = torch.zeros(total, dtype=self._dtype, device=self._device)
        self._wviews, self._gviews = [], []
        t = len(self._params)
        # Which tensors had a gradient since the last zero_grad (backward's
        # hooks), and each tensor's own step count (torch's state["step"]).
        self._active = np.zeros(t, dtype=np.float32)
        self._steps = np.zeros(t, dtype=np.int64)
        for i, (p, o) in enumerate(zip(self._params, self._offsets)):
            k = p.numel()
            wv = self._w[o:o + k].view_as(p)
            gv = self._g[o:o + k].view_as(p)
            wv.copy_(p.data)
            if p.grad is not None:
                gv.copy_(p.grad)
                self._active[i] = 1.0
            p.data = wv
            p.grad = gv
            self._wviews.append(wv)
            self._gviews.append(gv)
        for i, p in enumerate(self._params):
            if p.requires_grad:
                p.register_hook(self._hook(i))

    def _hook(self, i):
        active = self._active

        def mark(grad):
            active[i] = 1.0
        return mark

    def zero_grad(self, set_to_none=_SET_TO_NONE):
        """Sets every gradient to zero; they stay views into the flat buffer.
        set_to_none (the default is this torch's) keeps torch's meaning: a
        parameter that backward does not reach before the next step() is
        skipped, as torch skips a .grad of None; with False it is stepped
        with a zero gradient, as torch steps a zeroed .grad."""
        self._g.zero_()
        for p, gv in zip(self._params, self._gviews):
            if p.grad is None or p.grad.data_ptr() != gv.data_ptr():
                p.grad = gv
        if set_to_none:
            self._active[:] = 0.0

    def _collect(self):
        """Checks each parameter's .data and .grad against the buffers:
        a .data or .grad replaced (model.zero_grad() sets .grad to None,
        backward then makes a new one) is copied in and made a view again;
        a .grad of None, or of a tensor that does not require grad, marks
        the tensor skipped, its gradient zero."""
        for i, (p, wv, gv) in enumerate(zip(self._params, self._wviews, self._gviews)):
            if p.data.data_ptr() != wv.data_ptr() or p.data.shape != wv.shape:
                if p.data.shape != wv.shape or p.data.dtype != wv.dtype:
                    raise ValueError(
                        "coconet.torch: parameter %d's .data was replaced by a %s "
                        "tensor of shape %s; it was %s of shape %s"
                        % (i, p.data.dtype, tuple(p.data.shape), wv.dtype, tuple(wv.shape)))
                wv.copy_(p.data)
                p.data = wv
            grad = p.grad
            if grad is None or not p.requires_grad:
                gv.zero_()
                self._active[i] = 0.0
                if grad is None:
                    p.grad = gv
                continue
            if grad.data_ptr() != gv.data_ptr():
                if grad.is_sparse or grad.shape != gv.shape:
                    raise ValueError(
                        "coconet.torch: parameter %d's .grad is a %s tensor of "
                        "shape %s; the parameter's shape is %s"
                        % (i, "sparse" if grad.is_sparse else "dense",
                           tuple(grad.shape), tuple(gv.shape)))
                gv.copy_(grad)
                p.grad = gv
                self._active[i] = 1.0
                self._rewired += 1
        if self._rewired:
            warnings.warn(
                "coconet.torch: %d gradients were not views into the "
                "optimizer's buffer (model.zero_grad() sets them to None) and "
                "were copied into it; optimizer.zero_grad() keeps them views "
                "and avoids the copy" % self._rewired, RuntimeWarning, stacklevel=3)
            self._rewired = 0

    # --- the program ---------------------------------------------------------
    def _program(self):
        if self._step_fn is not None:
            return self._step_fn
        schedule = self._schedule
        full = None if schedule is None else (
            schedule if schedule == "auto" else
            "%s_%s" % (self._program_name, schedule))
        extra = {}
        if schedule == "auto":
            extra = dict(size={"N": self._n, "T": len(self._params)},
                         ranks=self._ranks, machine=self._machine)
        self._module = _cache.load(self._source, self._program_name, full,
                                   self._target, cache_dir=self._cache_dir, **extra)
        tables = {"layers": self._lengths}
        sizes = {"N": self._n, "T": len(self._params)}
        if self._target == "cpu":
            step = self._module.Step(self._communicator, sizes=sizes, tables=tables)
        else:
            step = self._module.Step(self._communicator, sizes=sizes, tables=tables,
                                     stream=torch.cuda.current_stream(self._device))
        self._tensors = {}
        for name, _ in self._state:
            _, shape = step.block(name)
            self._tensors[name] = torch.zeros(shape, dtype=torch.float32,
                                              device=self._device)
        self._step_fn = step
        if self._pending is not None:
            self._restore(self._pending)
            self._pending = None
        elif "master" in self._tensors:
            self._restore({"master": self._w.float().cpu()}, ("master",))
        return step

    def _check_convention(self, step, vectors, scalars):
        """The user's program takes what this optimizer passes (the
        convention of stdlib/optim/torch.coco, by position): g and w, the
        state by its names, then `on` and the other [T] vectors, then
        gscale and the scalars, every tensor f32."""
        expected = [("g", "[N]", "segmented(layers)"), ("w", "[N]", "segmented(layers)")]
        expected += [(n, "[N]", "segmented(layers)") for n, _ in self._state]
        expected += [(None, "[T]", None)] * (1 + vectors)
        expected += [(None, "", None)] * (1 + scalars)
        params = [p for p in step.program.info["params"]]
        who = "coconet.torch: program '%s' of %s" % (self._program_name,
                                                     ascii(self._source)[1:-1][-64:])
        if len(params) != len(expected):
            raise ValueError("%s takes %d parameters after its segment table; "
                             "%s passes %d (g, w, %s, %d [T] vectors and %d "
                             "scalars: stdlib/optim/torch.coco's convention)"
                             % (who, len(params), type(self).__name__, len(expected),
                                ", ".join(n for n, _ in self._state) or "no state",
                                1 + vectors, 1 + scalars))
        for i, (p, (name, dims, seg)) in enumerate(zip(params, expected)):
            t = p["type"]
            ok = (p["dtype"] == "f32" and t[3:].startswith(dims) if dims
                  else p["kind"] == "scalar" and p["dtype"] == "f32")
            ok = ok and (seg is None or seg in t) and (name is None or p["name"] == name)
            if not ok:
                want = ("f32 scalar" if not dims else "f32%s%s" % (
                    dims, " ... " + seg if seg else ""))
                raise ValueError("%s: parameter %d is %s: %s; %s passes %s%s here"
                                 % (who, i, p["name"], t, type(self).__name__, want,
                                    " named '%s'" % name if name else ""))

    def _vector(self, values):
        v = torch.from_numpy(np.asarray(values, dtype=np.float32))
        return v if self._target == "cpu" else v.to(self._device, non_blocking=True)

    def _agree(self):
        """The tensors stepped: those with a gradient on any rank."""
        if self._comm is not None and self._ranks > 1:
            from mpi4py import MPI
            out = np.empty_like(self._active)
            self._comm.Allreduce(self._active, out, op=MPI.MAX)
            return out
        return self._active.copy()

    def _group_values(self, key):
        return np.array([float(self.param_groups[g][key]) for g in self._group_of],
                        dtype=np.float64)

    @torch.no_grad()
    def step(self, closure=None):
        """One step over every parameter: the gradients summed over the ranks
        (averaged unless average=False), then the update."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for g in self.param_groups:
            self._check_group(g)
        self._collect()
        step = self._program()
        on = self._agree()
        self._steps += (on > 0)
        args = self._arguments(on)
        if self._custom and not getattr(self, "_checked", False):
            self._check_convention(step, len(args[0]), len(args[1]))
            self._checked = True
        clip = () if self._max_norm is None else (self._max_norm,)
        out = step(self._g, self._w, *[self._tensors[n] for n, _ in self._state],
                   self._vector(on), *[self._vector(a) for a in args[0]],
                   1.0 / self._ranks if self._average else 1.0, *args[1], *clip)
        if clip:
            self.grad_norm = out  # the one output
        return loss

    # --- state_dict ------------------------------------------------------------
    def _full(self, name):
        """The whole flat state buffer `name` (gathered where it is sharded)."""
        local = self._tensors[name]
        if local.numel() == self._n:
            return local.detach().cpu().clone()
        if self._comm is None:
            raise RuntimeError("coconet.torch: sharded state needs mpi4py to gather")
        full = np.empty(self._n, dtype=np.float32)
        self._comm.Allgather(local.detach().cpu().numpy(), full)
        return torch.from_numpy(full)

    def state_dict(self):
        """torch.optim's format: per parameter `step` and the state under
        torch's names. Collective where the state is sharded (each rank's
        slice is gathered)."""
        self.state.clear()
        fulls = {}
        if self._tensors is not None:
            fulls = {n: self._full(n) for n, torch_name in self._state if torch_name}
        for i, p in enumerate(self._params):
            if self._steps[i] == 0:
                continue
            st = {"step": torch.tensor(float(self._steps[i]))} if self._counted else {}
            o, k = self._offsets[i], p.numel()
            for name, torch_name in self._state:
                if torch_name is None:
                    continue
                if name in fulls:
                    st[torch_name] = fulls[name][o:o + k].view_as(p).clone().to(p.device)
                elif self._pending is not None:
                    st[torch_name] = self._pending[name][o:o + k].view_as(p).clone().to(p.device)
            self.state[p] = st
        try:
            return super().state_dict()
        finally:
            self.state.clear()

    def load_state_dict(self, state_dict):
        """Loads a state_dict of this optimizer or of torch.optim's: its
        hyperparameters and per-parameter state (a parameter without state
        starts from zero)."""
        # torch's load_state_dict casts each state tensor to its parameter's
        # dtype (bf16 master weights and moments would lose their bits): the
        # state is read from the given dict, uncast.
        raw = {}
        for group in state_dict.get("param_groups", ()):
            for pid in group.get("params", ()):
                raw[len(raw)] = state_dict.get("state", {}).get(pid)
        super().load_state_dict(state_dict)
        for g in self.param_groups:
            self._check_group(g)
        fulls = {name: torch.zeros(self._n) for name, _ in self._state}
        if "master" in fulls:
            # A parameter without master weights in the state (torch's own
            # state_dict, or one not stepped yet) starts from its weights.
            fulls["master"] = self._w.float().cpu()
        steps = np.zeros(len(self._params), dtype=np.int64)
        for i, p in enumerate(self._params):
            st = self.state.get(p)
            if not st:
                continue
            # torch's SGD keeps no step: a parameter with state has stepped
            # (without momentum it has none, and needs none: the velocity is
            # the gradient).
            steps[i] = int(float(st["step"])) if self._counted else 1
            o, k = self._offsets[i], p.numel()
            uncast = raw.get(i) or st
            for name, torch_name in self._state:
                value = uncast.get(torch_name) if torch_name else None
                if value is None:
                    continue
                if value.shape != p.shape:
                    raise ValueError("coconet.torch: state %r of parameter %d has "
                                     "shape %s, the parameter %s" % (
                                         torch_name, i, tuple(value.shape), tuple(p.shape)))
                fulls[name][o:o + k] = value.detach().reshape(-1).float().cpu()
        self.state.clear()
        self._steps[:] = steps
        if self._tensors is None:
            self._pending = fulls
        else:
            self._restore(fulls)

    def _restore(self, fulls, names=None):
        for name in names or [n for n, _ in self._state]:
            local = self._tensors[name]
            offset, shape = self._step_fn.block(name)
            start = offset[0] if offset else 0
            local.copy_(fulls[name][start:start + local.numel()].view(shape))


def _betas(betas):
    b1, b2 = betas
    if not 0.0 <= b1 < 1.0:
        raise ValueError("Invalid beta parameter at index 0: %s" % b1)
    if not 0.0 <= b2 < 1.0:
        raise ValueError("Invalid beta parameter at index 1: %s" % b2)


class _AdamFamily(_FlatOptimizer):
    _state = (("m", "exp_avg"), ("v", "exp_avg_sq"))
    _shared = ("betas", "eps")

    def __init__(self, params, lr, betas, eps, weight_decay, amsgrad, maximize,
                 schedule, communicator, average, machine, cache_dir, **flags):
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: %s" % eps)
        _betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize)
        for k, v in flags.items():
            if v:
                raise ValueError("coconet.torch: %s=True is not supported by %s"
                                 % (k, type(self).__name__))
        super().__init__(params, defaults, schedule, communicator, average,
                         machine, cache_dir)

    def _corrections(self):
        b1, b2 = self.param_groups[0]["betas"]
        t = np.maximum(self._steps, 1).astype(np.float64)
        bc1 = 1.0 - np.power(float(b1), t)
        sbc2 = np.sqrt(1.0 - np.power(float(b2), t))
        return bc1, sbc2

    def _scalars(self):
        b1, b2 = self.param_groups[0]["betas"]
        return (float(b1), float(b2), 1.0 - float(b1), 1.0 - float(b2),
                float(self.param_groups[0]["eps"]))


class _TorchAdam(_AdamFamily):
    """torch.optim.AdamW and torch.optim.Adam: one program, whose weight
    decay is decoupled (AdamW: decay = 1 - lr * wd) or an L2 term of the
    gradient (Adam), the other term its identity."""

    _program_name = "torch_adam"
    _mixed_ok = True
    #: AdamW's decoupled weight decay, or Adam's L2 term
    _decoupled = None
    _default_weight_decay = None

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=None, amsgrad=False, *, maximize=False,
                 schedule="rs_c_ag", communicator=None, average=True,
                 machine=None, cache_dir=None, foreach=None, capturable=False,
                 differentiable=False, fused=None, max_norm=None, program=None):
        if weight_decay is None:
            weight_decay = self._default_weight_decay
        self._use_program(program)
        self._clip(max_norm, schedule)
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize,
                         schedule, communicator, average, machine, cache_dir,
                         capturable=capturable, differentiable=differentiable)

    def _arguments(self, on):
        bc1, sbc2 = self._corrections()
        lr = self._group_values("lr")
        wd = self._group_values("weight_decay")
        if self._decoupled:
            l2, decay = np.zeros_like(wd), 1.0 - lr * wd
        else:
            l2, decay = wd, np.ones_like(wd)
        return (lr / bc1, l2, decay, sbc2), self._scalars()


class AdamW(_TorchAdam):
    """torch.optim.AdamW: Adam with decoupled weight decay.

    AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
          *, schedule="rs_c_ag", communicator=None, average=True,
          machine=None, cache_dir=None)

    schedule: the program's schedule (stdlib/optim/torch.coco): "ar_c",
    "rs_c_ag" (ZeRO: the moments sharded over the ranks; the default, the
    fastest measured from Python on the CPU: docs/bench/torch-optim-cpu.md),
    "fused_rs_c_ag" (the same as one kernel, which from Python stages the
    team's tensors through its shared memory), None (unscheduled) or "auto"
    (the tuner's fastest on `machine`). communicator: an mpi4py communicator (None:
    MPI_COMM_WORLD). average: the gradients are averaged over the ranks
    (as DistributedDataParallel does), else summed. foreach and fused, torch's
    choices of kernel, are accepted and ignored: the step is the program's.
    max_norm: clip the gradients by their global norm inside the step, as
    torch.nn.utils.clip_grad_norm_(params, max_norm) before step() does
    (every parameter of the optimizer; schedules ar_c and rs_c_ag); the norm
    before clipping is then `optimizer.grad_norm` after each step."""

    _decoupled = True
    _default_weight_decay = 1e-2


class Adam(_TorchAdam):
    """torch.optim.Adam: weight decay as an L2 term of the gradient. The
    arguments are AdamW's (weight_decay defaults to 0)."""

    _decoupled = False
    _default_weight_decay = 0.0


class LAMB(_AdamFamily):
    """LAMB (You et al., 2020) as timm's Lamb without its own gradient
    clipping: AdamW's direction u = mhat / (sqrt(vhat) + eps) +
    weight_decay * w, scaled per tensor by its trust ratio ||w|| / ||u||
    (1 where either is 0). The arguments are AdamW's (weight_decay defaults
    to 0; max_norm clips as clip_grad_norm_ does)."""

    _program_name = "torch_lamb"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6,
                 weight_decay=0.0, *, schedule="rs_c_ag", communicator=None,
                 average=True, machine=None, cache_dir=None, max_norm=None,
                 program=None):
        self._use_program(program)
        self._clip(max_norm, schedule)
        super().__init__(params, lr, betas, eps, weight_decay, False, False,
                         schedule, communicator, average, machine, cache_dir)

    def _arguments(self, on):
        bc1, sbc2 = self._corrections()
        return ((self._group_values("lr"), self._group_values("weight_decay"),
                 bc1, sbc2), self._scalars())


class SGD(_FlatOptimizer):
    """torch.optim.SGD: momentum, dampening, Nesterov and weight decay as
    torch defines them.

    SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
        nesterov=False, *, schedule="rs_c_ag", communicator=None,
        average=True, machine=None, cache_dir=None, max_norm=None)

    max_norm clips the gradients as AdamW's does."""

    _shared = ("momentum", "dampening", "nesterov")
    _counted = False

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0,
                 weight_decay=0.0, nesterov=False, *, maximize=False,
                 schedule="rs_c_ag", communicator=None, average=True,
                 machine=None, cache_dir=None, foreach=None,
                 differentiable=False, fused=None, max_norm=None, program=None):
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: %s" % momentum)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise ValueError("coconet.torch: differentiable=True is not supported by SGD")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize)
        self._program_name = "torch_sgd"
        self._use_program(program)
        self._clip(max_norm, schedule)
        self._state = (("buf", "momentum_buffer" if momentum != 0 else None),)
        super().__init__(params, defaults, schedule, communicator, average,
                         machine, cache_dir)

    def _check_group(self, g):
        super()._check_group(g)
        if (g["momentum"] != 0) != (self._state[0][1] is not None):
            raise ValueError("coconet.torch: momentum cannot change between "
                             "zero and non-zero after the optimizer is made")

    def _arguments(self, on):
        lr = self._group_values("lr")
        wd = self._group_values("weight_decay")
        g0 = self.param_groups[0]
        first = (self._steps == 1).astype(np.float64)
        nest = np.full(len(self._params), 1.0 if g0["nesterov"] else 0.0)
        # Without momentum torch steps by the gradient (its dampening unused).
        damp = 1.0 - float(g0["dampening"]) if g0["momentum"] != 0 else 1.0
        return ((lr, wd, first, nest), (float(g0["momentum"]), damp))
