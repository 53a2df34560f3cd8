#!/usr/bin/env python3
"""Checks that no switch in compiler/ has a `default:` label, but a switch
over a value that is not one of our enums (listed below, with the reason).

    tools/check-switches.py [--root DIR]

Our enums (StageKind, Collective, DType, Family, ...) are switched over
without `default:`, so that -Wswitch names every switch a new enumerator
must be handled in: a `default:` would instead run the new kind through a
branch written for others (a new collective launched as an elementwise
kernel). A switch over an int (ANTLR's token types and rule indices) has no
enumerators to list, so it keeps its `default:`; each such switch is named
here by its file and the text of its condition, so that a new one is a
decision. Prints each violation as FILE:LINE: ... and exits 1 if there is
any, else prints a summary and exits 0.
"""
import argparse
import pathlib
import re
import sys

# (file under compiler/, the switch's condition): switches over ints.
NOT_OURS = {
    ("parse/TokenScan.cpp", "token.getType()"): "ANTLR token type (size_t)",
    ("parse/AstBuilder.cpp", "tokenType"): "ANTLR token type (size_t)",
    ("parse/Parser.cpp", "rule"): "ANTLR rule index (size_t)",
}


def strip(text):
    """The text with comments, string and character literals blanked (the
    same length, newlines kept) so that braces and labels inside them do
    not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def switches(text):
    """(offset of `switch`, condition text, body start, body end) of every
    switch statement in stripped `text`."""
    for m in re.finditer(r"\bswitch\s*\(", text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        cond = " ".join(text[m.end():j - 1].split())
        k = text.find("{", j)
        if k < 0:
            continue
        depth, e = 1, k + 1
        while e < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[e], 0)
            e += 1
        yield m.start(), cond, k + 1, e - 1


def defaults(text, start, end):
    """Offsets of the `default:` labels of the switch whose body is
    text[start:end] (not those of switches nested in it)."""
    inner = [(s, e) for s0, _, s, e in switches(text[start:end])]
    for m in re.finditer(r"\bdefault\s*:", text[start:end]):
        if not any(s <= m.start() < e for s, e in inner):
            yield start + m.start()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", default=pathlib.Path(__file__).resolve()
                    .parent.parent)
    args = ap.parse_args()
    compiler = pathlib.Path(args.root) / "compiler"
    bad, seen, count = [], set(), 0
    for path in sorted(compiler.rglob("*")):
        if path.suffix not in (".cpp", ".h", ".def", ".inc"):
            continue
        rel = path.relative_to(compiler).as_posix()
        text = strip(path.read_text())
        for at, cond, start, end in switches(text):
            count += 1
            for d in defaults(text, start, end):
                key = (rel, cond)
                if key in NOT_OURS:
                    seen.add(key)
                    continue
                line = text.count("\n", 0, d) + 1
                bad.append(f"compiler/{rel}:{line}: `default:` in a switch "
                           f"over `{cond}`: list the enumerators instead "
                           "(a new one must be a compile error here, "
                           "-Wswitch), or, if it is not one of our enums, "
                           "add it to NOT_OURS in tools/check-switches.py")
    for key in sorted(set(NOT_OURS) - seen):
        bad.append(f"compiler/{key[0]}: tools/check-switches.py lists a "
                   f"switch over `{key[1]}` with a `default:` that is not "
                   "there any more: remove it from NOT_OURS")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"{count} switches in compiler/: no `default:` over our enums "
          f"({len(NOT_OURS)} over ANTLR's ints keep theirs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
