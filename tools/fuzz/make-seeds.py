#!/usr/bin/env python3
"""Writes the starting inputs of the libFuzzer targets into DIR/<target>/.

    tools/fuzz/make-seeds.py DIR

  parse     every .coco file of samples/, stdlib/, test/lit/ and
            test/codegen/cases/ (valid and invalid programs)
  schedule  for every base file of FuzzSchedule.cpp (kBaseFiles, read from
            the source so the indices agree): its byte, then each of its
            schedules renamed (so that it does not clash with the base
            file's own; again with the byte's high bit set: --no-cleanup),
            and a few directives of every kind over its stages
  npy       .npy files of every element type and several shapes (versions
            1.0, 2.0 and 3.0), and a few malformed ones
  segments  tables as text (samples/*.segments, commas, comments, empty
            and one-element segments, sums near 2^63, malformed lengths) and
            as .npy (every integer type, 2-D, float), each with first bytes
            that make a generated table of several counts and lengths
  machine   every machine file of tools/machines/ and test/lit/tune/Inputs/,
            each value at the bounds of its range and past them, and
            names with escapes

tools/fuzz/update-corpus.sh minimises these (libFuzzer -merge=1) into
test/fuzz/corpus/<target>/, the seed corpus the CTests run over.
"""
import pathlib
import re
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def write(path: pathlib.Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def parse_seeds(out: pathlib.Path) -> None:
    files = sorted(ROOT.glob("samples/*.coco")) + sorted(ROOT.glob("stdlib/*/*.coco"))
    files += sorted(ROOT.glob("test/lit/**/*.coco")) + sorted(ROOT.glob("test/codegen/cases/*.coco"))
    for i, f in enumerate(files):
        write(out / f"{i:03d}-{f.stem}.coco", f.read_bytes())


def base_files() -> list:
    src = (ROOT / "tools/fuzz/FuzzSchedule.cpp").read_text()
    block = src[src.index("kBaseFiles[] = {"):]
    block = block[:block.index("};")]
    return re.findall(r'"([^"]+\.coco)"', block)


SCHEDULE_RE = re.compile(r"^schedule\s+(\w+)\s+for\s+(\w+)\s*\{.*?^\}", re.S | re.M)
PROGRAM_RE = re.compile(r"^program\s+(\w+)\s*\((.*?)\)\s*\{(.*?)^\}", re.S | re.M)
STAGE_RE = re.compile(r"^\s*(\w+)\s*=\s*(\w+)?", re.M)


def schedule_seeds(out: pathlib.Path) -> None:
    n = 0
    for index, name in enumerate(base_files()):
        text = (ROOT / name).read_text()
        prefix = bytes([index])
        names = [m.group(1) for m in SCHEDULE_RE.finditer(text)]
        for m in SCHEDULE_RE.finditer(text):
            body = m.group(0)
            for s in names:
                body = re.sub(rf"\b(schedule|apply)\s+{s}\b", rf"\1 {s}_f", body)
            # An `apply` of a base schedule stays valid without renaming.
            write(out / f"{n:03d}", prefix + b"\n" + body.encode() + b"\n")
            n += 1
            # The same with the high bit set: --no-cleanup.
            write(out / f"{n:03d}", bytes([index | 0x80]) + b"\n" + body.encode() + b"\n")
            n += 1
        for p in PROGRAM_RE.finditer(text):
            program, params, body = p.group(1), p.group(2), p.group(3)
            stages = STAGE_RE.findall(body)
            collectives = [s for s, f in stages if f in ("allreduce", "allgather", "reducescatter")]
            allreduces = [s for s, f in stages if f == "allreduce"]
            matmuls = [s for s, f in stages if f == "matmul"]
            kernels = [s for s, f in stages if f not in ("allreduce", "allgather", "reducescatter",
                                                         "matmul", "sum", "norm", "broadcast",
                                                         "reduce", "sendrecv")]
            tensor_params = re.findall(r"(\w+)\s*:\s*\w+\[", params)
            directives = []
            for ar in allreduces:
                directives.append(f"(rs, ag) = split({ar});")
                if kernels:
                    directives.append(f"(rs, ag) = split({ar});\n    reorder(ag, {', '.join(kernels)});")
            if kernels:
                directives.append(f"fuse({', '.join(kernels)});")
            if tensor_params:
                directives.append(f"shard({', '.join(tensor_params[:2])});")
            for mm in matmuls:
                for c in collectives:
                    directives.append(f"overlap({mm}, {c}) chunks 2;")
            for i, d in enumerate(directives):
                src = f"\nschedule fz{i} for {program} {{\n    {d}\n}}\n"
                write(out / f"{n:03d}", prefix + src.encode())
                n += 1


NPY_TYPES = {"<f2": 2, "<f4": 4, "<f8": 8, "<i4": 4, "<i8": 8, "<u8": 8, "|b1": 1}


def npy(descr: str, shape: tuple, version=(1, 0), data=None, header=None) -> bytes:
    if header is None:
        shape_repr = "(" + ", ".join(str(e) for e in shape) + ("," if len(shape) == 1 else "") + ")"
        header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_repr}, }}"
    size = 4 if version[0] >= 2 else 2
    unpadded = 8 + size + len(header) + 1
    header += " " * ((64 - unpadded % 64) % 64) + "\n"
    length = struct.pack("<I" if size == 4 else "<H", len(header))
    if data is None:
        count = 1
        for e in shape:
            count *= e
        data = bytes((i * 37 + 11) % 256 for i in range(count * NPY_TYPES.get(descr, 1)))
    return b"\x93NUMPY" + bytes(version) + length + header.encode() + data


