"""`python3 -m coconet build`'s refusals (CTest python-build-cli).

    PYTHONPATH=build/python python3 test/python/test_build_cli.py WORK

Each bad command line exits with its status (2: the command line; 1: the
build), says why on one line that is safe for a terminal (what the user
typed escaped as ascii() writes it, cut to 64 characters), and writes
nothing: no -o directory is made. Prints ok/FAILED per case; exits 1 on a
failure.
"""
import os
import shutil
import subprocess
import sys
import unicodedata

work = os.path.abspath(sys.argv[1])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sample = os.path.join(root, "samples", "sgd.coco")
os.makedirs(os.path.join(work, "a-dir.coco"))
fifo = os.path.join(work, "fifo.coco")
os.mkfifo(fifo)
bad = os.path.join(work, "bad.coco")
with open(bad, "w") as f:
    f.write("program p(x: f32[N]) {\n    y = gard + 1;\n    return y;\n}\n")

out = os.path.join(work, "out")
CASES = [
    # (arguments, exit status, what the message says)
    (["--bo\x1b]0;pwned\x07gus", sample], 2,
     "unknown option '--bo\\x1b]0;pwned\\x07gus'"),
    (["--" + "x" * 5000, sample], 2, "unknown option '--xxxx"),
    (["--target", "gpu\x1b[2J", sample], 2,
     "--target is cpu or cuda, not 'gpu\\x1b[2J'"),
    (["--cuda-arch", "90 -o /tmp/x", "--target", "cuda", sample], 2,
     "--cuda-arch is a compute capability as sm_N spells it (90, 100a), not "
     "'90 -o /tmp/x'"),
    (["--cuda-arch", "", sample], 2, "--cuda-arch is a compute capability"),
    ([sample, sample], 2, "expected one FILE.coco, got 2"),
    ([os.path.join(work, "missing\u202e.coco")], 1,
     "no such file: '" + work.encode("ascii", "backslashreplace").decode()),
    ([os.path.join(work, "a-dir.coco")], 1, "is not a regular file"),
    ([fifo], 1, "is not a regular file"),
    ([bad], 1, "coconetc failed (exit status 1)"),
    # --schedule auto needs the sizes (and a machine): coconetc says which.
    (["--schedule", "auto", sample], 1,
     "--schedule=auto needs every size of 'sgd' bound; not bound: P, N"),
    (["--schedule", "auto", "--size", "N=1024", "--ranks", "2", sample], 1,
     "no machine: give --machine FILE"),
    (["--ranks", "two\x1b[2J", "--size", "N=8", sample], 1,
     "coconetc failed (exit status 2)"),
]


def safe(text):
    for line in text.splitlines():
        if len(line) > 600:
            return "a line of %d characters" % len(line)
        for c in line:
            if unicodedata.category(c) in ("Cc", "Cf", "Co", "Cn"):
                return "a raw U+%04X" % ord(c)
    return None


failures = 0
# The precompiled module prelude goes into the cache (below).
cache_dir = os.path.join(work, "cache")
env = dict(os.environ, COCONET_CACHE_DIR=cache_dir)
for extra, status, says in CASES:
    argv = [sys.executable, "-m", "coconet", "build", "-o", out] + extra
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=120)
    err = p.stderr.decode("utf-8", "replace")
    problems = []
    if p.returncode != status:
        problems.append("exit status %d, expected %d" % (p.returncode, status))
    if says not in err:
        problems.append("does not say %r" % says)
    if not err.startswith("coconet build: "):
        problems.append("the message does not start with 'coconet build: '")
    why = safe(err)
    if why:
        problems.append(why)
    if os.path.exists(out):
        problems.append("it made %s" % out)
        shutil.rmtree(out)
    name = ascii(" ".join(extra))[1:-1][:100]
    if problems:
        failures += 1
        print("FAILED: %s: %s\n  %s" % (name, "; ".join(problems),
                                        ascii(err)[:400]))
    else:
        print("ok: %s: exit %d" % (name, status))
print("%d of %d cases behave" % (len(CASES) - failures, len(CASES)))

# And one that builds: the tuner's fastest schedule of SGD for 2 ranks on
# this machine's file, a module named sgd_auto.
argv = [sys.executable, "-m", "coconet", "build", "-o", out, "--schedule",
        "auto", "--machine", "cpu-2x1", "--size", "N=1024", "--ranks", "2",
        sample]
p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   env=env, timeout=600)
text = p.stdout.decode() + p.stderr.decode()
if (p.returncode != 0 or "built " not in text or
        not os.path.exists(os.path.join(out, "sgd_auto.py")) or
        not any(n.startswith("_sgd_auto") for n in os.listdir(out))):
    failures += 1
    print("FAILED: --schedule auto --machine cpu-2x1: exit %d\n%s"
          % (p.returncode, text[-2000:]))
else:
    print("ok: --schedule auto --machine cpu-2x1 --size N=1024 --ranks 2: "
          "built sgd_auto")


# The module prelude, precompiled into the cache by that build, is one file
# that GCC takes (-H marks a precompiled header it uses with "!", one it
# refuses with "x"): made with the module compile's own flags.
def gch_files():
    found = []
    for d, _, files in os.walk(os.path.join(cache_dir, "pch")):
        found += [os.path.join(d, f) for f in files]
    return found


sys.path.insert(0, os.environ.get("PYTHONPATH", ""))
from coconet import build as cb  # noqa: E402

gchs = gch_files()
if len(gchs) != 1 or not gchs[0].endswith("coconet/cpu/module_prelude.h.gch"):
    failures += 1
    print("FAILED: the cache's pch/ holds %s, not one module_prelude.h.gch"
          % gchs)
else:
    cmd = (cb._compile_cpu(out, "sgd_auto", cache_dir) +
           ["-H", "-Winvalid-pch", "-o", os.path.join(work, "h.so")])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = p.stderr.decode("utf-8", "replace")
    used = [l for l in err.splitlines() if l.endswith("module_prelude.h.gch")]
    if p.returncode != 0 or used != ["! " + gchs[0]]:
        failures += 1
        print("FAILED: the module compile does not take the precompiled "
              "prelude (exit %d): %s\n%s" % (p.returncode, used, err[-1500:]))
    else:
        print("ok: the module compile takes %s" % os.path.relpath(gchs[0], work))
    # A precompiled header GCC cannot use (here: not one) is read past:
    # the prelude's text is included and the module builds.
    with open(gchs[0], "wb") as f:
        f.write(b"gpch.013" + b"x" * 64)
    argv = [sys.executable, "-m", "coconet", "build", "-o", out,
            "--program", "sgd", sample]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=600)
    if p.returncode != 0 or not os.path.exists(os.path.join(out, "sgd.py")):
        failures += 1
        print("FAILED: with an unusable precompiled prelude: exit %d\n%s"
              % (p.returncode, (p.stdout + p.stderr).decode()[-2000:]))
    else:
        print("ok: an unusable precompiled prelude is read past")
sys.exit(1 if failures else 0)
