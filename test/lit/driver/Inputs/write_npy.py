#!/usr/bin/env python3
"""write_npy.py PATH DESCR ROWSxCOLS VALUE...: a .npy file (version 1.0,
C order) of type DESCR ('<f8', '<i8', ...) holding VALUE... (no NumPy
needed)."""
import struct
import sys

path, descr, shape = sys.argv[1], sys.argv[2], sys.argv[3]
dims = tuple(int(d) for d in shape.split("x"))
values = sys.argv[4:]
count = 1
for d in dims:
    count *= d
assert len(values) == count, f"{count} values expected, got {len(values)}"
code = {"<f8": "d", "<f4": "f", "<i8": "q", "<i4": "i"}[descr]
cast = float if code in "df" else int
shape_text = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}"
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<" + code * count, *(cast(v) for v in values)))
