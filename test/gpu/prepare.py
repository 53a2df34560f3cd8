#!/usr/bin/env python3
"""Prepares the GPU check (test/gpu/README.md): the work that needs the
compiler, done where the compiler is built, so that a machine with a GPU
only has to build and run (test/gpu/run.sh).

    prepare.py --coconetc BIN --out OUT_DIR [--seed N] [--root REPO]

For every sample (samples/*.coco), standard-library file (stdlib/*/*.coco)
and code generation case (test/codegen/cases/*.coco, paths/*.coco), every
program unscheduled and under every schedule (a
"case", named like the generated program: PROGRAM or PROGRAM_SCHEDULE):

  OUT_DIR/<case>/               the CUDA driver: NAME.h, NAME.cu, NAME_main.cu
  OUT_DIR/<case>/expected/<v>/  the simulator's results for variant <v>
  OUT_DIR/manifest.tsv          what to run and how to judge it (below)
  OUT_DIR/runtime/              a copy of runtime/include and runtime/src
  OUT_DIR/gpu/                  a copy of test/gpu's scripts and sources

Every case runs on ONE rank (mesh axes of size 1) in up to three variants:
  random   the simulator's generated inputs (seed --seed); free sizes large
           enough for many blocks, the vector loads and a scalar tail
  tiny     the same with the free sizes near 3, so that the one-element-
           at-a-time instantiation of the flat kernels runs (n < width)
  typical  realistic hyperparameters (--set) for the programs listed in
           TYPICAL, where random ones produce NaN (e.g. Adam's v < 0)

Tolerances are per result, in the units of `coconetc sim --check-ulps`
(compiler/verify/Differential.h): |a - b| <= ulps * eps(dtype) *
max(|a|, |b|, scale), scale = the largest finite |expected| of the result.
They are derived from the stages each result depends on (TOLERANCE below);
a result that depends on none of them must be bitwise equal.

manifest.tsv, tab-separated, '#' starts a comment line:
  meta   KEY  VALUE
  case   CASE  NAME  TOLSPEC  FILE  PROGRAM  SCHEDULE(- for none)
  why    CASE  RESULT  DTYPE  ULPS  REASON
  run    CASE  VARIANT  ARGS (the driver's and the simulator's options)
TOLSPEC is RESULT=ULPS[,RESULT=ULPS...] ('-' when the case has no float
result with a tolerance); results not listed are compared bitwise.
"""
import argparse
import concurrent.futures
import fractions
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import time

# The samples' cases and selectors, as the CPU check finds them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "codegen"))
from run_codegen import cases, selector  # noqa: E402

# --- How each kind of stage can make the GPU differ from the simulator ------
#
# Contributions are in units of eps of the stage's own element type; a
# result's tolerance is the sum over the stages it depends on, converted to
# the units of its own type (ulps * eps(stage) / eps(result)), rounded up.
# Everything else (+ - * / sqrt and casts through the _rn intrinsics,
# select, max/min, dropout's Philox mask, data movement, and collectives on
# one rank) is bitwise, so a result depending on nothing below gets 0.
TOLERANCE = {
    # CUDA's expf/logf/tanhf/erff (and the double versions) are within a
    # couple of ulp of glibc's, which the simulator calls; after rounding to
    # f16/bf16 that is at most one flip of the last bit.
    "transcendental": {"f16": 2, "bf16": 2, "f32": 16, "f64": 16},
    # powf differs by a few ulp too (CUDA documents 4 for powf, 2 for pow),
    # and the samples use it as Adam's bias correction 1 - beta^t, which
    # cancels: the relative error grows by 1 / (1 - beta^t), 20 to 100
    # times. Measured against the scale floor that is much less: the CPU
    # target with every pow moved 4 ulp gave at most 4.85 ulp in Adam's and
    # LAMB's w (random and typical inputs); 32 per pow leaves a margin.
    "pow": {"f16": 4, "bf16": 4, "f32": 32, "f64": 32},
    # sum / norm / sum of squares: the runtime's Reducer, in the order of a
    # reduction (coconet/reduce_order.h), the simulator's bits (until
    # 2026-11-29 a tree in one block against the simulator's loop: 1, 1,
    # 2 and 64 ulp).
    "reduction": {"f16": 0, "bf16": 0, "f32": 0, "f64": 0},
    # layernorm / rmsnorm: a row through a tree of one block's threads, in
    # f64 (the simulator's loop is in element order), and a square root.
    "norm": {"f16": 2, "bf16": 2, "f32": 4, "f64": 64},
    # cuBLAS accumulates f16/bf16 in f32 (the simulator in f64, rounding
    # once): a last-bit flip of the output now and then; f32 accumulates in
    # f32 (no TF32) and f64 in another order, errors growing with K. (The
    # CPU target with f32 accumulation in matmul and erf moved 2 ulp gave
    # at most 0.34 ulp in megatron_mlp's out against the 6 this allows.)
    "matmul": {"f16": 2, "bf16": 2, "f32": 32, "f64": 32},
}
TRANSCENDENTAL = ("exp", "log", "tanh", "erf", "gelu", "silu")
EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23,
       "f64": 2.0 ** -52}
