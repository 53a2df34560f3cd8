"""Checks that a diagnostic output is safe to show on a terminal.

usage: terminal_safe.py FILE [--colors] [--max-line-bytes N] [--max-bytes N]

Fails (exit 1, saying why) if FILE is not valid UTF-8, or holds a character
a terminal acts on or cannot show (a control, format, private-use or
unassigned code point) other than the line break, or a line or the whole
is longer than given. With --colors, SGR colour sequences (ESC [ ... m) are
allowed and removed first; any other ESC still fails.
"""
import re
import sys
import unicodedata


def main(argv):
    path = argv[1]
    colors = "--colors" in argv
    limits = {}
    for name in ("--max-line-bytes", "--max-bytes"):
        if name in argv:
            limits[name] = int(argv[argv.index(name) + 1])
    data = open(path, "rb").read()
    if colors:
        data = re.sub(rb"\x1b\[[0-9;]*m", b"", data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"{path}: not UTF-8: {e}")
        return 1
    for i, c in enumerate(text):
        if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Co", "Cn"):
            print(f"{path}: raw U+{ord(c):04X} at character {i}")
            return 1
    longest = max((len(l) for l in data.split(b"\n")), default=0)
    if longest > limits.get("--max-line-bytes", longest):
        print(f"{path}: a line of {longest} bytes")
        return 1
    if len(data) > limits.get("--max-bytes", len(data)):
        print(f"{path}: {len(data)} bytes")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
