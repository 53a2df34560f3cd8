#!/usr/bin/env python3
"""The features of a lowered plan (`coconetc --emit=plan`): every decision
the plan records that a code generator reads, as a name.

The plan coverage check (test/codegen/plan_coverage.py, CTest
plan-coverage) requires every feature of VOCABULARY to appear in a plan
whose generated code was run and checked against the simulator, on each
target (cpu, cuda-emu) and, for the features of fused collectives and
overlaps, on each path (team, staging, fallback, sequential).

    plan_features.py FILE.plan...     the features of each printed plan
    plan_features.py --list           the vocabulary

`parse` reads every line of a plan: a line it does not know is an error,
so a plan printer that learns a new kind of line fails the check until a
feature describes it. PRINTER_WORDS ties the vocabulary to the printer's
source (compiler/lower/PlanPrinter.cpp): every string literal there must be
claimed by a feature or by STRUCTURE.
"""
import re
import sys

# --- The vocabulary ------------------------------------------------------------
#
# (name, kind, what). kind "path": a decision of a fused collective or an
# overlap, or of a buffer of a program that has one; it must be covered on
# every path. kind "target": covered on each target by any run.

COLLECTIVES = ["allreduce", "reducescatter", "allgather", "broadcast",
               "reduce", "sendrecv", "alltoallv", "alltoall"]
REDUCTIONS = ["sum", "max", "min", "norm", "sumsq"]
INDEX_OPS = ["topk", "topk-indices", "cumsum", "gather", "scatter"]

