#!/usr/bin/env python3
"""What nvcc makes of the fused collective kernels of the CUDA target: for
every schedule of the samples and standard-library programs that has one,
compiles the generated .cu for sm_90 (-Xptxas -v) and disassembles it
(cuobjdump -sass), and prints one row per fused kernel and instantiation:
registers, stack and spills (ptxas), and the memory instructions of its
SASS by kind: `own` global memory (LDG/STG; .128: 16 bytes at a time;
.CONSTANT: through the read-only cache, which includes NCCL's window table,
the base and stride of each peer pointer), `peers`' symmetric memory,
which ncclGetLsaPointer returns as generic pointers (LD/ST), and the
team's `barrier` (system-scope LD/ST .STRONG.SYS).

    tools/bench/cuda_kernels.py [--coconetc build/bin/coconetc] [FILE.coco...]

Needs nvcc; cuobjdump and nvdisasm come with a full CUDA toolkit, or with
`pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` (the script looks
in that package's bin directory too).
"""
import argparse
import collections
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tool(name):
    found = shutil.which(name)
    if found:
        return found
    try:
        import nvidia  # the pip packages' namespace
        for base in nvidia.__path__:
            for cand in glob.glob(os.path.join(base, "*", "bin", name)):
                return cand
    except ImportError:
        pass
    return None


def run(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"cuda_kernels: {' '.join(cmd)} failed:\n{p.stdout}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coconetc", default=str(ROOT / "build/bin/coconetc"))
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(str(ROOT / "samples/*.coco")) +
                                 glob.glob(str(ROOT / "stdlib/*/*.coco")))
    cuobjdump = tool("cuobjdump")
    nvdisasm = tool("nvdisasm")
    if not shutil.which("nvcc") or not cuobjdump or not nvdisasm:
        sys.exit("cuda_kernels: needs nvcc, cuobjdump and nvdisasm (pip "
                 "install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env["PATH"]
    work = pathlib.Path(tempfile.mkdtemp(prefix="cuda-kernels-"))
    print(run(["nvcc", "--version"]).strip().splitlines()[-1])
    print("%-36s %-8s %5s %6s %7s  %s" % ("program / schedule: kernel",
                                           "form", "regs", "stack",
                                           "spills", "memory instructions"))
    for path in files:
        listing = run([args.coconetc, "--color=never", path])
        for line in listing.splitlines():
            m = re.match(r"schedule (\w+) for (\w+)", line)
            if not m:
                continue
            schedule, program = m.group(1), m.group(2)
            plan = run([args.coconetc, "--color=never", "--emit=plan",
                        "--schedule", schedule, path])
            if "one kernel over the team" not in plan:
                continue
            name = f"{program}_{schedule}"
            out = work / name
            run([args.coconetc, "--emit=code", "--target=cuda", "--schedule",
                 schedule, "-o", str(out), path])
            ptxas = run(["nvcc", "-std=c++17", "-O2", "-arch=sm_90", "-cubin",
                         "-Xptxas", "-v", "-I" + str(ROOT / "runtime/include"),
                         f"{name}.cu", "-o", f"{name}.cubin"], cwd=out)
            sass = run([cuobjdump, "-sass", f"{name}.cubin"], cwd=out,
                       env=env)
            # ptxas: "Compiling entry function 'X'" ... "N bytes stack
            # frame, S bytes spill stores, L bytes spill loads" ... "Used R
            # registers".
            info = {}
            for entry in re.split(r"Compiling entry function ", ptxas)[1:]:
                fn = entry.split("'")[1]
                stack = re.search(r"(\d+) bytes stack frame, (\d+) bytes "
                                  r"spill stores, (\d+) bytes spill loads",
                                  entry)
                regs = re.search(r"Used (\d+) registers", entry)
                info[fn] = (regs.group(1), stack.group(1),
                            stack.group(2) + "/" + stack.group(3))
            for part in re.split(r"\n\s+Function : ", sass)[1:]:
                fn = part.split("\n")[0].strip()
                if "cc_fused" not in fn:
                    continue
                kernel = re.search(r"cc_fused_(\w+?)I?Lb[01]E|cc_fused_(\w+?)"
                                   r"E", fn)
                kname = "fused_" + (kernel.group(1) or kernel.group(2))
                form = ("vector" if "ILb1E" in fn else
                        "element" if "ILb0E" in fn else "-")
                groups = collections.OrderedDict(
                    (k, collections.Counter())
                    for k in ("own", "peers", "barrier"))
                for op in re.findall(r"\b((?:LDG|LD|STG|ST)\.E[.A-Z0-9]*)",
                                     part):
                    if "STRONG.SYS" in op:
                        groups["barrier"][op] += 1
                    elif op.startswith(("LDG", "STG")):
                        groups["own"][op] += 1
                    else:
                        groups["peers"][op] += 1
                text = "; ".join(
                    k + ": " + " ".join(f"{op} x{n}"
                                        for op, n in sorted(c.items()))
                    for k, c in groups.items() if c)
                regs, stack, spills = info.get(fn, ("?", "?", "?"))
                print("%-36s %-8s %5s %6s %7s  %s" % (
                    f"{program} / {schedule}: {kname}"[:36], form, regs,
                    stack, spills, text))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
