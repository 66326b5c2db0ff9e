#!/usr/bin/env bash
# Runs every test of babelqueue-cpp on a fresh Debian bookworm machine (this is what
# .ci/run runs):
#   deps     apt packages (scripts/install-deps.sh) and the Python peer venv
#   dev      `dev` preset (Debug, -Werror): build + every CTest test (unit, conformance,
#            install-tree consumers, fuzz-corpus replay, interop, live brokers, ...)
#   asan     `asan` preset (ASan+UBSan): build + CTest, without labels install and bench
#   tsan     `tsan` preset: the concurrency-relevant tests — labels runtime, sqlite, redis,
#            rabbitmq (the tsan test preset's filter; interop/install/bench excluded)
#   fuzz     bounded libFuzzer run of each target (scripts/fuzz.sh)
# The test servers (scripts/services.sh: RabbitMQ, Redis) start in the background right
# after deps, while dev compiles; every CTest phase waits for them and sees their
# BABELQUEUE_* variables (build/services/services.env); they are stopped on every exit path.
# BABELQUEUE_REQUIRE_SERVICES=1 is exported: a test whose server URL is missing fails.
# Ends with the line `N passed, N failed, N skipped` (all CTest tests of all phases plus one per fuzz
# target; a configure/build failure counts as one failure) and exits non-zero on any failure.
#
# Environment:
#   BABELQUEUE_SHARED_DIR   the shared folder holding conformance/ (default <repo>/../shared)
#   BABELQUEUE_JOBS         build and test parallelism (default nproc)
#   BABELQUEUE_FUZZ_SECONDS seconds per fuzz target (default 60)
#   BABELQUEUE_PHASES       phases to run (default "deps dev asan tsan fuzz")
#   BABELQUEUE_SERVICES     test servers to start (default "rabbitmq redis"; "" for none)
#   BABELQUEUE_SERVICES_DIR their run directory (default <repo>/build/services)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
shared=${BABELQUEUE_SHARED_DIR:-$repo/../shared}
shared=$(cd "$shared" 2>/dev/null && pwd || echo "$shared")
conformance=$shared/conformance
jobs=${BABELQUEUE_JOBS:-$(nproc)}
fuzz_seconds=${BABELQUEUE_FUZZ_SECONDS:-60}
phases=" ${BABELQUEUE_PHASES:-deps dev asan tsan fuzz} "
logs=$repo/build/test-logs
mkdir -p "$logs"

passed=0
failed=0
skipped=0
report=()
total_start=$SECONDS

wanted() { [[ "$phases" == *" $1 "* ]]; }

# note <phase> <started-at> <text>: one line of the closing report.
note() {
  local line
  line=$(printf '%-6s %5ss  %s' "$1" "$((SECONDS - $2))" "$3")
  report+=("$line")
  echo "==> $line"
}

# ctest_phase <phase> <ctest args...>: runs CTest, adds its counts to the totals.
ctest_phase() {
  local phase=$1
  shift
  local log=$logs/ctest-$phase.log rc=0 line total fails
  ctest "$@" -j "$jobs" 2>&1 | tee "$log" || rc=$?
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  if [[ -z "$line" ]]; then
    failed=$((failed + 1))
    CTEST_RESULT="ctest ran no test or crashed (exit $rc), see $log"
    return
  fi
  fails=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
  # CTest counts a skipped test (GTEST_SKIP, e.g. a conformance block not covered) as
  # passed; report it as skipped instead.
  local skips
  skips=$(grep -cE '^[[:space:]]+[0-9]+ - .*\(Skipped\)$' "$log" || true)
  passed=$((passed + total - fails - skips))
  skipped=$((skipped + skips))
  failed=$((failed + fails))
  if ((rc != 0 && fails == 0)); then
    failed=$((failed + 1))  # ctest failed for another reason (e.g. a timeout in discovery)
  fi
  CTEST_RESULT="$((total - fails - skips)) passed, $fails failed, $skips skipped"
}

# build_preset <preset> [targets]: configure + build (all, or only the space-separated
# targets); 0 on success.
build_preset() {
  local preset=$1 log=$logs/build-$1.log targets=()
  [[ -n "${2:-}" ]] && read -r -a targets <<<"$2" && targets=(--target "${targets[@]}")
  if ! cmake --preset "$preset" -DBABELQUEUE_CONFORMANCE_DIR="$conformance" >"$log" 2>&1; then
    tail -n 40 "$log"
    return 1
  fi
  grep -E '^-- (babelqueue| {2}[a-z])' "$log" || true  # the component summary
  if ! cmake --build --preset "$preset" -j "$jobs" "${targets[@]}" >>"$log" 2>&1; then
    grep -E -A 12 'error:|FAILED:|Error' "$log" | head -n 80
    return 1
  fi
}

if [[ ! -f "$conformance/manifest.json" ]]; then
  echo "ERROR: conformance suite not found at $conformance" >&2
  echo "       set BABELQUEUE_SHARED_DIR to the folder that holds conformance/" >&2
  exit 2
fi
echo "test.sh: repo $repo, conformance $conformance, $jobs jobs, phases:$phases"