VOCABULARY = [
    # Fused collectives (lower/Fusion.cpp, codegen/FusedCode.cpp).
    ("fused:one-kernel", "path",
     "a fused collective that one kernel computes where the team exists"),
    ("fused:rs+kernel+ag", "path",
     "reducescatter, elementwise kernel and allgather in one kernel"),
    ("fused:rs+kernel", "path", "reducescatter and kernel, no allgather"),
    ("fused:ar+kernel", "path", "allreduce and kernel"),
    ("fused:kernel+ag", "path", "kernel and allgather, no reducing collective"),
    ("fused:rs+ag", "path",
     "reducescatter and allgather, no kernel: the reduced value gathered"),
    ("fused:alone", "path",
     "one collective alone (a kernel of one member passes it through)"),
    ("fused:stores-reduced", "path",
     "the reduced value is also stored (returned, read outside, or in an "
     "overlap)"),
    ("fused:stores-gathered", "path",
     "the gathered block is also stored in its own buffer"),
    ("fused:gathered-view", "path",
     "the allgather's input is a view of its output (the member's own "
     "block is left out of the copies)"),
    ("fused:narrow-reduced", "path", "the reduced value is f16 or bf16"),
    ("fused:indexed-kernel", "path",
     "the fused kernel reads some operand at computed indices (row tiles)"),
    ("fused:scalar-input", "path", "the fused kernel reads a scalar"),
    ("fused:pass-through", "path",
     "a fused collective without a kernel: one of its own passes the "
     "reduced or gathered block through"),
    ("fused:gathers-reduced", "path",
     "the kernel gathers the reduced value itself into every member"),
    ("fused:in-overlap", "path",
     "a fused collective runs in an overlap's parts (a ranged kernel)"),
    ("fused:axis-of-mesh", "path",
     "a fused collective over one axis of a mesh of several"),
    # Buffers of a program with a fused collective or an overlap.
    ("symmetric:param", "path", "a parameter in the team's symmetric memory"),
    ("symmetric:param-written", "path",
     "an updated parameter in symmetric memory (copied back when staged)"),
    ("symmetric:output", "path", "an output in symmetric memory"),
    ("symmetric:scratch", "path", "scratch in symmetric memory"),
    ("buffer:view", "path", "a view: a rank's block of another buffer"),
    ("buffer:lone-alias", "path",
     "scratch that is its collective's input when the axis has one member"),
    ("buffer:param-written", "path", "an updated parameter"),
    ("buffer:param-sharded", "path", "a sharded parameter"),
    ("buffer:scalar-param", "path", "a scalar parameter"),
    ("buffer:output", "path", "a returned value"),
    ("buffer:scratch", "path", "scratch"),
    # Overlaps (lower/Chunks.cpp, codegen/OverlapCode.cpp).
    ("overlap:parts", "path", "an overlap in several parts"),
    ("overlap:one-chunk", "path", "an overlap in one part"),
    ("overlap:allreduce", "path", "parts of an allreduce"),
    ("overlap:reducescatter", "path", "parts of a reducescatter"),
    ("overlap:allgather", "path", "parts of an allgather"),
    ("overlap:fused", "path", "parts of a fused collective"),
    ("overlap:then-step", "path",
     "an allgather after the last part (a fused collective's)"),
    ("overlap:chunk-major", "path", "the matmul writes its result chunk-major"),
    ("overlap:alltoall", "path",
     "parts of an alltoall: batches of the matmul, each written in the "
     "alltoall's order"),
    ("overlap:pack-in-parts", "path",
     "the matmul's parts write the alltoall's packed buffer (its pack step "
     "does not run)"),
    ("overlap:dispatch", "path",
     "parts of an alltoall read by a batched matmul as each arrives, where "
     "it arrived (its unpack step does not run)"),
    ("overlap:dispatch-unpack-after", "path",
     "a dispatch in parts whose unpack step runs after the last part, for "
     "the other steps that read it"),
    ("overlap:dropless-dispatch", "path",
     "parts of an alltoallv's rows, each read by a grouped matmul as it "
     "arrives (the counts exchanged first)"),
    ("overlap:dropless-combine", "path",
     "parts of a grouped matmul's rows, each sent back by an alltoallv as "
     "soon as it is computed"),
    ("overlap:batches", "path",
     "parts of a batched matmul's allreduce: its batches, each reduced as "
     "soon as it is computed"),
    # Refusals: the steps in sequence on every path.
    ("fused:refused", "target",
     "a fused collective that no kernel computes (the plan says why)"),
    ("overlap:refused", "target",
     "an overlap run one after the other (the plan says why)"),
    # Steps.
    ("elementwise:flat", "target", "an elementwise kernel on vectors"),
    ("elementwise:indexed", "target",
     "an elementwise kernel reading some operand at computed indices"),
    ("elementwise:global-index", "target",
     "a member needs the element's global index (dropout)"),
    ("input:scalar", "target", "a scalar operand"),
    ("input:shifted", "target",
     "an operand read at the flat index plus an offset"),
    ("input:broadcast", "target", "an operand broadcast along a dimension"),
    ("input:gathered", "target",
     "an operand read through an index (a fused gather: `at`)"),
    ("input:offset", "target",
     "an operand read at the slice's offset (+shift)"),
    ("member:registers", "target", "a member kept in registers"),
    # Segment tables (a parameter list in one flat buffer).
    ("buffer:segment-table", "target",
     "a segment table's kernel table, filled by create()"),
    ("input:by-segment", "target",
     "an operand read at each element's segment (expand)"),
    ("fused:by-segment", "target",
     "a fused collective's kernel reads an operand per segment"),
] + [
    (f"reduction:{k}:segments", "target", f"a {k} reduction per segment")
    for k in REDUCTIONS
] + [
    (f"reduction:{k}:{how}", "target",
     f"a {k} reduction {'of all elements' if how == 'all' else 'along a dimension'}")
    for k in REDUCTIONS for how in ("all", "along")
] + [
    ("norm:layernorm", "target", "layernorm"),
    ("norm:rmsnorm", "target", "rmsnorm"),
    ("transpose", "target", "a transpose"),
    ("transpose:any-dims", "target",
     "a transpose of two dimensions other than the last two"),
    ("index:topk", "target", "a topk's values"),
    ("index:topk-indices", "target", "a topk's positions"),
    ("index:cumsum", "target", "a cumsum along a dimension"),
    ("index:gather", "target", "a gather by an index"),
    ("index:scatter", "target", "a scatter by an index"),
    ("index:per-line", "target",
     "a gather or scatter whose index ends at the dimension (one position "
     "per line)"),
    ("index:inner", "target",
     "a gather or scatter whose index has the inner dimensions"),
    ("matmul", "target", "a matmul"),
    ("matmul:batched", "target", "a batched matmul"),
    ("matmul:batched-b", "target", "a batched matmul with a batched B"),
    ("matmul:grouped", "target",
     "a grouped matmul (grouped_matmul: rows in groups of run-time lengths)"),
] + [
    (f"collective:{c}", "target", f"a {c}") for c in COLLECTIVES
] + [
    ("collective:all-axes", "target", "a collective over every mesh axis"),
    ("collective:grouped", "target", "collectives issued in one group"),
    ("collective:algorithm", "target",
     "a collective whose algorithm the schedule chose (algorithm(s, NAME))"),
    ("collective:algorithm-file", "target",
     "a collective run by an algorithm file (algorithm(s, \"f.alg\"))"),
    ("pack", "target", "a pack before a reducescatter along dimension > 0"),
    ("unpack", "target", "an unpack after an allgather along dimension > 0"),
    ("copy", "target", "a copy of a result computed elsewhere"),
    ("store", "target", "a scalar argument stored into memory"),
    ("check:factor", "target", "a size check with a factor (chunks)"),
    ("check:at-least", "target", "a size checked not below a topk's k"),
    ("require", "target",
     "a requirement on the scalar parameters, checked before the step"),
]