FLOATS = set(EPS)

# Realistic hyperparameters for programs whose random inputs give NaN or
# inf in most results (the same --set options go to the driver and the
# simulator).
TYPICAL = {
    "adam": ["lr=0.001", "beta1=0.9", "beta2=0.999", "eps=1e-8", "step=10",
             "v=0.001"],
    "lamb": ["lr=0.001", "beta1=0.9", "beta2=0.999", "eps=1e-6", "wd=0.01",
             "step=10", "v=0.001"],
}

# Free sizes: one free size name gets RANDOM_1D, several get RANDOM_ND
# each (then made to satisfy the plan's divisibility checks); the tiny
# variant starts from TINY. Prime-ish values leave tails after the vector
# loads (16 bytes: 2 to 16 elements).
RANDOM_1D = 10007
RANDOM_ND = 67
TINY = 3

RESERVED = {"runtime", "gpu", "build", "manifest.tsv"}


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode == 0, p.stdout


def must(cmd, what):
    ok, out = run(cmd)
    if not ok:
        raise RuntimeError(f"{what} failed:\n$ {' '.join(cmd)}\n{out}")
    return out


def plan_info(coconetc, path, program, schedule):
    """(axis size names, free size names, [(dividend, divisor)]); a
    `check: E at least 8` (a topk's k) is ("E", "at least 8")."""
    out = must([coconetc, "--color=never", "--emit=plan", path] +
               selector(program, schedule), "--emit=plan")
    axes, sizes, checks = [], [], []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("mesh "):
            axes = [a.split(":")[1] for a in line.split()[1:]]
        elif line.startswith("sizes "):
            sizes = line.split()[1:]
        else:
            m = re.match(r"check: (.+) divisible by (.+?) \(", line)
            if m:
                checks.append((m.group(1), m.group(2)))
            m = re.match(r"check: (.+) at least (\d+) \(", line)
            if m:
                checks.append((m.group(1), "at least " + m.group(2)))
    free = [s for s in sizes if s not in axes]
    return axes, free, checks


def evaluate(expr, values):
    """An extent expression (names, integers, + - * / parentheses)."""
    if not re.fullmatch(r"[\w\s+\-*/()]+", expr):
        raise RuntimeError(f"cannot evaluate the extent '{expr}'")
    text = re.sub(r"\b([A-Za-z_]\w*)\b",
                  lambda m: f"F({values[m.group(1)]})", expr)
    text = re.sub(r"\b(\d+)\b", r"F(\1)", text)
    return eval(text, {"F": fractions.Fraction})  # noqa: S307 (checked above)


def choose_sizes(axes, free, checks, base):
    """Axis sizes 1; free sizes from `base`, raised until every check holds."""
    values = {a: 1 for a in axes}
    for s in free:
        values[s] = base
    for _ in range(10000):
        bad = None
        for dividend, divisor in checks:
            if divisor.startswith("at least "):
                if evaluate(dividend, values) < int(divisor.split()[-1]):
                    bad = dividend
                    break
                continue
            q = evaluate(dividend, values) / evaluate(divisor, values)
            if q.denominator != 1:
                bad = dividend
                break
        if bad is None:
            return values
        names = [n for n in re.findall(r"[A-Za-z_]\w*", bad) if n in free]
        if not names:
            raise RuntimeError(f"cannot satisfy 'divisible' for '{bad}'")
        for n in names:
            values[n] += 1
    raise RuntimeError("no sizes satisfy the plan's checks")


class Stage:
    def __init__(self, index, name, dtype, rhs):
        self.index, self.name, self.dtype, self.rhs = index, name, dtype, rhs
        self.deps = [int(d) for d in re.findall(r"%(\d+)", rhs)]


