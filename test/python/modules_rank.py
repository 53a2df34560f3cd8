#!/usr/bin/env python3
"""One rank of run_modules.py (under mpirun): for every module of the
manifest and every framework (numpy, torch), this rank's block of every
input is passed to the module's Step, and its block of every result is
compared with the simulator's, bit for bit. Also checks that the arrays a
step updates are the caller's own memory (zero copy) and that an output
passed in is written and returned. Rank 0 prints one line per module and
framework and the failures of every rank; exit status 1 on any failure.

The cuda-emu target's modules (run_modules.py --target cuda-emu) run on
NCCL communicators that coconet.NcclCommunicator makes (the emulated
NCCL): the steps that give the blocks on the process's default one (Step()
given no communicator: bootstrapped over MPI_COMM_WORLD), the steps under
test on one made from a unique id that this script shares with mpi4py
(every other module), or on one made over MPI for the module alone and
destroyed after it. Each step is waited for (Step.synchronize) before its
results are read.
"""

import importlib.util
import json
import sys

import numpy as np
from mpi4py import MPI

import coconet


def load(directory, name):
    spec = importlib.util.spec_from_file_location(
        name, f"{directory}/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def block_of(array, param, offset, shape, rank):
    """This rank's block of a global array, or of a tensor local on some
    axis, whose blocks are stacked by rank."""
    if any(state == "local" for state in param["layout"]):
        array = array[rank]
    if array.ndim == 0:  # a scalar result (a norm): the whole of it
        return array.copy()  # (ascontiguousarray would make it 1-d)
    index = tuple(slice(o, o + n) for o, n in zip(offset, shape))
    return np.ascontiguousarray(array[index])


def same(a, b):
    """Bit for bit, NaNs equal."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.tobytes() == b.tobytes():
        return True
    if a.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True))
    return False


def check(entry, framework, torch, rank, comm=None, emulated=False):
    """Runs one module once (on `comm`, where given); returns a list of
    failures."""
    module = load(entry["dir"], entry["name"])
    # A step created with every size, for the blocks; the step under test
    # reads them from the arrays (numpy) or is given them (torch).
    sized = module.Step(sizes=entry["sizes"], tables=entry["tables"])
    info = sized.program.info
    if emulated and info["target"] != "cuda-emulated":
        return [f"the library's target is {info['target']!r}, not "
                f"'cuda-emulated'"]
    if framework == "numpy" and any(p["numpy_dtype"] == "bfloat16"
                                    for p in info["params"] if p["kind"] != "scalar"):
        return None  # NumPy has no bfloat16: such a module runs with torch only
    axes = info["sizes"][:info["num_axes"]]
    on = {"comm": comm} if comm is not None else {}
    if framework == "numpy":
        # What the arrays cannot give: the axes of a mesh of several
        # (one axis is the number of ranks), and sizes that only the
        # program's constants name (samples/moe_layer.coco's capacity C).
        given = {a: entry["sizes"][a] for a in axes} if len(axes) > 1 else {}
        seen = {d for p in info["params"] if p["kind"] == "tensor"
                for d in p["dims"]}
        given.update({s: entry["sizes"][s]
                      for s in info["sizes"][info["num_axes"]:]
                      if s not in seen})
        step = module.Step(tables=entry["tables"], sizes=given or None, **on)
    else:
        step = module.Step(sizes=entry["sizes"], tables=entry["tables"], **on)
    args, kwargs, blocks, wrapped = [], {}, {}, {}
    for p in info["params"]:
        if p["kind"] == "scalar" and entry["scalars"][p["name"]] is None:
            # A per-rank scalar: this rank's entry of the stacked values.
            x = np.load(f"{entry['inputs']}/{p['name']}.npy")
            args.append(x[rank].item())
            continue
        if p["kind"] == "scalar":
            text = entry["scalars"][p["name"]]
            value = {"true": True, "false": False}.get(text)
            if value is None:
                value = float(text) if p["numpy_dtype"].startswith(
                    "float") else int(text)
            args.append(value)
            continue
        offset, shape = sized.block(p["name"])
        blocks[p["name"]] = (offset, shape)
        if p["kind"] == "output":
            # Every other output is passed in, the others allocated.
            if len(kwargs) % 2 == 0:
                if p["numpy_dtype"] == "bfloat16":
                    x = torch.zeros(shape, dtype=torch.bfloat16)
                else:
                    x = np.full(shape, 0, dtype=p["numpy_dtype"])
                    x = torch.from_numpy(x) if framework == "torch" else x
                wrapped[p["name"]] = x
                kwargs[p["name"]] = x
            else:
                kwargs[p["name"]] = None
            continue
        x = np.load(f"{entry['inputs']}/{p['name']}.npy")
        x = block_of(x, p, offset, shape, rank)
        if framework == "torch":
            x = torch.from_numpy(x)
            if p["numpy_dtype"] == "bfloat16":  # f32 values exact in bf16
                x = x.to(torch.bfloat16)
        wrapped[p["name"]] = x
        args.append(x)

    def address(x):
        return x.data_ptr() if framework == "torch" else x.ctypes.data

    before = {n: address(x) for n, x in wrapped.items()}
    result = step(*args, **kwargs)
    if emulated:
        step.synchronize()  # the step only enqueued its work
    outputs = [p for p in info["params"] if p["kind"] == "output"]
    if len(outputs) == 1:
        result = (result,)
    returned = dict(zip([p["name"] for p in outputs], result or ()))
    failures = []
    for p in info["params"]:
        if p["kind"] == "scalar" or not p["written"]:
            continue
        if p["kind"] == "output":
            x = returned[p["name"]]
            if p["name"] in wrapped and x is not wrapped[p["name"]]:
                failures.append(f"output '{p['name']}': the array passed "
                                f"in was not the one returned")
        else:
            x = wrapped[p["name"]]
            if address(x) != before[p["name"]]:
                failures.append(f"'{p['name']}' moved")
        got = (x.float().numpy() if x.dtype == torch.bfloat16 else x.numpy()) \
            if framework == "torch" else np.asarray(x)
        expected = np.load(f"{entry['expected']}/{p['result']}.npy")
        offset, shape = blocks[p["name"]]
        want = block_of(expected, p, offset, shape, rank)
        if not same(got, want):
            diff = np.argwhere(got != want)
            failures.append(
                f"'{p['name']}' (result {p['result']}) differs from the "
                f"simulator at {len(diff)} of {got.size} elements, first "
                f"{tuple(diff[0]) if len(diff) else '?'}: "
                f"{got[tuple(diff[0])] if len(diff) else ''} vs "
                f"{want[tuple(diff[0])] if len(diff) else ''}")
    return failures


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    with open(sys.argv[1]) as f:
        manifest = json.load(f)
    torch = None
    frameworks = list(manifest["frameworks"])
    if "torch" in frameworks:
        try:
            import torch  # noqa: F401
        except ImportError:
            frameworks.remove("torch")
            if rank == 0:
                print("skipped torch: not installed")
    emulated = manifest.get("target") == "cuda-emu"
    shared = None
    if emulated and manifest["modules"]:
        # A communicator from a unique id handed out by the caller (here
        # with mpi4py; torch.distributed would do as well), made through
        # the first module's library and used by every module.
        first = load(manifest["modules"][0]["dir"],
                     manifest["modules"][0]["name"])
        uid = coconet.nccl_unique_id(first) if rank == 0 else None
        shared = coconet.NcclCommunicator(first, unique_id=comm.bcast(uid),
                                          rank=rank, size=size)
    bad = 0
    for index, entry in enumerate(manifest["modules"]):
        for framework in frameworks:
            world = None
            if emulated:
                # Every other module: the shared one; else one made over
                # MPI_COMM_WORLD for this module alone, destroyed with its
                # steps.
                world = shared if index % 2 == 0 else coconet.NcclCommunicator(
                    entry["dir"] + "/_" + entry["name"] + ".so", comm)
            try:
                failures = check(entry, framework, torch, rank, world,
                                 emulated)
            except Exception as e:  # a refusal, a failed step
                failures = [f"{type(e).__name__}: {e}"]
            world = None
            everyone = comm.gather(failures, root=0)
            if rank == 0 and everyone[0] is None:
                print(f"skipped: {entry['name']} on {size} ranks, {framework} "
                      f"(NumPy has no bfloat16)")
                continue
            if rank == 0:
                what = f"{entry['name']} on {size} ranks, {framework}"
                flat = [f"rank {r}: {f}" for r, fs in enumerate(everyone)
                        for f in fs]
                print(f"{'FAILED' if flat else 'ok'}: {what}")
                for f in flat:
                    print(f"  {f}")
                bad += bool(flat)
    bad = comm.bcast(bad, root=0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