NAMES = [n for n, _, _ in VOCABULARY]
KIND = {n: k for n, k, _ in VOCABULARY}

# The printer's string literals each part of this file reads
# (compiler/lower/PlanPrinter.cpp). Every literal with a letter in it must
# be claimed here or in STRUCTURE.
PRINTER_WORDS = {
    "fused:*": ["  fused collective: steps", ": one kernel over the team of ",
                " elements", ", stores the reduced value",
                ", stores the gathered block", "; else in sequence\\n",
                " in sequence: ", "    kernel: ", "its own, passing ",
                " through", "step ", ", in parts", "; in",
                " combined from every member",
                "; the reduced value into every member", " into every member",
                ", its own block through the view ", " and into "],
    "overlap:*": ["  overlap: step ", " with step ", " chunks along dim ",
                  ", in sequence: ", ": per chunk steps", ", then step ",
                  " chunk-major over ", "; batches into ",
                  " in the alltoall's order", ", step ", " not run",
                  "; batches read from ", " where they arrive",
                  "; parts of the batches", "; parts of each member's experts",
                  " first"],
    "buffer:*, symmetric:*": [" param ", " sharded", " written",
                              " scalar param ", " output ", " scratch slot ",
                              ", or ", " when ", " is 1", " view of ",
                              ", block along ", ", symmetric on ",
                              " segment table "],
    "elementwise:*, input:*, member:*": [
        "elementwise over ", " flat", " global-index", "        in",
        " scalar", " shifted", "+shift", "i", "in", "registers",
        " by segment of ", " at ", "at:"],
    "reduction:*": [": outer ", " reduced ", " inner ", ": per segment of "],
    "norm:*": ["layernorm ", "rmsnorm ", ": rows ", " of ", "; gamma ",
               "; beta ", "; eps "],
    "transpose*": ["transpose ", ": batch ", " rows ", " cols ", " middle "],
    "index:*": [": outer ", " along ", " taken ", " inner ", "; index ",
                " per line", "; source "],
    "matmul*": ["matmul ", " x ", " M ", " N ", " K ", " batched B", " in ",
                " groups of ", ", B per "],
    "collective:*": [" over ", " root ", " offset ", " (grouped with next)",
                     " by ", " per member)",
                     "all axes", " (the schedule's algorithm)",
                     ", the algorithm in '", " step, ", " steps, ", " chunk",
                     " chunks", " a rank)"],
    "pack, unpack": ["pack ", "unpack ", " blocks ", " chunk "],
    "copy, store": ["copy ", "store "],
    "check:*": ["  check: ", " divisible by ", " at least "],
    "require": ["  require: "],
}
# Literals that are the plan's frame, not a decision.
STRUCTURE = ["plan ", ": program ", ", schedule ", "\\n  mesh", "\\n  sizes",
             "\\n  buffers (", " scratch slots)\\n", "  steps\\n",
             "  results\\n", " in ", ")\\n",
             "lower/Plan.h", "ir/AlgorithmTable.h",
             "llvm/Support/raw_ostream.h"]


def printer_literals(source):
    """The string literals of PlanPrinter.cpp with a letter in them."""
    text = re.sub(r"//[^\n]*", "", source)
    return sorted({lit for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', text)
                   if re.search(r"[A-Za-z]", lit)})


def unclaimed_literals(source):
    claimed = set(STRUCTURE)
    for words in PRINTER_WORDS.values():
        claimed.update(words)
    return [lit for lit in printer_literals(source) if lit not in claimed]


# --- Reading a plan --------------------------------------------------------------


class PlanError(Exception):
    pass


