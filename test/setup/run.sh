#!/usr/bin/env bash
# CTest setup-quiet: tools/setup.sh prints one line per step and apt-get's
# output only when a step fails (then exits with its status). apt-get and
# dpkg-query are replaced by fakes (COCONET_SETUP_APT_GET,
# COCONET_SETUP_DPKG_QUERY): nothing is installed.
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
exit "$fail"
