#!/usr/bin/env bash
# CTest setup-quiet: tools/setup.sh prints one line per step and apt-get's
# output only when a step fails (then exits with its status). apt-get and
# dpkg-query are replaced by fakes (COCONET_SETUP_APT_GET,
# COCONET_SETUP_DPKG_QUERY): nothing is installed. Its Python environment
# step is skipped then (1-4), or run with a fake python3 whose venv's pip
# "installs" nanobind by leaving a marker (5-7, COCONET_SETUP_PYTHON).
set -euo pipefail
src=${1:?source dir}; work=${2:?work dir}
rm -rf "$work" && mkdir -p "$work"
setup=$src/tools/setup.sh
fail=0
check() { # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok: $name"; else echo "FAILED: $name"; fail=1; fi
}

# A dpkg-query that says every package is installed except those in $MISSING.
cat >"$work/dpkg-query" <<'FAKE'
#!/usr/bin/env bash
for p in $MISSING; do [[ ${!#} == "$p" ]] && exit 1; done
printf 'install ok installed'
FAKE
# An apt-get that talks a lot, logs its arguments, and fails the step named
# in $FAIL_STEP (update or install) with status 100.
cat >"$work/apt-get" <<'FAKE'
#!/usr/bin/env bash
echo "$*" >>"$LOG"
for i in $(seq 40); do echo "Get:$i http://deb.example $1 [$i kB]"; done
echo "W: a warning on stderr" >&2
if [[ $1 == "$FAIL_STEP" ]]; then echo "E: Unable to locate package $1-marker" >&2; exit 100; fi
exit 0
FAKE
chmod +x "$work/dpkg-query" "$work/apt-get"
export COCONET_SETUP_DPKG_QUERY=$work/dpkg-query COCONET_SETUP_APT_GET=$work/apt-get
export LOG=$work/apt.log

# 1. Nothing missing: one line, apt-get not called.
: >"$LOG"
out=$(MISSING="" FAIL_STEP="" "$setup" 2>&1)
check "all installed: one line" \
  grep -qxE "setup: all [0-9]+ packages are installed" <<<"$out"
check "all installed: only that line" [ "$(wc -l <<<"$out")" = 1 ]
check "all installed: apt-get not run" [ ! -s "$LOG" ]

# 2. Two missing, apt-get succeeds: two lines, no transcript.
: >"$LOG"
rc=0; out=$(MISSING="catch2 graphviz" FAIL_STEP="" "$setup" 2>&1) || rc=$?
expected="setup: apt-get update ... ok
setup: installing catch2 graphviz ... ok"
check "install ok: exit 0" [ "$rc" = 0 ]
check "install ok: one line per step" [ "$out" = "$expected" ]
check "install ok: apt-get install got exactly the missing packages" \
  grep -qx "install -y -q --no-install-recommends catch2 graphviz" "$LOG"
[[ $out == "$expected" ]] || printf '%s\n' "$out" | head -20

# 3. The install step fails: its transcript is printed, the status kept.
rc=0; out=$(MISSING="catch2" FAIL_STEP="install" "$setup" 2>&1) || rc=$?
check "install fails: exit status 100" [ "$rc" = 100 ]
check "install fails: the step's title and status" \
  grep -q "^setup: installing catch2 ... failed (exit status 100)" <<<"$out"
check "install fails: apt-get's error is shown" \
  grep -q "^E: Unable to locate package install-marker" <<<"$out"
check "install fails: its whole transcript is shown" \
  grep -q "^Get:40 http://deb.example install" <<<"$out"
check "install fails: the update step's transcript is not" \
  bash -c '! grep -q "deb.example update" <<<"$1"' _ "$out"

# 4. The update step fails: setup stops there.
: >"$LOG"
rc=0; out=$(MISSING="catch2" FAIL_STEP="update" "$setup" 2>&1) || rc=$?
check "update fails: non-zero exit" [ "$rc" = 100 ]
check "update fails: install not attempted" bash -c '! grep -q install "$1"' _ "$LOG"
check "update fails: its error is shown" \
  grep -q "^E: Unable to locate package update-marker" <<<"$out"

# A python3 whose `-m venv ... DIR` makes DIR/bin/python3: a copy of itself
# that imports nanobind once DIR/nanobind exists, and whose `-m pip install`
# logs its arguments to $LOG and leaves that marker (or fails, talking, with
# status 1 when FAIL_STEP=pip).
cat >"$work/python3" <<'FAKE'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")/.." && pwd)
case "$1 $2" in
  "-m venv") echo "venv ${*:3}" >>"$LOG"; dir=${!#}; mkdir -p "$dir/bin"
             cp "$0" "$dir/bin/python3" ;;
  "-m pip")  echo "pip ${*:3}" >>"$LOG"
             echo "Collecting nanobind"; echo "Downloading nanobind.whl"
             if [[ $FAIL_STEP == pip ]]; then echo "ERROR: No matching distribution" >&2; exit 1; fi
             if [[ $* == *jax==* ]]; then touch "$here/jax"; else touch "$here/nanobind"; fi ;;
  "-c import nanobind") [[ -e $here/nanobind ]] ;;
  "-c import numpy"*) echo 1.24.2 ;;
  "-c import jax"*) [[ -e $here/jax ]] ;;
  "-c ") exit 0 ;;
  *) echo "fake python3: $*" >&2; exit 2 ;;
