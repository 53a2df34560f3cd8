#!/usr/bin/env python3
"""Checks that docs/language.md's table of diagnostics is the table of
compiler/diag/DiagnosticKinds.def: one row per kind, in its order, with
its message (CTest diag-docs).

    tools/check-diag-docs.py [--root DIR] [--write]

Exits 1 and names the first kinds missing, extra or different when they
differ; --write rewrites the table (the rows after the header line of the
"## Diagnostics" section, up to the next section) from the .def file.
"""
import argparse
import pathlib
import re
import sys

DIAG = re.compile(r'^DIAG\((\w+), (Error|Warning|Note), "(.*)"\)$', re.M)
HEADER = "| kind | message |\n|---|---|\n"


def kebab(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def rows(def_text):
    out = []
    for name, severity, message in DIAG.findall(def_text):
        kind = f"`{kebab(name)}`"
        if severity != "Error":
            kind += f" ({severity.lower()})"
        message = message.replace('\\"', '"').replace("|", "\\|")
        out.append(f"| {kind} | {message} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", default=str(
        pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    want = rows((root / "compiler/diag/DiagnosticKinds.def").read_text())
    doc_path = root / "docs/language.md"
    doc = doc_path.read_text()
    section = doc.find("\n## Diagnostics\n")
    start = doc.find(HEADER, section)
    if section < 0 or start < 0:
        print(f"{doc_path}: no '## Diagnostics' section with a table")
        return 1
    start += len(HEADER)
    end = doc.find("\n## ", start)
    end = len(doc) if end < 0 else end + 1
    table = doc[start:end].rstrip("\n").split("\n")
    have = [line for line in table if line.startswith("|")]
    if args.write:
        doc_path.write_text(doc[:start] + "\n".join(want) + "\n" +
                            ("\n" + doc[end:] if end < len(doc) else ""))
        print(f"{doc_path}: {len(want)} diagnostics written")
        return 0
    if have == want:
        print(f"docs/language.md lists the {len(want)} diagnostics of "
              "DiagnosticKinds.def")
        return 0
    missing = [r for r in want if r not in have]
    extra = [r for r in have if r not in want]
    for r in missing[:10]:
        print("missing or different in docs/language.md: " + r)
    for r in extra[:10]:
        print("not in DiagnosticKinds.def (or different): " + r)
    if not missing and not extra:
        print("docs/language.md lists the diagnostics in another order")
    print("tools/check-diag-docs.py --write rewrites the table")
    return 1


if __name__ == "__main__":
    sys.exit(main())
