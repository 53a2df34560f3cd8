"""Times for calibrate-gpu.test: what a GPU with known constants would
measure for each run of runs.tsv (argv[1]), in calibrate-gpu.sh's format."""
import re
import sys

LAUNCH, BANDWIDTH = 3e-6, 4000e9
RATE = {"f16": 500e12, "bf16": 500e12, "f32": 40e12, "f64": 40e12}
print("# CASE\tSIZES\tROUND\tMS")
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] != "time":
        continue
    case, sizes = f[1], f[6]
    n = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", sizes)}
    if case == "bw":
        t = LAUNCH + 12 * n["N"] / BANDWIDTH
    elif case.startswith("mm_"):
        t = 2 * n["M"] * n["K"] * n["N"] / RATE[case[3:]]
    elif case == "ar":
        t = LAUNCH + 8 * n["N"] / BANDWIDTH
    elif case.startswith("sgd_"):
        # Slower the better the schedule's rank (of 7): rank k takes
        # 8 - k ms.
        t = (8 - int(case[4:])) * 1e-3
    else:
        continue  # not measured
    for r in (1, 2):
        print(f"{case}\t{sizes}\t{r}\t{t * 1e3 * r:.9g}")