esac
FAKE
chmod +x "$work/python3"
export COCONET_SETUP_PYTHON=$work/python3 COCONET_VENV=$work/venv

# 5. No environment yet: it is made and nanobind installed, in one line.
: >"$LOG"
rc=0; out=$(MISSING="" FAIL_STEP="" "$setup" 2>&1) || rc=$?
expected="$(head -1 <<<"$out")
setup: installing nanobind==3.1.0 into $work/venv ... ok"
check "venv made: exit 0" [ "$rc" = 0 ]
check "venv made: one line per step" [ "$out" = "$expected" ]
check "venv made: with Debian's site packages" \
  grep -qx "venv --clear --system-site-packages $work/venv" "$LOG"
check "venv made: nanobind installed with its pip" \
  grep -qx "pip install -q nanobind==3.1.0" "$LOG"
[[ $out == "$expected" ]] || printf '%s\n' "$out" | head -20

# 6. Run again: nothing to do, nothing run.
: >"$LOG"
rc=0; out=$(MISSING="" FAIL_STEP="" "$setup" 2>&1) || rc=$?
check "venv ready: exit 0" [ "$rc" = 0 ]
check "venv ready: says so in one line" \
  grep -qx "setup: $work/venv has nanobind" <<<"$out"
check "venv ready: two lines in all" [ "$(wc -l <<<"$out")" = 2 ]
check "venv ready: neither venv nor pip run" [ ! -s "$LOG" ]

# 7. The environment is there but pip fails: the venv is kept, pip's
# output is shown, its status kept.
rm -f "$work/venv/nanobind"; : >"$LOG"
rc=0; out=$(MISSING="" FAIL_STEP="pip" "$setup" 2>&1) || rc=$?
check "pip fails: exit status 1" [ "$rc" = 1 ]
check "pip fails: the step's title and status" \
  grep -q "^setup: installing nanobind==3.1.0 into $work/venv ... failed (exit status 1)" <<<"$out"
check "pip fails: pip's error is shown" \
  grep -q "^ERROR: No matching distribution" <<<"$out"
check "pip fails: the existing venv is not made again" \
  bash -c '! grep -q "^venv" "$1"' _ "$LOG"

# 8. --tests: the test-only packages too (without it, one missing is not
# installed), and JAX and optax into the environment, numpy held at the
# environment's; run again, nothing more.
: >"$LOG"
rc=0; out=$(MISSING="python3-torch" FAIL_STEP="" "$setup" 2>&1) || rc=$?
check "no --tests: a test-only package is not installed" \
  bash -c '! grep -qE "^(update|install)" "$1"' _ "$LOG"
check "no --tests: JAX not installed" [ ! -e "$work/venv/jax" ]
rc=0; out=$(MISSING="python3-torch" FAIL_STEP="" "$setup" --tests 2>&1) || rc=$?
check "--tests: exit 0" [ "$rc" = 0 ]
check "--tests: the test-only package installed" \
  grep -qx "install -y -q --no-install-recommends python3-torch" "$LOG"
check "--tests: JAX and optax installed, numpy held" \
  grep -qE "^pip install -q -c .* jax==0.4.38 jaxlib==0.4.38 optax==0.2.5$" "$LOG"
check "--tests: one line for JAX" \
  grep -qx "setup: installing jax==0.4.38 jaxlib==0.4.38 optax==0.2.5 into $work/venv ... ok" <<<"$out"
: >"$LOG"
rc=0; out=$(MISSING="" FAIL_STEP="" "$setup" --tests 2>&1) || rc=$?
check "--tests again: JAX there, pip not run" bash -c '! grep -q "^pip" "$1"' _ "$LOG"
check "--tests again: says so" \
  grep -qx "setup: $work/venv has jax==0.4.38 jaxlib==0.4.38 optax==0.2.5" <<<"$out"
rc=0; out=$(MISSING="" FAIL_STEP="" "$setup" --bogus 2>&1) || rc=$?
check "an unknown option: usage, exit status 2" [ "$rc" = 2 ]
exit "$fail"
