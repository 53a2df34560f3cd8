"""Writes .npy files whose headers hold 100,000-character parts.

usage: long_npy.py DIR

DIR/dtype.npy (a 100,000-character dtype), DIR/key.npy (an unexpected
100,000-character key), DIR/shape.npy (a 100,000-entry shape) and
DIR/outputs/w.npy (dtype.npy again, for --check-outputs).
"""
import os
import struct
import sys


def npy(header):
    """A version 2.0 file (4-byte header length) with no data."""
    text = header.encode()
    text += b" " * ((64 - (12 + len(text) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(text)) + text


def main(out):
    os.makedirs(os.path.join(out, "outputs"), exist_ok=True)
    files = {
        "dtype.npy": "{'descr': '<" + "f" * 100000 +
                     "', 'fortran_order': False, 'shape': (8,), }",
        "key.npy": "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), '"
                   + "k" * 100000 + "': 1, }",
        "shape.npy": "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                     "2, " * 100000 + "), }",
    }
    files["outputs/w.npy"] = files["dtype.npy"]
    for name, header in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(npy(header))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
