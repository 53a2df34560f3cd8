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


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    parse_seeds(out / "parse")
    schedule_seeds(out / "schedule")
    npy_seeds(out / "npy")
    for t in ("parse", "schedule", "npy"):
        print(f"{t}: {len(list((out / t).iterdir()))} inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
