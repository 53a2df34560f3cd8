#!/usr/bin/env python3
"""Scales a segment table to another total, keeping every segment's share.

    tools/scale-segments.py TABLE --total N [--out FILE] [--decay FILE.npy]

TABLE is a text table as `coconetc sim --segments` and the generated
drivers read it: one length per entry (white space or commas), `#` starting
a comment; a comment after a length names the tensor (e.g. samples/
gpt2_small.segments). Each length L becomes floor(L * N / total) and the
N - (sum of those) elements left are given, one each, to the segments with
the largest remainders (ties: the earlier segment), so the lengths sum to
exactly N; a segment may become empty when N is small.

--decay writes a .npy of one f32 per segment for a weight-decay mask: 0 for
tensors whose name contains "bias" or "ln_" (biases and layer norms), 1
otherwise (a length without a name gets 1).
"""
import argparse
import struct
import sys


def read_table(path):
    lengths, names = [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text, _, comment = line.partition("#")
            for word in text.replace(",", " ").split():
                if not word.isdigit():
                    sys.exit(f"{path}:{number}: '{word}' is not a length")
                lengths.append(int(word))
                names.append(comment.strip())
    if not lengths:
        sys.exit(f"{path}: no lengths")
    return lengths, names


def scale(lengths, total):
    whole = sum(lengths)
    if whole == 0:
        sys.exit("the table has no elements to scale")
    scaled = [length * total // whole for length in lengths]
    left = total - sum(scaled)
    order = sorted(range(len(lengths)),
                   key=lambda i: (-(lengths[i] * total % whole), i))
    for i in order[:left]:
        scaled[i] += 1
    return scaled


def write_npy_f32(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    parser.add_argument("--total", type=int, required=True)
    parser.add_argument("--out", help="the scaled table (default: stdout)")
    parser.add_argument("--decay", help="a .npy of the weight-decay mask")
    args = parser.parse_args()
    if args.total < 0:
        sys.exit("--total must be 0 or more")
    lengths, names = read_table(args.table)
    scaled = scale(lengths, args.total)
    text = "".join(f"{n}  # {name}\n" if name else f"{n}\n"
                   for n, name in zip(scaled, names))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.decay:
        write_npy_f32(args.decay, [0.0 if ("bias" in n or "ln_" in n) else 1.0
                                   for n in names])


if __name__ == "__main__":
    main()
