#!/usr/bin/env python3
"""Smoke fuzz run: feeds mutated samples through coconetc and asserts that it
never crashes, never hangs and never reports an internal compiler error.

    mutate_samples.py --coconetc build/bin/coconetc --count 3000 samples/*.coco

Every mutant must end with exit status 0 (accepted) or 1 (rejected with
diagnostics); a signal, another status, a time-out or the words "internal
compiler error" fail the run, and the offending input is kept for replay.
Deterministic for a given --seed. Accepted mutants are also run through the
simulator on 2 ranks with small sizes.
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

TOKENS = ["(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "+", "-", "*", "/",
          "<", "<=", "==", ".", "0", "1", "-1", "1e400", "99999999999999999999999",
          "0.5", "N", "x", "program", "schedule", "for", "apply", "chunks", "mesh",
          "local", "replicated", "sliced", "sliced(1)", "return", "import", "f16",
          "f32", "bf16", "u64", "bool", "true", "allreduce", "allgather",
          "reducescatter", "matmul", "sum", "norm", "update", "dropout",
          "sendrecv", "max", "select", "layernorm", "split", "fuse", "overlap",
          "@", "\"", "\\", "/*", "//", "\x00", "\u00e9", "\n"]

TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|//[^\n]*|\S")


def mutate(text: str, rng: random.Random) -> str:
    tokens = TOKEN_RE.findall(text)
    if not tokens:
        return text
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(7)
        i = rng.randrange(len(tokens))
        if kind == 0 and len(tokens) > 1:
            del tokens[i]
        elif kind == 1:
            tokens.insert(i, rng.choice(TOKENS))
        elif kind == 2:
            tokens[i] = rng.choice(TOKENS)
        elif kind == 3:
            j = rng.randrange(len(tokens))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == 4:
            j = min(len(tokens), i + rng.randint(1, 12))
            tokens[i:i] = tokens[i:j]
        elif kind == 5:
            tokens = tokens[:max(1, i)]
        else:
            idents = [t for t in tokens if re.match(r"[A-Za-z_]", t)]
            if idents:
                tokens[i] = rng.choice(idents)
    return " ".join(tokens)


def check(cmd, problems, allow_usage_error=False):
    """Runs one command; records a problem unless it ended cleanly."""
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        problems.append("time-out: " + " ".join(cmd))
        return None
    err = r.stderr.decode("utf-8", "replace")
    allowed = (0, 1, 2) if allow_usage_error else (0, 1)
    if r.returncode not in allowed or "internal compiler error" in err:
        problems.append(f"exit {r.returncode}: {' '.join(cmd)}\n{err[-2000:]}")
        return None
    return r


def run_one(coconetc: str, source: str, index: int, keep_dir: str):
    with tempfile.NamedTemporaryFile("w", suffix=".coco", delete=False,
                                     encoding="utf-8", errors="replace") as f:
        f.write(source)
        path = f.name
    problems = []
    try:
        compile_cmd = [coconetc, "--color=never", "--emit=ir", path]
        result = check(compile_cmd, problems)
        if result is not None and result.returncode == 0:
            # Accepted: run the first program briefly on the simulator too.
            check([coconetc, "sim", "--color=never", "--ranks=2",
                   "--default-size=4", path], problems, allow_usage_error=True)
    finally:
        if problems:
            kept = os.path.join(keep_dir, f"crash-{index}.coco")
            os.replace(path, kept)
            problems.append("input kept in " + kept)
        else:
            os.unlink(path)
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coconetc", required=True)
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--keep-dir", default=tempfile.gettempdir())
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()

    sources = [open(p, encoding="utf-8").read() for p in args.inputs]
    rng = random.Random(args.seed)
    mutants = [mutate(rng.choice(sources), rng) for _ in range(args.count)]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = [pool.submit(run_one, args.coconetc, m, i, args.keep_dir)
                   for i, m in enumerate(mutants)]
        for fut in futures:
            problems = fut.result()
            if problems:
                failures += 1
                if failures <= 10:
                    print("\n".join(problems), file=sys.stderr)
    print(f"mutation fuzz: {args.count} mutants, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