class Plan:
    """What `parse` reads of one printed plan."""

    def __init__(self):
        self.axes = []          # mesh axis names
        self.buffers = {}       # name -> dict(kind, dtype, attrs...)
        self.steps = []         # dict(index, name, kind, text, inputs...)
        self.fused = []         # dict(steps, one_kernel, reduced, gathered)
        self.overlaps = []      # dict(producer, consumer, chunks, ...)
        self.checks = []        # text
        self.requirements = []  # text


BUFFER = re.compile(r"^    (\w+) : (\w+)(\[[^\]]*\])?( .*)$")
STEP = re.compile(r"^    (\d+) (\w+): (.*)$")
INPUT = re.compile(r"^        in(\d+) (\w+) (.*)$")
MEMBER = re.compile(r"^        (\S+)\(([^)]*)\) -> (\w+)$")
FUSED = re.compile(r"^  fused collective: steps((?: \d+)+)"
                   r"(?:: one kernel over the team of (\w+), (.*) elements"
                   r"(, stores the reduced value)?(, stores the gathered "
                   r"block)?; else in sequence| in sequence: (.*))$")
KERNEL = re.compile(r"^    kernel: (?:its own, passing (\w+) through|step (\d+))"
                    r"(, in parts)?(?:; in(\d+) combined from every member)?"
                    r"(; the reduced value into every member)?"
                    r"(?:; (\S+) into every member(?:, its own block through "
                    r"the view (\w+)| and into (\w+))?)?$")
OVERLAP = re.compile(r"^  overlap: step (\d+) with step (\d+), (\d+) chunks "
                     r"along dim (\d+)(?:, in sequence: (.*)|: per chunk "
                     r"steps((?: \d+)+)(?:, then step (\d+))?(?:; (\w+) "
                     r"chunk-major over (\w+)|; batches into (\w+) in the "
                     r"alltoall's order(, step \d+ not run)?|; batches read "
                     r"from (\w+) where they arrive(, step \d+ not run)?|"
                     r"(; parts of the batches)|(; parts of each member's "
                     r"experts)(, step \d+ first)?)?)$")
COLLECTIVE = re.compile(r"^(" + "|".join(COLLECTIVES) + r")(?:\((\w+)\))?"
                        r"(?: root -?\d+)?(?: offset -?\d+)?"
                        r"(?: by \w+ \([^)]*\))? over (all axes|\w+) (\w+) "
                        r"(.+) -> (\w+) (.+?)(, \w+ \(the schedule's "
                        r"algorithm\)|, the algorithm in '[^']*' \([^)]*\))?"
                        r"( \(grouped with next\))?$")


