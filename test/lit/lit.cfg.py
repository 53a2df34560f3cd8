# lit configuration of coconetc's golden tests (see docs/testing.md).
#
# Test files are .coco programs (or .test scripts) with RUN lines. A file
# whose name starts with `fail-` must be rejected by the compiler, and only
# such files may be: every RUN line that invokes %coconetc in a fail- file
# goes through `not` (or `%expect-exit N`, N > 0: that exit status), and no
# other file uses `not %coconetc`.
import os
import re
import shutil

import lit.formats

config.name = "coconetc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".coco", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.coconet_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["COCONET_STDLIB"] = os.path.join(config.coconet_src_root, "stdlib")

# The bare executable, for scripts that take its path (before %coconetc,
# which it starts with).
config.substitutions.append(("%coconetc-bin", config.coconetc))
config.substitutions.append(("%coconetc", config.coconetc + " --color=never"))
config.substitutions.append(("%samples", os.path.join(config.coconet_src_root, "samples")))
config.substitutions.append(("%stdlib", os.path.join(config.coconet_src_root, "stdlib")))
config.substitutions.append(("%tools", os.path.join(config.coconet_src_root, "tools")))
config.substitutions.append(("%python", config.python))
# %expect-exit N CMD: CMD must exit with status N (its output passes through).
config.substitutions.append(
    ("%expect-exit", config.python + " " + os.path.join(config.test_source_root, "expect_exit.py")))

# Graphviz, for the tests that render --emit=dot (test/lit/emit/).
if shutil.which("dot"):
    config.available_features.add("dot")


def check_fail_prefix(root):
    """Carbon's rule: `fail-` if and only if the input is rejected."""
    problems = []
    for dirpath, _, files in os.walk(root):
        if "Inputs" in dirpath.split(os.sep):
            continue
        for name in files:
            if not name.endswith((".coco", ".test")):
                continue
            text = open(os.path.join(dirpath, name), encoding="utf-8", errors="replace").read()
            runs = [l for l in text.splitlines() if re.search(r"RUN:.*%coconetc", l)]
            refused = r"(\bnot|%expect-exit\s+[1-9]\d*)\s+%coconetc"
            rejected = any(re.search(r"RUN:.*" + refused, l) for l in runs)
            accepted = any(not re.search(refused, l) for l in runs)
            if name.startswith("fail-") and (not rejected or accepted):
                problems.append(name + ": a fail- test must only run `not %coconetc` (or `%expect-exit N %coconetc`, N > 0)")
            if not name.startswith("fail-") and rejected:
                problems.append(name + ": rejects its input, so its name must start with fail-")
    if problems:
        lit_config.fatal("test naming rule broken:\n  " + "\n  ".join(problems))


check_fail_prefix(config.test_source_root)