def npy_seeds(out: pathlib.Path) -> None:
    seeds = {}
    for descr in NPY_TYPES:
        for shape in [(), (0,), (3,), (2, 3), (1, 2, 2)]:
            seeds[f"{descr[1:]}-{len(shape)}d-{'x'.join(map(str, shape))}"] = npy(descr, shape)
    seeds["v2"] = npy("<f4", (4,), version=(2, 0))
    seeds["v3"] = npy("<f4", (4,), version=(3, 0))
    seeds["fortran"] = npy("<f4", (2, 2), header="{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}")
    seeds["big-endian"] = npy(">f4", (2,), data=b"\0" * 8)
    seeds["overflow"] = npy("<f4", (), data=b"", header="{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}")
    seeds["list-shape"] = npy("<f4", (), header="{'descr': '<f4', 'fortran_order': False, 'shape': [1, 2], 'x': None}")
    seeds["truncated"] = npy("<f8", (3,))[:-5]
    seeds["escapes"] = npy("<f4", (1,), header="{\"descr\": '\\x3cf4', 'fortran_order': False, 'shape': (1,)}")
    for name, data in seeds.items():
        write(out / f"{name}.npy", data)


def segments_seeds(out: pathlib.Path) -> None:
    seeds = {}
    for f in sorted(ROOT.glob("samples/*.segments")):
        seeds[f.stem] = f.read_bytes()
    seeds["text"] = b"5 0 3\n1\n"
    seeds["commas"] = b"# GPT-2's first layers\n768, 0, 1,\n2304 # qkv\n"
    seeds["empty-first"] = b"0 0 7 0\n"
    seeds["one"] = b"1\n"
    seeds["zero"] = b"0\n"
    seeds["near-max"] = b"9223372036854775806 1\n"
    seeds["past-max"] = b"9223372036854775807 1\n"
    seeds["big"] = b"1152921504606846976\n"
    seeds["negative"] = b"5 -1\n"
    seeds["fraction"] = b"5 2.5\n"
    seeds["control"] = b"5 \x1b[2J 3\n"
    seeds["crlf"] = b"3\r\n4\r\n"
    for descr, fmt in (("<i4", "<i"), ("<i8", "<q"), ("<u8", "<Q")):
        data = b"".join(struct.pack(fmt, v) for v in (3, 0, 1, 4))
        seeds[f"npy-{descr[1:]}"] = npy(descr, (4,), data=data)
    seeds["npy-u8-huge"] = npy("<u8", (2,), data=struct.pack("<QQ", 2**63, 1))
    seeds["npy-2d"] = npy("<i8", (2, 2))
    seeds["npy-float"] = npy("<f4", (3,))
    seeds["npy-empty"] = npy("<i8", (0,))
    for name, data in seeds.items():
        write(out / f"{name}.seg", data)
    # Generated tables: the first 8 bytes are the count (low 8 bits), a
    # shift, the length and the seed (FuzzSegments.cpp).
    for count, shift, length in ((1, 0, 0), (3, 0, 10), (148, 0, 8192),
                                 (200, 5, 1 << 39), (255, 0, 7)):
        word = count | (shift << 16) | ((length & ((1 << 40) - 1)) << 24)
        write(out / f"gen-{count}-{length}.seg",
              struct.pack("<Q", word & (2**64 - 1)) + b" 4\n")
    write(out / "gen-past-max.seg", struct.pack("<Q", 2**63 | 5) + b"\n")