def parse(text):
    plan = Plan()
    section = None
    step = None
    for number, line in enumerate(text.splitlines(), start=1):
        def bad(why="a line the plan reader does not know"):
            raise PlanError(f"line {number}: {why}: {line!r}")
        if not line.strip():
            continue
        if line.startswith("plan "):
            section = "head"
        elif line.startswith("  mesh"):
            plan.axes = [a.split(":")[0] for a in line.split()[1:]]
        elif line.startswith("  sizes"):
            pass
        elif line.startswith("  buffers ("):
            section = "buffers"
        elif line == "  steps":
            section = "steps"
        elif line == "  results":
            section = "results"
        elif line.startswith("  fused collective: "):
            m = FUSED.match(line) or bad()
            plan.fused.append({
                "steps": [int(s) for s in m.group(1).split()],
                "one_kernel": m.group(2) is not None,
                "axis": m.group(2),
                "reduced": bool(m.group(4)),
                "gathered": bool(m.group(5)),
                "why": m.group(6)})
        elif line.startswith("    kernel: ") and plan.fused:
            m = KERNEL.match(line) or bad()
            plan.fused[-1].update({
                "pass_through": m.group(1) is not None,
                "kernel_step": int(m.group(2)) if m.group(2) else None,
                "ranged": m.group(3) is not None,
                "reduced_input": int(m.group(4)) if m.group(4) else None,
                "gathers_reduced": m.group(5) is not None,
                "gathered_member": m.group(6),
                "self_view": m.group(7), "stored_into": m.group(8)})
        elif line.startswith("  overlap: "):
            m = OVERLAP.match(line) or bad()
            plan.overlaps.append({
                "producer": int(m.group(1)), "consumer": int(m.group(2)),
                "chunks": int(m.group(3)), "why": m.group(5),
                "per_chunk": [int(s) for s in (m.group(6) or "").split()],
                "after": int(m.group(7)) if m.group(7) else None,
                "chunk_major": m.group(8) is not None,
                "batches_into": m.group(10),
                "pack_in_parts": m.group(11) is not None,
                "dispatch_from": m.group(12),
                "batches": m.group(14) is not None,
                "dropless": m.group(15) is not None,
                "counts_first": m.group(16) is not None})
        elif line.startswith("  check: "):
            plan.checks.append(line[len("  check: "):])
        elif line.startswith("  require: "):
            plan.requirements.append(line[len("  require: "):])
        elif section == "buffers":
            m = BUFFER.match(line) or bad()
            rest = m.group(4)
            b = {"dtype": m.group(2), "shape": m.group(3) or "",
                 "symmetric": ", symmetric on " in rest,
                 "sharded": " sharded" in rest, "written": " written" in rest,
                 "lone": ", or " in rest and " is 1" in rest}
            if rest.startswith(" scalar param "):
                b["kind"] = "scalar-param"
            elif rest.startswith(" param "):
                b["kind"] = "param"
            elif rest.startswith(" output "):
                b["kind"] = "output"
            elif rest.startswith(" scratch slot "):
                b["kind"] = "scratch"
            elif rest.startswith(" view of "):
                b["kind"] = "view"
                b["base"] = rest[len(" view of "):].split(",")[0]
            elif re.match(r"^ segment table \w+ over \S+$", rest):
                b["kind"] = "segment-table"
            else:
                bad("a buffer of no known kind")
            plan.buffers[m.group(1)] = b
        elif section == "steps":
            m = STEP.match(line)
            if m:
                step = {"index": int(m.group(1)), "name": m.group(2),
                        "text": m.group(3), "inputs": [], "members": []}
                body = m.group(3)
                kind = body.split()[0] if body else ""
                if kind.startswith(tuple(COLLECTIVES)) and \
                        COLLECTIVE.match(body):
                    c = COLLECTIVE.match(body)
                    step.update(kind="collective", collective=c.group(1),
                                axis=c.group(3), input=c.group(4),
                                output=c.group(6),
                                algorithm=bool(c.group(8)),
                                algorithm_file=bool(c.group(8)) and
                                c.group(8).startswith(", the algorithm in"),
                                grouped=bool(c.group(9)))
                elif kind == "elementwise":
                    step.update(kind="elementwise",
                                flat=body.endswith(" flat") or
                                " flat " in body,
                                global_index=" global-index" in body)
                elif kind in REDUCTIONS:
                    r = re.match(r"^\w+ (\w+) -> (\w+): outer (\[[^\]]*\]) "
                                 r"reduced (\[[^\]]*\]) inner (\[[^\]]*\])$",
                                 body)
                    seg = re.match(r"^\w+ (\w+) -> (\w+): per segment of "
                                   r"(\w+) over (\[[^\]]*\])$", body)
                    if not r and not seg:
                        bad()
                    step.update(kind="reduction", reduction=kind,
                                input=(r or seg).group(1),
                                output=(r or seg).group(2),
                                segments=bool(seg),
                                along=bool(r) and (r.group(3) != "[]" or
                                                   r.group(5) != "[]"))
                elif kind in ("layernorm", "rmsnorm"):
                    step.update(kind=kind)
                elif kind == "transpose":
                    step.update(kind="transpose",
                                any_dims=" middle " in body)
                elif kind in INDEX_OPS:
                    ix = re.match(r"^[\w-]+ (\w+) -> (\w+): outer "
                                  r"(\[[^\]]*\]) along (.+) taken (.+) "
                                  r"inner (\[[^\]]*\])(; index \w+"
                                  r"( per line)?)?(; source \w+)?$",
                                  body) or bad()
                    if (kind in ("gather", "scatter")) != bool(ix.group(7)) \
                            or (kind == "scatter") != bool(ix.group(9)):
                        bad()
                    step.update(kind="index", op=kind,
                                per_line=bool(ix.group(8)))
                elif kind == "matmul":
                    mm = re.match(r"^matmul (\w+) = (\w+) x (\w+): batch "
                                  r"(\[[^\]]*\])", body) or bad()
                    step.update(kind="matmul", output=mm.group(1),
                                batched=mm.group(4) != "[]",
                                batched_b=" batched B" in body,
                                grouped=" groups of " in body)
                elif kind in ("pack", "unpack", "copy", "store"):
                    step.update(kind=kind)
                else:
                    bad("a step of no known kind")
                plan.steps.append(step)
                continue
            m = INPUT.match(line)
            if m and step is not None:
                step["inputs"].append({"buffer": m.group(2),
                                       "access": m.group(3)})
                continue
            m = MEMBER.match(line)
            if m and step is not None:
                step["members"].append({"name": m.group(1),
                                        "output": m.group(3)})
                continue
            bad()
        elif section == "results":
            if not re.match(r"^    \S+ in \w+$", line):
                bad()
        else:
            bad()
    return plan


