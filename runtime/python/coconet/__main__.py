"""python3 -m coconet build FILE.coco ...: see coconet.build."""

import sys

from .build import main as _build_main

USAGE = """\
usage: python3 -m coconet build FILE.coco [options]   (--help for the options)

Compiles a coconet program into a Python module (coconetc --emit=python and
the C++ compiler).
"""


def main(argv):
    if argv and argv[0] == "build":
        return _build_main(argv[1:])
    if argv and argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    print(USAGE, end="", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