MACHINE_VALUES = [
    ("ranks-per-node", ["1", "65536", "65537", "0"], ""),
    ("threads-per-rank", ["1", "4096", "4097"], ""),
    ("kernel-launch", ["0", "1", "1.5", "1e308", "-1", "nan", "inf"], "s"),
    ("memory-bandwidth", ["1", "1000", "999", "1e15", "1.1e15"], "B/s"),
    ("ordered-sum", ["0", "1", "1.001"], "ms"),
]


def machine_seeds(out: pathlib.Path) -> None:
    files = sorted(ROOT.glob("tools/machines/*.machine")) + \
        sorted(ROOT.glob("test/lit/tune/Inputs/*.machine"))
    for f in files:
        write(out / f"{f.stem}.machine", f.read_bytes())
    base = (ROOT / "test/lit/tune/Inputs/round.machine").read_text()
    for key, values, unit in MACHINE_VALUES:
        for v in values:
            lines = [l for l in base.splitlines() if not l.startswith(key + " ")]
            lines.append(f"{key} {v} {unit}".rstrip())
            write(out / f"round-{key}-{v}.machine", ("\n".join(lines) + "\n").encode())
    extra = {
        "matmul-bounds": "matmul f16 1 MFLOP/s\nmatmul f32 100000 TFLOP/s\nmatmul f64 0.5 MFLOP/s\n",
        "cache-bounds": "cache 1 KB bandwidth 1000 TB/s\n",
        "cache-past": "cache 1025 GiB bandwidth 1 GB/s\n",
        "collective-bounds": "collective alltoall ring network latency 1 s bandwidth 1 KB/s beyond-cache 1000 TB/s\n",
        "collective-typed": "collective allreduce library node bf16 latency 0 s bandwidth 1 GB/s\n",
        "per-element": "random-draw 1 ms\nlibm-call 0 ns\nrounding 999 us\nmatmul-pack 1 us\n",
        "write-allocate": "write-allocate yes\n",
    }
    for name, text in extra.items():
        lines = [l for l in base.splitlines() if not l.startswith(("cache", "write-allocate"))]
        write(out / f"round-{name}.machine", ("\n".join(lines) + "\n" + text).encode())
    write(out / "name-escapes.machine",
          base.replace("machine round", "machine a\x1b]0;x\x07b\xff").encode("latin-1"))
    write(out / "name-long.machine",
          base.replace("machine round", "machine " + "n" * 2000).encode())


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    parse_seeds(out / "parse")
    schedule_seeds(out / "schedule")
    npy_seeds(out / "npy")
    segments_seeds(out / "segments")
    machine_seeds(out / "machine")
    for t in ("parse", "schedule", "npy", "segments", "machine"):
        print(f"{t}: {len(list((out / t).iterdir()))} inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