# -- deps -------------------------------------------------------------------------------
if wanted deps; then
  t=$SECONDS
  if ! bash scripts/install-deps.sh; then
    failed=$((failed + 1))
    note deps "$t" "FAILED to install apt packages"
  fi
  if peer_out=$(bash scripts/setup-python-peer.sh); then
    echo "$peer_out"
    export BABELQUEUE_PEER_PYTHON=${peer_out##*BABELQUEUE_PEER_PYTHON=}
    note deps "$t" "apt packages + Python peer ($BABELQUEUE_PEER_PYTHON)"
  else
    echo "$peer_out"
    failed=$((failed + 1))
    note deps "$t" "FAILED to set up the Python peer (PyPI babelqueue)"
  fi
elif [[ -f build/peer-python.txt && -z "${BABELQUEUE_PEER_PYTHON:-}" ]]; then
  export BABELQUEUE_PEER_PYTHON=$(cat build/peer-python.txt)
fi

# -- services (background) -------------------------------------------------------------
# Started now so that RabbitMQ boots while dev compiles; services_ready waits for them before
# the first CTest run. The EXIT trap stops them whatever happens (failure, Ctrl-C, TERM).
services=${BABELQUEUE_SERVICES-rabbitmq redis}
export BABELQUEUE_SERVICES_DIR=${BABELQUEUE_SERVICES_DIR:-$repo/build/services}
export BABELQUEUE_REQUIRE_SERVICES=1
services_pid=
services_state=none  # none | starting | ready | failed
services_stop() {
  if [[ -n "$services_pid" ]] && kill -0 "$services_pid" 2>/dev/null; then
    kill "$services_pid" 2>/dev/null || true
    wait "$services_pid" 2>/dev/null || true
  fi
  services_pid=
  if [[ $services_state != none ]]; then
    bash scripts/services.sh stop >>"$logs/services.log" 2>&1 || true
    services_state=none
  fi
}
trap services_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [[ -n "$services" ]] && { wanted dev || wanted asan || wanted tsan; }; then
  services_started_at=$SECONDS
  bash scripts/services.sh start $services >"$logs/services.log" 2>&1 &
  services_pid=$!
  services_state=starting
fi

# services_ready: waits (once) for the background start, then exports what it wrote.
services_ready() {
  [[ $services_state == starting ]] || return 0
  local t=$SECONDS rc=0
  wait "$services_pid" || rc=$?
  services_pid=
  cat "$logs/services.log"
  if ((rc == 0)); then
    services_state=ready
    note services "$services_started_at" \
      "$services ready (waited $((SECONDS - t)) s after the build)"
  else
    services_state=failed
    failed=$((failed + 1))
    note services "$services_started_at" \
      "FAILED to start $services (exit $rc, see $logs/services.log); tests needing them will fail"
  fi
  if [[ -f "$BABELQUEUE_SERVICES_DIR/services.env" ]]; then
    # shellcheck disable=SC1091
    source "$BABELQUEUE_SERVICES_DIR/services.env"
  fi
}

# preset_phase <preset> [targets]: build the preset (all, or only the space-separated
# targets), run its CTest test preset, report the phase.
preset_phase() {
  local t=$SECONDS
  if build_preset "$1" "${2:-}"; then
    services_ready
    ctest_phase "$1" --preset "$1"
    note "$1" "$t" "$CTEST_RESULT"
  else
    failed=$((failed + 1))
    note "$1" "$t" "BUILD FAILED (see $logs/build-$1.log)"
  fi
}

# -- dev, asan ---------------------------------------------------------------------------
wanted dev && preset_phase dev
wanted asan && preset_phase asan

# -- tsan -------------------------------------------------------------------------------
if wanted tsan; then
  t=$SECONDS
  runtime_tests=0
  # Keep in step with the tsan test preset's filter (CMakePresets.json).
  tsan_labels='^(runtime|sqlite|redis|rabbitmq)$'
  tsan_excluded='^(interop|install|bench)$'
  if [[ -f build/dev/CTestTestfile.cmake ]]; then
    runtime_tests=$(ctest --test-dir build/dev -N -L "$tsan_labels" -LE "$tsan_excluded" 2>/dev/null |
      sed -nE 's/^Total Tests: ([0-9]+)/\1/p')
    runtime_tests=${runtime_tests:-0}
  fi
  if ((runtime_tests == 0)); then
    note tsan "$t" "skipped: no test carries a label matching $tsan_labels"
  else
    preset_phase tsan "$(ctest --test-dir build/dev --show-only=json-v1 |
                         python3 scripts/ctest-targets.py "$tsan_labels" build/dev \
                           --exclude "$tsan_excluded")"
  fi
fi

services_stop  # the fuzz phase needs no server

# -- fuzz -------------------------------------------------------------------------------
if wanted fuzz; then
  t=$SECONDS
  rc=0
  BABELQUEUE_SHARED_DIR=$shared bash scripts/fuzz.sh "$fuzz_seconds" 2>&1 |
    tee "$logs/fuzz.log" || rc=$?
  line=$(grep -E '^fuzz targets: [0-9]+ ok, [0-9]+ crashed' "$logs/fuzz.log" | tail -n 1 || true)
  if [[ -n "$line" ]]; then
    ok=$(sed -E 's/^fuzz targets: ([0-9]+) ok.*/\1/' <<<"$line")
    bad=$(sed -E 's/.* ([0-9]+) crashed.*/\1/' <<<"$line")
    passed=$((passed + ok))
    failed=$((failed + bad))
    note fuzz "$t" "fuzz.sh ${fuzz_seconds} (seconds per target x its share): $ok ok, $bad crashed"
  else
    failed=$((failed + 1))
    note fuzz "$t" "BUILD FAILED or fuzz.sh broke (exit $rc, see $logs/fuzz.log)"
  fi
fi

echo
echo "== summary (elapsed per phase) =="
printf '%s\n' "${report[@]}"
echo "total  $((SECONDS - total_start))s"
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