def parse_ir(text):
    """Stages by index and the results [(stage index, result name)]."""
    stages, results = {}, []
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"%(\d+) (\S+) : (\w+)\S*.*? = (.*)$", line)
        if m:
            i = int(m.group(1))
            stages[i] = Stage(i, m.group(2), m.group(3), m.group(4))
            continue
        if line.startswith("results "):
            for item in line[len("results "):].split(","):
                m = re.match(r"\s*%(\d+)(?:\s+(?:->|as)\s+(\S+))?\s*$", item)
                if not m:
                    raise RuntimeError(f"cannot read the results line '{line}'")
                results.append((int(m.group(1)), m.group(2)))
    return stages, [(i, name or stages[i].name) for i, name in results]


def features(stage):
    """[(kind, detail)] of one stage (TOLERANCE's keys)."""
    rhs, out = stage.rhs, []
    if stage.dtype not in FLOATS:
        return out
    if rhs.startswith("elementwise "):
        if re.search(r"\bpow\(", rhs):
            out.append(("pow", "pow"))
        found = [f for f in TRANSCENDENTAL if re.search(r"\b%s\(" % f, rhs)]
        if found:
            out.append(("transcendental", "/".join(found)))
    elif re.match(r"reduction (sum|norm|sumsq)\b", rhs):
        out.append(("reduction", rhs.split("(")[0].split()[1]))
    elif rhs.startswith(("layernorm", "rmsnorm")):
        out.append(("norm", rhs.split("(")[0]))
    elif rhs.startswith("matmul"):
        out.append(("matmul", "matmul"))
    return out


def tolerances(stages, results):
    """{result: (dtype, ulps, reason)}."""
    out = {}
    for index, name in results:
        dtype = stages[index].dtype
        if dtype not in FLOATS:
            out[name] = (dtype, 0, "integer or bool: exact")
            continue
        seen, work, total, reasons = set(), [index], 0.0, []
        while work:
            i = work.pop()
            if i in seen or i not in stages:
                continue
            seen.add(i)
            s = stages[i]
            work.extend(s.deps)
            for kind, detail in features(s):
                units = TOLERANCE[kind][s.dtype]
                total += units * EPS[s.dtype] / EPS[dtype]
                reasons.append((i, f"{detail} in '{s.name}' ({s.dtype}, "
                                   f"{units} ulp)"))
        # The comparator's self-test negates an element and expects it to
        # fail the tolerance (2 / eps ulp away): a tolerance must stay
        # below 1 / eps (128 for bf16).
        if total >= min(1000, 1 / EPS[dtype]):
            raise RuntimeError(f"the tolerance of '{name}' ({total:.0f} ulp "
                               f"of {dtype}) is not below 1 / eps")
        if not reasons:
            out[name] = (dtype, 0, "bitwise: no matmul, sum/norm reduction, "
                                   "layernorm or transcendental on its path")
        else:
            ulps = int(math.ceil(total - 1e-9))
            text = "; ".join(r for _, r in sorted(reasons))
            out[name] = (dtype, ulps, text)
    return out