def features(text):
    """The set of VOCABULARY names a printed plan shows."""
    plan = parse(text)
    out = set()
    by_index = {s["index"]: s for s in plan.steps}
    kernels = [f for f in plan.fused if f["one_kernel"]]
    in_parts = [o for o in plan.overlaps if o["why"] is None]

    for f in plan.fused:
        if not f["one_kernel"]:
            out.add("fused:refused")
            continue
        out.add("fused:one-kernel")
        parts = [by_index[i] for i in f["steps"]]
        colls = [p for p in parts if p["kind"] == "collective"]
        reducing = [c for c in colls if c["collective"] != "allgather"]
        gather = [c for c in colls if c["collective"] == "allgather"]
        kernel = [p for p in parts if p["kind"] == "elementwise"]
        red = {"allreduce": "ar", "reducescatter": "rs"}.get(
            reducing[0]["collective"]) if reducing else None
        shape = "+".join(x for x in (red, "kernel" if kernel else None,
                                     "ag" if gather else None) if x)
        if len(colls) == 1 and not kernel:
            out.add("fused:alone")
        elif shape in ("rs+kernel+ag", "rs+kernel", "ar+kernel",
                       "kernel+ag", "rs+ag"):
            out.add("fused:" + shape)
        if "pass_through" not in f:
            raise PlanError("a fused collective that one kernel computes "
                            "without its 'kernel:' line")
        if f["pass_through"]:
            out.add("fused:pass-through")
        if f["gathers_reduced"]:
            out.add("fused:gathers-reduced")
        if f["reduced"]:
            out.add("fused:stores-reduced")
        if f["gathered"]:
            out.add("fused:stores-gathered")
        if gather:
            src = plan.buffers.get(gather[0]["input"], {})
            if src.get("kind") == "view" and \
                    src.get("base") == gather[0]["output"]:
                out.add("fused:gathered-view")
        if reducing and plan.buffers.get(reducing[0]["output"], {}).get(
                "dtype") in ("f16", "bf16"):
            out.add("fused:narrow-reduced")
        for k in kernel:
            if not k["flat"]:
                out.add("fused:indexed-kernel")
            if any(i["access"].startswith("by segment of ")
                   for i in k["inputs"]):
                out.add("fused:by-segment")
            if any(i["access"] == "scalar" for i in k["inputs"]):
                out.add("fused:scalar-input")
        in_overlap = any(f["steps"][0] in o["per_chunk"] for o in in_parts)
        if in_overlap:
            out.add("fused:in-overlap")
        # The kernel line agrees with the rest of the plan.
        if f["ranged"] != in_overlap:
            raise PlanError(f"fused collective of steps {f['steps']}: its "
                            "kernel runs in parts iff an overlap's parts "
                            "hold it")
        if f["pass_through"] == bool(kernel) or (
                kernel and f["kernel_step"] != kernel[0]["index"]):
            raise PlanError(f"fused collective of steps {f['steps']}: its "
                            "kernel is its elementwise step, or its own "
                            "where it has none")
        if len(plan.axes) > 1:
            out.add("fused:axis-of-mesh")

    for o in plan.overlaps:
        if o["why"] is not None:
            out.add("overlap:refused")
            continue
        out.add("overlap:parts" if o["chunks"] > 1 else "overlap:one-chunk")
        consumer = by_index[o["consumer"]]
        fused_consumer = any(f["one_kernel"] and o["consumer"] in f["steps"]
                             for f in plan.fused)
        if fused_consumer:
            out.add("overlap:fused")
        if consumer["kind"] == "collective" and consumer["collective"] in (
                "allreduce", "reducescatter", "allgather", "alltoall"):
            out.add("overlap:" + consumer["collective"])
        if o["after"] is not None and o["dispatch_from"] is None:
            out.add("overlap:then-step")
        if o["chunk_major"]:
            out.add("overlap:chunk-major")
        if o["pack_in_parts"]:
            out.add("overlap:pack-in-parts")
        if o["dispatch_from"] is not None:
            out.add("overlap:dispatch")
            if o["after"] is not None:
                out.add("overlap:dispatch-unpack-after")
        if o["batches"]:
            out.add("overlap:batches")
        if o["dropless"]:
            out.add("overlap:dropless-dispatch" if o["counts_first"]
                    else "overlap:dropless-combine")

    if kernels or in_parts or plan.overlaps or plan.fused:
        for b in plan.buffers.values():
            kind = b["kind"]
            if b["symmetric"]:
                if kind == "param":
                    out.add("symmetric:param-written" if b["written"]
                            else "symmetric:param")
                elif kind in ("output", "scratch"):
                    out.add("symmetric:" + kind)
            if kind == "view":
                out.add("buffer:view")
            if b["lone"]:
                out.add("buffer:lone-alias")
            if kind == "param" and b["written"]:
                out.add("buffer:param-written")
            if kind == "param" and b["sharded"]:
                out.add("buffer:param-sharded")
            if kind in ("scalar-param", "output", "scratch"):
                out.add("buffer:" + kind)
    if any(b["kind"] == "segment-table" for b in plan.buffers.values()):
        out.add("buffer:segment-table")

    for s in plan.steps:
        kind = s["kind"]
        if kind == "elementwise":
            out.add("elementwise:flat" if s["flat"] else "elementwise:indexed")
            if s["global_index"]:
                out.add("elementwise:global-index")
            for i in s["inputs"]:
                a = i["access"]
                if a == "scalar":
                    out.add("input:scalar")
                if a.startswith("shifted"):
                    out.add("input:shifted")
                if re.search(r"[\[ ]0[,\]]", a):
                    out.add("input:broadcast")
                if "+shift" in a:
                    out.add("input:offset")
                if a.startswith("by segment of "):
                    out.add("input:by-segment")
                if " at " in a:
                    out.add("input:gathered")
            if any(m["output"] == "registers" for m in s["members"]):
                out.add("member:registers")
        elif kind == "reduction":
            out.add(f"reduction:{s['reduction']}:" +
                    ("segments" if s["segments"] else
                     "along" if s["along"] else "all"))
        elif kind in ("layernorm", "rmsnorm"):
            out.add("norm:" + kind)
        elif kind == "matmul":
            out.add("matmul")
            if s["batched"]:
                out.add("matmul:batched")
            if s["batched_b"]:
                out.add("matmul:batched-b")
            if s["grouped"]:
                out.add("matmul:grouped")
        elif kind == "collective":
            out.add("collective:" + s["collective"])
            if s["axis"] == "all axes":
                out.add("collective:all-axes")
            if s["grouped"]:
                out.add("collective:grouped")
            if s["algorithm"]:
                out.add("collective:algorithm")
            if s.get("algorithm_file"):
                out.add("collective:algorithm-file")
        elif kind in ("transpose", "pack", "unpack", "copy", "store"):
            out.add(kind)
            if s.get("any_dims"):
                out.add("transpose:any-dims")
        elif kind == "index":
            out.add("index:" + s["op"])
            if s["op"] in ("gather", "scatter"):
                out.add("index:per-line" if s["per_line"] else "index:inner")
    if any(re.search(r" \* \d+ \(", c) or re.search(r" by \d+ \(", c)
           for c in plan.checks):
        out.add("check:factor")
    if any(" at least " in c for c in plan.checks):
        out.add("check:at-least")
    if plan.requirements:
        out.add("require")
    unknown = out - set(NAMES)
    if unknown:
        raise PlanError(f"features outside the vocabulary: {sorted(unknown)}")
    return out


def has_fusion(text):
    """Does the plan have a fused collective or an overlap (so that its
    paths differ)?"""
    plan = parse(text)
    return bool(plan.fused or plan.overlaps)


def main(argv):
    if argv[1:] == ["--list"]:
        for name, kind, what in VOCABULARY:
            print(f"{name:28} {kind:7} {what}")
        return 0
    for path in argv[1:]:
        with open(path) as f:
            print(path + ": " + " ".join(sorted(features(f.read()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
