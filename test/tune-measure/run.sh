#!/usr/bin/env bash
# CTest tune-measure: `coconetc tune --measure` builds and times the top
# schedules of SGD on this machine (tools/measure-cpu.sh, the build tree's
# runtime) and prints measured beside predicted. Checks the table and the
# summary line; that --run-time sizes the runs (a step of N = 4096 takes
# microseconds, so 20 ms takes far more than --iterations 2 steps, each
# schedule its own count); that --run-time 0 keeps --iterations. Not the
# times themselves (benchmarks, not tests), but that each schedule keeps
# its fastest step, each run timing its steps one by one (the driver's
# --step-times). Skips (77) without mpirun.
#   run.sh COCONETC MACHINE SAMPLES WORK
set -euo pipefail
coconetc=${1:?coconetc}; machine=${2:?machine file}; samples=${3:?samples}
work=${4:?work dir}
command -v mpirun >/dev/null || { echo "SKIPPED: mpirun is not installed"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
export TMPDIR=$work
tune=("$coconetc" tune --machine "$machine" --size N=4096 --ranks 1 --top 2
      --measure --rounds 2 --iterations 2 -o "$work/tuned.coco" "$samples/sgd.coco")

fail() { echo "FAILED: $*"; exit 1; }
"${tune[@]}" --run-time 20 >"$work/sized.out" 2>"$work/sized.err"
cat "$work/sized.out"
grep -q "^coconetc tune: sizing 1 of 2: " "$work/sized.err" || fail "no sizing runs"
grep -q "^coconetc tune: measuring 2 of 2, round 2 of 2, [0-9]* steps: " "$work/sized.err" \
  || fail "no second round"
grep -Eq "^ +1 +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +[0-9.]+ +1\.00 " "$work/sized.out" \
  || fail "rank 1 has no measured time beside its predicted"
line=$(grep "^measured: 2 schedules on 1 ranks x [0-9]* threads, fastest step of 2 runs of " "$work/sized.out") \
  || fail "no summary line"
# "runs of LO to HI steps (at least 20 ms a run)" or "runs of N steps (...)".
[[ $line =~ runs\ of\ ([0-9]+)(\ to\ ([0-9]+))?\ steps\ \(at\ least\ 20\ ms\ a\ run\) ]] \
  || fail "the summary does not give the runs' steps: $line"
(( BASH_REMATCH[1] > 2 )) || fail "--run-time 20 kept runs of ${BASH_REMATCH[1]} steps"
# The runs took the steps said: the driver's own line in the last run's log.
steps=$(sed -n 's/^coconetc tune: measuring 1 of 2, round 2 of 2, \([0-9]*\) steps: .*/\1/p' "$work/sized.err")
dir=$(sed -n 's/.*(in \(.*\))$/\1/p' <<<"$line")
grep -Eq "^sgd_r1: $steps steps on 1 ranks, [0-9.]+ ms per step, fastest [0-9.]+ ms$" "$dir/r1/measure.log" \
  || fail "rank 1's runs did not take its $steps steps, timing each: $(tail -1 "$dir/r1/measure.log")"
grep -q "rank correlation (Spearman)" "$work/sized.out" || fail "no correlation line"
grep -q "^schedule tuned for sgd" "$work/tuned.coco" || fail "no schedule written"

"${tune[@]}" --run-time 0 >"$work/fixed.out" 2>"$work/fixed.err"
grep -q "fastest step of 2 runs of 2 steps each" "$work/fixed.out" \
  || fail "--run-time 0 did not keep --iterations: $(grep '^measured' "$work/fixed.out")"
! grep -q "sizing" "$work/fixed.err" || fail "--run-time 0 sized its runs"
# Odd rounds in rank order, even rounds in reverse (a steady drift of the
# machine cancels instead of ordering the measured times like the ranks).
order=$(sed -n 's/^coconetc tune: measuring \([0-9]*\) of 2, round \([0-9]*\) of 2, .*/\2:\1/p' \
  "$work/fixed.err" | tr '\n' ' ')
[[ $order == "1:1 1:2 2:2 2:1 " ]] || fail "the rounds did not alternate their order: $order"
# Each run's mean and fastest step are on its progress line (the fastest
# no more than the mean); the table keeps each schedule's fastest step (not
# the fastest mean, not the median, not the last).
python3 - "$work/fixed.out" "$work/fixed.err" <<'PY' || fail "the table does not keep each schedule's fastest run"
import re, sys
unit = {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
sec = lambda v, u: float(v) * unit[u]
runs, means = {}, {}
for m in re.finditer(r"^coconetc tune: measuring (\d+) of 2, round \d of 2, "
                     r"2 steps: .* -> mean ([0-9.]+) (\w+), "
                     r"fastest ([0-9.]+) (\w+) a step$",
                     open(sys.argv[2]).read(), re.M):
    means.setdefault(int(m.group(1)), []).append(sec(m.group(2), m.group(3)))
    runs.setdefault(int(m.group(1)), []).append(sec(m.group(4), m.group(5)))
table = {int(m.group(1)): sec(m.group(2), m.group(3)) for m in re.finditer(
    r"^ +(\d+) +[0-9.]+ \w+ +([0-9.]+) (\w+) ", open(sys.argv[1]).read(), re.M)}
ok = sorted(runs) == [1, 2] == sorted(table) and all(
    len(runs[i]) == 2 and table[i] == min(runs[i]) and
    all(f <= m for f, m in zip(runs[i], means[i])) for i in runs)
print(f"fastest steps {runs}, means {means}, table {table}")
sys.exit(0 if ok else 1)
PY
echo "tune-measure: passed"