def copy_tree(src, dst):
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "results"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    coconetc = os.path.abspath(args.coconetc)
    out_dir = os.path.abspath(args.out)
    if not os.access(coconetc, os.X_OK):
        print(f"prepare: no coconetc at {coconetc} (build it first)",
              file=sys.stderr)
        return 2

    files = sorted(glob.glob(os.path.join(root, "samples", "*.coco")))
    files += sorted(glob.glob(os.path.join(root, "stdlib", "*", "*.coco")))
    # The code generators' regression and coverage cases (test/codegen/
    # cases/ and paths/): what the samples do not exercise, e.g. a fused
    # collective's reduced value returned (paths/fused-escapes.coco).
    for sub in ("cases", "paths"):
        files += sorted(glob.glob(os.path.join(root, "test", "codegen", sub,
                                               "*.coco")))
    if not files:
        print(f"prepare: no .coco files under {root}", file=sys.stderr)
        return 2

    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    start = time.time()
    lines = []
    ok, commit = run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"])
    if ok:
        _, status = run(["git", "-C", root, "status", "--porcelain",
                         "--untracked-files=no"])
        commit = commit.strip() + ("-dirty" if status.strip() else "")
    else:
        commit = "unknown"
    _, version = run([coconetc, "--version"])
    version = " ".join(version.split())
    lines += [
        "# coconetc GPU check: what test/gpu/run.sh builds, runs and compares.",
        "# Written by test/gpu/prepare.py; see test/gpu/README.md.",
        f"meta\tcreated\t{time.strftime('%Y-%m-%d %H:%M:%S %z')}",
        f"meta\tcommit\t{commit}",
        f"meta\tcoconetc\t{version}",
        f"meta\tseed\t{args.seed}",
        "meta\tunits\tulps as coconetc sim --check-ulps: |a-b| <= ulps * "
        "eps(dtype) * max(|a|, |b|, max|expected|)",
    ]
    # The cases, named and checked in order; each prepared by a worker (a
    # few coconetc commands and a simulator run per variant, independent of
    # the others), their manifest lines kept in this order.
    todo = []
    for path in files:
        rel = os.path.relpath(path, root)
        for program, schedule in cases(coconetc, path):
            case = program + ("_" + schedule if schedule else "")
            if case in RESERVED:
                raise RuntimeError(f"a case is named '{case}', a reserved name")
            if any(case == c for c, *_ in todo):
                raise RuntimeError(f"two cases are named '{case}' ({rel} "
                                   "and an earlier file): rename one")
            todo.append((case, path, rel, program, schedule))

    def prepare_case(case, path, rel, program, schedule):
        """(manifest lines, runs, the line to print) of one case."""
        out = []
        case_dir = os.path.join(out_dir, case)
        sel = selector(program, schedule)
        must([coconetc, "--color=never", "--emit=driver", "--target=cuda",
              "-o", case_dir, path] + sel, f"{case}: --emit=driver")
        mains = glob.glob(os.path.join(case_dir, "*_main.cu"))
        if len(mains) != 1:
            raise RuntimeError(f"{case}: expected one *_main.cu")
        name = os.path.basename(mains[0])[:-len("_main.cu")]

        axes, free, checks = plan_info(coconetc, path, program, schedule)
        ir = must([coconetc, "--color=never", "--emit=ir", path] + sel,
                  f"{case}: --emit=ir")
        stages, results = parse_ir(ir)
        tols = tolerances(stages, results)
        spec = ",".join(f"{r}={u}" for r, (_, u, _) in tols.items() if u)
        out.append("\t".join(["case", case, name, spec or "-", rel,
                               program, schedule or "-"]))
        for r, (dtype, ulps, why) in tols.items():
            out.append("\t".join(["why", case, r, dtype, str(ulps), why]))

        variants = [("random", RANDOM_1D if len(free) == 1 else RANDOM_ND,
                     []),
                    ("tiny", TINY, [])]
        if program in TYPICAL:
            variants.append(("typical",
                             RANDOM_1D if len(free) == 1 else RANDOM_ND,
                             TYPICAL[program]))
        runs = 0
        for variant, base, sets in variants:
            sizes = choose_sizes(axes, free, checks, base)
            size_arg = ",".join(f"{k}={v}" for k, v in sizes.items())
            opts = ["--size", size_arg, "--seed", str(args.seed)]
            for s in sets:
                opts += ["--set", s]
            expected = os.path.join(case_dir, "expected", variant)
            must([coconetc, "--color=never", "sim", path] + sel + opts +
                 ["--output-dir", expected], f"{case} {variant}: sim")
            written = sorted(f[:-4] for f in os.listdir(expected)
                             if f.endswith(".npy"))
            if written != sorted(tols):
                raise RuntimeError(
                    f"{case}: the simulator wrote {written}, the IR "
                    f"names the results {sorted(tols)}")
            out.append("\t".join(["run", case, variant, " ".join(opts)]))
            runs += 1
        said = (f"prepared {case} ({rel}): " +
                ", ".join(f"{r} {d} {u} ulp" for r, (d, u, _) in
                          tols.items()))
        return out, runs, said

    n_cases = n_runs = 0
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=os.cpu_count() or 2) as pool:
        for out, runs, said in pool.map(lambda c: prepare_case(*c), todo):
            lines += out
            n_runs += runs
            n_cases += 1
            print(said, flush=True)

    with open(os.path.join(out_dir, "manifest.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    # What the GPU side builds, so that OUT_DIR is complete on its own.
    os.makedirs(os.path.join(out_dir, "runtime"))
    copy_tree(os.path.join(root, "runtime", "include"),
              os.path.join(out_dir, "runtime", "include"))
    copy_tree(os.path.join(root, "runtime", "src"),
              os.path.join(out_dir, "runtime", "src"))
    copy_tree(here, os.path.join(out_dir, "gpu"))
    total = 0
    for d, _, fs in os.walk(out_dir):
        total += sum(os.path.getsize(os.path.join(d, f)) for f in fs)
    print(f"\n{n_cases} cases, {n_runs} runs in {out_dir} "
          f"({total / 2**20:.1f} MiB, {time.time() - start:.1f} s)")
    if total > 48 * 2**20:
        print("prepare: OUT_DIR is over 48 MiB: too large to carry",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"prepare: {e}", file=sys.stderr)
        sys.exit(1)
