#!/usr/bin/env bash
# Runs every test of babelqueue-cpp on a fresh Debian bookworm machine (this is what
# .ci/run runs):
#   deps     apt packages (scripts/install-deps.sh) and the Python peer venv
#   lint     clang-format --dry-run -Werror over every C++ file of the repository (right after
#            deps), and clang-tidy (scripts/tidy.sh --changed) over the .cpp files changed since
#            the base commit in .ci/lint-base (after vendor, on the dev preset's compile
#            database); each of the two counts as one test
#   vendor   (with any build phase) the Pulsar C++ client and opentelemetry-cpp, each built
#            once into a cached prefix by scripts/vendor.sh
#   dev      `dev` preset (Debug, -Werror): build + every CTest test (unit, conformance,
#            install-tree consumers, fuzz-corpus replay, interop, live brokers, ...)
#   asan     `asan` preset (ASan+UBSan, clang-14): builds and runs every test except labels
#            interop, install, bench, cli, examples, live (the asan test preset's filter);
#            the same tree also builds the libFuzzer targets, for the fuzz phase
#   tsan     `tsan` preset: the tests of code that runs threads or is shared across them —
#            labels runtime, rabbitmq, artemis, asb, pulsar, idempotency, outbox (the tsan test
#            preset's filter;
#            interop/install/bench/cli/no-tsan excluded; why these, see below)
#   fuzz     bounded libFuzzer run of each target (scripts/fuzz.sh on the asan tree: no build
#            of its own; it builds the asan tree's fuzzers only when asan is not a phase)
# Each phase's build starts (nice) while the previous phase's tests run; see below.
# The test servers (scripts/services.sh: RabbitMQ, Redis, Kafka, Artemis, ElasticMQ for SQS,
# Pulsar, PostgreSQL) start in the background right after deps, while the vendored Pulsar
# client and dev compile; every CTest phase waits for
# them and sees their BABELQUEUE_* variables (build/services/services.env); they are stopped
# on every exit path.
# BABELQUEUE_REQUIRE_SERVICES=1 is exported: a test whose server URL is missing fails.
# Ends with the line `N passed, N failed, N skipped` (all CTest tests of all phases plus one per fuzz
# target and one per lint check; a configure/build failure counts as one failure) and exits
# non-zero on any failure.
#
# Environment:
#   BABELQUEUE_SHARED_DIR   the shared folder holding conformance/ (default <repo>/../shared)
#   BABELQUEUE_JOBS         build and test parallelism (default nproc)
#   BABELQUEUE_FUZZ_SECONDS seconds per fuzz target (default 60)
#   BABELQUEUE_PHASES       phases to run (default "deps lint dev asan tsan fuzz")
#   BABELQUEUE_LINT_BASE    the base commit of lint's tidy check (default: .ci/lint-base)
#   BABELQUEUE_SERVICES     test servers to start (default "rabbitmq redis redis-cluster kafka
#                           artemis sqs pulsar postgres";
#                           "" for none)
#   BABELQUEUE_SERVICES_DIR their run directory (default <repo>/build/services)
#   BABELQUEUE_UNITY_BUILD  ON (default) or OFF: unity batches in the three trees
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
shared=${BABELQUEUE_SHARED_DIR:-$repo/../shared}
shared=$(cd "$shared" 2>/dev/null && pwd || echo "$shared")
conformance=$shared/conformance
jobs=${BABELQUEUE_JOBS:-$(nproc)}
fuzz_seconds=${BABELQUEUE_FUZZ_SECONDS:-60}
phases=" ${BABELQUEUE_PHASES:-deps lint dev asan tsan fuzz} "
logs=$repo/build/test-logs
mkdir -p "$logs"

passed=0
failed=0
skipped=0
report=()
failed_tests=()
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
  # CI shows only the output's tail: keep the failed tests' names (and why) for the summary.
  local name
  while read -r name; do
    failed_tests+=("$phase: $name")
  done < <(sed -n '/^The following tests FAILED:/,/^$/p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' |
    sed -E 's/^[[:space:]]+//')
}

# CI's trees are built in unity batches (BABELQUEUE_UNITY_BUILD, on top of the precompiled
# headers every tree has; cmake/BabelqueuePrecompiledHeaders.cmake says why and what it
# saves). Developers' trees of the same presets are not: an edit there rebuilds one source.
# The tidy check still compiles every changed source on its own (scripts/tidy.sh).
ci_tree_flags=(-DBABELQUEUE_UNITY_BUILD=${BABELQUEUE_UNITY_BUILD:-ON})

# build_preset <preset> [targets] [cmake -D...]: configure + build (all, or only the
# space-separated targets); 0 on success.
build_preset() {
  local preset=$1 log=$logs/build-$1.log targets=()
  [[ -n "${2:-}" ]] && read -r -a targets <<<"$2" && targets=(--target "${targets[@]}")
  shift $(($# < 2 ? $# : 2))
  if ! cmake --preset "$preset" -DBABELQUEUE_CONFORMANCE_DIR="$conformance" "${ci_tree_flags[@]}" \
    "$@" >"$log" 2>&1; then
    tail -n 40 "$log"
    return 1
  fi
  grep -E '^-- (babelqueue| {2}[a-z])' "$log" || true  # the component summary
  if ! cmake --build --preset "$preset" -j "$jobs" "${targets[@]}" >>"$log" 2>&1; then
    grep -E -A 12 'error:|FAILED:|Error' "$log" | head -n 80
    return 1
  fi
}

# lint_check <name> <started-at> <log> <command...>: one lint check, counted as one test.
lint_check() {
  local name=$1 t=$2 log=$3 rc=0 last
  shift 3
  "$@" >"$log" 2>&1 || rc=$?
  last=$(tail -n 1 "$log")
  last=${last#tidy: }
  if ((rc == 0)); then
    passed=$((passed + 1))
    note lint "$t" "$name: $last"
  else
    head -n 40 "$log"
    failed=$((failed + 1))
    failed_tests+=("lint: $name ($last)")
    note lint "$t" "$name FAILED: $last (see $log)"
  fi
}

# format_check: clang-format --dry-run -Werror over the repository's C++ files (.clang-format);
# the last line counts the files that fail and says how to fix them.
format_check() {
  local bad=() total
  command -v clang-format >/dev/null || { echo "clang-format is not installed (deps phase)"; return 1; }
  git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: no file list"; return 1; }
  total=$(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cc' | wc -l)
  # The failing files' names, one a line; each batch prints its own at once, so that parallel
  # batches cannot interleave their lines.
  mapfile -t bad < <(git ls-files -z -- '*.cpp' '*.hpp' '*.h' '*.cc' |
    xargs -0 -P "$jobs" -n 50 sh -c 'clang-format --dry-run -Werror "$@" 2>&1 |
      sed -nE "s/^([^:]+):[0-9]+:[0-9]+: error: .*/\1/p" | sort -u' sh || echo "xargs: exit $?")
  if ((${#bad[@]} == 0)); then
    echo "$total C++ files clang-formatted"
    return 0
  fi
  for f in "${bad[@]:0:3}"; do
    clang-format --dry-run -Werror "$f" 2>&1 | head -n 6 || true
  done
  printf '  %s\n' "${bad[@]:0:30}"
  echo "${#bad[@]} of $total C++ files are not clang-formatted (fix: git ls-files -z --" \
    "'*.cpp' '*.hpp' '*.h' '*.cc' | xargs -0 clang-format -i)"
  return 1
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

# -- lint (format) ----------------------------------------------------------------------
# Seconds, and it needs nothing built: first, so that a formatting slip shows at once.
if wanted lint; then
  lint_check clang-format "$SECONDS" "$logs/lint-format.log" format_check
fi

# -- services (background) -------------------------------------------------------------
# Started now so that RabbitMQ, Kafka, Artemis and ElasticMQ boot while dev compiles (the Kafka
# and ElasticMQ jars and the Artemis distribution are downloaded on the first run, into a cache
# kept across runs, ~/.cache/babelqueue);
# services_ready waits for them before the first CTest run. The EXIT trap stops them
# whatever happens (failure, Ctrl-C, TERM).
services=${BABELQUEUE_SERVICES-rabbitmq redis redis-cluster kafka artemis sqs pulsar postgres}
export BABELQUEUE_SERVICES_DIR=${BABELQUEUE_SERVICES_DIR:-$repo/build/services}
export BABELQUEUE_REQUIRE_SERVICES=1
services_pid=
services_state=none  # none | starting | ready | failed
services_stop() {
  # A start still running is stopped with its whole process group (its own, see below): the
  # Maven download or the kafka-storage format it may be waiting for ends with it; the
  # servers it launched run in their own sessions and are stopped by `services.sh stop`.
  if [[ -n "$services_pid" ]] && kill -0 "$services_pid" 2>/dev/null; then
    kill -TERM -- "-$services_pid" 2>/dev/null || kill "$services_pid" 2>/dev/null || true
    wait "$services_pid" 2>/dev/null || true
  fi
  services_pid=
  if [[ $services_state != none ]]; then
    bash scripts/services.sh stop >>"$logs/services.log" 2>&1 || true
    services_state=none
  fi
}
# A background build (see build_start) is stopped too.
build_pid=
build_abort() {
  if [[ -n $build_pid ]]; then
    kill -TERM -- "-$build_pid" 2>/dev/null || true
    wait "$build_pid" 2>/dev/null || true
    build_pid=
  fi
}
trap 'build_abort; services_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [[ -n "$services" ]] && { wanted dev || wanted asan || wanted tsan; }; then
  services_started_at=$SECONDS
  set -m
  bash scripts/services.sh start $services >"$logs/services.log" 2>&1 &
  services_pid=$!
  set +m
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

# -- vendored libraries -----------------------------------------------------------------
# Debian has neither the Pulsar C++ client nor opentelemetry-cpp: scripts/vendor.sh builds
# each from <shared>/vendor into a cached prefix once (Pulsar about 5 min, opentelemetry-cpp
# about 4-6 min on 2 cores; reused while the archive and recipe are unchanged), here, while
# the services boot. Every phase finds them through CMAKE_PREFIX_PATH (the environment
# variable CMake reads), install-tree consumers included. If one fails, its component is
# simply not built (AUTO) and the failure is counted.
# vendor_prefix <name> <VARIABLE> <what>: builds one, prepends its prefix to CMAKE_PREFIX_PATH.
vendor_prefix() {
  local name=$1 variable=$2 what=$3 t=$SECONDS out prefix
  if out=$(BABELQUEUE_SHARED_DIR=$shared bash scripts/vendor.sh "$name" 2>"$logs/vendor-$name.log"); then
    prefix=${out##*"$variable"=}
    export CMAKE_PREFIX_PATH=$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
    note vendor "$t" "$what in $prefix"
  else
    cat "$logs/vendor-$name.log"
    failed=$((failed + 1))
    note vendor "$t" "FAILED to build $what (see $logs/vendor-$name.log)"
  fi
}
if wanted dev || wanted asan || wanted tsan || wanted fuzz; then
  vendor_prefix pulsar BABELQUEUE_PULSAR_PREFIX "the Pulsar C++ client"
  vendor_prefix otel BABELQUEUE_OTEL_PREFIX "opentelemetry-cpp"
fi

# -- lint (tidy) ------------------------------------------------------------------------
# After vendor, so that the dev preset's compile database (tidy.sh configures its own, in
# build/tidy, one entry per source) has the Pulsar and OpenTelemetry components too. Before dev's
# build: clang-tidy and the compiler would fight over the same cores. Its cost is about
# 30 s per changed file on 2 cores (tidy.sh --changed says which files and why).
if wanted lint; then
  lint_check clang-tidy "$SECONDS" "$logs/lint-tidy.log" \
    env BABELQUEUE_JOBS="$jobs" BABELQUEUE_SHARED_DIR="$shared" bash scripts/tidy.sh --changed
fi

# -- dev, asan, tsan, fuzz ------------------------------------------------------------------
# Each phase builds its tree, then runs its tests. A phase's tests mostly wait (on servers,
# timeouts, the Python peer), so while they run the NEXT phase's build starts in the
# background at low priority (nice 10): the cores compile while tests sleep, and the tests
# keep priority. Only one build runs at a time. The fuzz phase has nothing to build (asan
# built its fuzzers) and comes last: libFuzzer keeps both cores busy for its whole budget,
# so it runs alone, after tsan's tests, with the servers stopped.
#
# The sanitizer trees build only the test executables their tests need (ctest-targets.py
# on the dev tree's test list), selected by the filters of the test presets, read from
# CMakePresets.json (preset_filter below): the one place to change them.
#   asan: every test except the labels below: install trees, benchmarks, the CLI suites,
#         the examples, the cross-SDK interop suites (they repeat dev coverage) and the live
#         broker suites (label live; each transport's unit tests stay), and by name the three
#         SentinelFailover tests: each kills a primary of its own Sentinel group and times the
#         failover, which ASan's slowdown made fail once (sentinel_test.cpp:601, the restarted
#         old primary still a master; dev runs them). It is compiled with
#         clang-14 (BABELQUEUE_ASAN_CXX): ASan+UBSan compile about a third faster than with
#         GCC, which builds every test in dev and the tsan tree. Warnings are not errors
#         there: -Werror is dev's job (GCC), and clang's -Wshadow also flags names that
#         shadow std:: names brought in by using-directives.
#         When the fuzz phase runs, this tree also builds the libFuzzer targets
#         (babelqueue_fuzzers, BABELQUEUE_BUILD_FUZZ=ON): its libraries are compiled with
#         -fsanitize=fuzzer-no-link as well (coverage for libFuzzer; the tests do not use it,
#         and ASan's runtime supplies the no-op callbacks), which spares CI a separate fuzz
#         tree, i.e. a second ASan compile of every library. The tree stays at -O0 (Debug),
#         fuzzers included. Measured on a 2-core machine: clang's ASan at -O1 costs about 70%
#         (libraries) to 90% (tests) more compile time than at -O0, so the whole tree at -O1
#         would cost more than the fuzz tree it replaces, and -O1 for the libraries and
#         fuzzers only would eat about half of the saving; the -O0 fuzzers run 1.5-9x (median
#         6x) fewer executions per second, the price of CI's short smoke run of each target.
#         Long runs: the fuzz preset (-O1), `bash scripts/fuzz.sh`.
#   tsan: the tests of code that runs threads of its own or is shared across threads; what
#         ThreadSanitizer sees is this project's code (the C client libraries and servers are
#         not instrumented), so a transport whose instances are single-threaded and share
#         nothing gains nothing from it (dev and asan still run its tests). Labels in:
#           runtime   the App's worker threads (one transport per worker), its publisher
#                     shared under a mutex, logging and metrics shared by all workers; the
#                     in-memory broker all workers share (the memory tests carry this label)
#           rabbitmq  every connection runs a heartbeat keeper thread beside its user
#                     (src/rabbitmq/connection.cpp)
#           artemis, asb  the AMQP 1.0 client (src/amqp10/client_impl.hpp) runs a keeper thread
#                     that pumps the connection between the caller's calls (one mutex)
#           pulsar    the Pulsar client library runs threads of its own (I/O, listeners) and
#                     the transport shares a log sink and counters across instances; its
#                     unit tests (clients opened and closed) run here, the suites that talk to
#                     the broker carry no-tsan (tests/pulsar/CMakeLists.txt says why). A label
#                     that matches no test selects nothing (verified: `ctest -N -L` gives 0)
#           idempotency, outbox  the stores are shared by every consume() worker (a mutex
#                     per store; claims raced from several threads and stores) and two relays
#                     run at once on one PostgreSQL table
#         Out, single-threaded by design (an instance is used by one thread; no thread of
#         its own; nothing mutable shared between instances):
#           sqlite    one sqlite3 connection per instance; SQLite's file locks serialise them
#           redis     one hiredis connection per instance; its one static, the TLS
#                     BIO_METHOD, is built once (a function-local static) and never changed
#           sqs       one curl handle per instance; curl_global_init runs under call_once
#           kafka     librdkafka's threads are its own and GCC 12's TSan cannot run them (its
#                     C11 thrd_create threads are not intercepted; TSan then crashes inside
#                     them), so the suites that start clients carry label no-tsan; what the
#                     label kept, kafka_unit_tests, is single-threaded parsing
#         Label no-tsan stays excluded for that reason.
# preset_filter <test preset> <include|exclude> <label|name>: that regular expression of the
# test preset's filter in CMakePresets.json (following `inherits`), "" when it has none.
preset_filter() {
  python3 - "$repo/CMakePresets.json" "$@" <<'PY'
import json, sys
path, name, kind, key = sys.argv[1:5]
presets = {p["name"]: p for p in json.load(open(path)).get("testPresets", [])}
todo = [name]
while todo:
    p = presets[todo.pop(0)]
    value = p.get("filter", {}).get(kind, {}).get(key)
    if value is not None:
        print(value)
        break
    inherits = p.get("inherits", [])
    todo += [inherits] if isinstance(inherits, str) else inherits
PY
}
asan_excluded=$(preset_filter asan exclude label)
asan_excluded_names=$(preset_filter asan exclude name)
asan_cxx=${BABELQUEUE_ASAN_CXX:-clang++-14}
tsan_labels=$(preset_filter tsan include label)
tsan_excluded=$(preset_filter tsan exclude label)
tsan_excluded_names=$(preset_filter tsan exclude name)

# phase_targets <label-regex> <excluded-regex> [<excluded-name-regex>]: the targets whose
# executables run those tests of the dev tree ("" when there is no dev tree: build
# everything).
phase_targets() {
  [[ -f build/dev/CTestTestfile.cmake ]] || return 0
  ctest --test-dir build/dev --show-only=json-v1 |
    python3 scripts/ctest-targets.py "$1" build/dev --exclude "$2" --exclude-name "${3:-}"
}

declare -A build_started build_result skip_why
build_phase=

# asan_extra: the cache variables of CI's asan tree (see above); with the fuzz phase, the
# fuzzers too (ON, not the preset's AUTO: a non-clang BABELQUEUE_ASAN_CXX fails loudly).
asan_extra=(-DCMAKE_CXX_COMPILER="$asan_cxx" -DBABELQUEUE_WARNINGS_AS_ERRORS=OFF)
wanted fuzz && asan_extra+=(-DBABELQUEUE_BUILD_FUZZ=ON)

# preset_of <phase>: the preset (and build tree) a phase builds; the fuzz phase uses asan's.
preset_of() { if [[ $1 == fuzz ]]; then echo asan; else echo "$1"; fi; }

# build_start <phase> [nice]: starts the phase's build in the background (its own process
# group, so that an exit can stop it); build_wait collects it.
build_start() {
  local phase=$1 prio=${2:-} targets="" extra=() n
  build_started[$phase]=$SECONDS
  case $phase in
    asan)
      targets=$(phase_targets '.*' "$asan_excluded" "$asan_excluded_names")
      # An empty list builds everything, the fuzzers included.
      [[ -n $targets ]] && wanted fuzz && targets+=" babelqueue_fuzzers"
      extra=("${asan_extra[@]}")
      ;;
    tsan)
      n=0
      if [[ -f build/dev/CTestTestfile.cmake ]]; then
        n=$(ctest --test-dir build/dev -N -L "$tsan_labels" -LE "$tsan_excluded" \
          ${tsan_excluded_names:+-E "$tsan_excluded_names"} 2>/dev/null |
          sed -nE 's/^Total Tests: ([0-9]+)/\1/p')
      fi
      if ((${n:-0} == 0)); then
        build_result[$phase]="skip"
        skip_why[$phase]="no test carries a label matching $tsan_labels"
        return
      fi
      targets=$(phase_targets "$tsan_labels" "$tsan_excluded" "$tsan_excluded_names")
      ;;
    fuzz)
      # The asan phase of this run built the fuzzers (or failed to): nothing to build.
      if [[ -n ${build_result[asan]:-} ]]; then
        build_result[$phase]="reuse"
        return
      fi
      # No asan phase: build the asan tree's fuzzers (and the libraries they link) only.
      targets=babelqueue_fuzzers
      extra=("${asan_extra[@]}")
      ;;
  esac
  set -m
  (
    [[ -n $prio ]] && renice -n 10 -p "$BASHPID" >/dev/null
    TIMEFORMAT='%0R %0U %0S'
    { time build_preset "$(preset_of "$phase")" "$targets" "${extra[@]}" 2>&1; } \
      2>"$logs/build-$phase.time"
  ) >"$logs/build-$phase.out" 2>&1 &
  build_pid=$!
  set +m
  build_phase=$phase
}

# build_wait <phase>: waits for the phase's build (starting it first if needed); sets
# build_result[phase] to ok, failed, skip (skip_why[phase] says why) or reuse (the fuzz phase on the
# tree asan built) and BUILD_NOTE to its times.
build_wait() {
  local phase=$1 rc=0 wall user sys
  [[ $build_phase == "$phase" || -n "${build_result[$phase]:-}" ]] || build_start "$phase"
  case ${build_result[$phase]:-} in
    skip) return 0 ;;
    reuse)
      build_started[$phase]=$SECONDS  # its time is its own run, not the wait before it
      if [[ ${build_result[asan]} != ok ]]; then
        build_result[$phase]=skip
        skip_why[$phase]="the asan tree, which builds the fuzzers, did not build (see asan)"
      fi
      BUILD_NOTE="no build (fuzzers built in the asan tree)"
      return 0
      ;;
  esac
  wait "$build_pid" || rc=$?
  build_pid=
  build_phase=
  cat "$logs/build-$phase.out"
  read -r wall user sys <"$logs/build-$phase.time" || true
  BUILD_NOTE="build ${wall:-?}s (${user:-?}+${sys:-?} CPU-s)"
  build_result[$phase]=ok
  ((rc == 0)) || build_result[$phase]=failed
}

ordered=()
for phase in dev asan tsan fuzz; do
  wanted "$phase" && ordered+=("$phase")
done
for ((i = 0; i < ${#ordered[@]}; i++)); do
  phase=${ordered[i]}
  next=${ordered[i + 1]:-}
  [[ $phase == fuzz ]] && services_stop  # the fuzz phase needs no server
  build_wait "$phase"
  t=${build_started[$phase]}
  [[ -n $next ]] && build_start "$next" nice  # overlaps this phase's tests

  case ${build_result[$phase]} in
    skip)
      note "$phase" "$t" "skipped: ${skip_why[$phase]}"
      continue
      ;;
    failed)
      failed=$((failed + 1))
      note "$phase" "$t" "BUILD FAILED (see $logs/build-$(preset_of "$phase").log)"
      continue
      ;;
  esac
  if [[ $phase != fuzz ]]; then
    services_ready
    tests_started=$SECONDS
    rm -f "build/$phase/crash_matrix.md"  # its cases append one row each
    ctest_phase "$phase" --preset "$phase"
    # The transport contract suite's case x transport table (tests/transport_contract/).
    if [[ -f build/$phase/transport_contract_table.md ]]; then
      echo "== $phase: transport contract, case x transport =="
      cat "build/$phase/transport_contract_table.md"
    fi
    # The crash-and-restart matrix's rows (tests/crash_matrix/).
    if [[ -f build/$phase/crash_matrix.md ]]; then
      echo "== $phase: crash-and-restart matrix =="
      cat "build/$phase/crash_matrix.md"
    fi
    note "$phase" "$t" "$BUILD_NOTE, tests $((SECONDS - tests_started))s: $CTEST_RESULT"
    continue
  fi

  # fuzz: the asan tree holds the fuzzers; fuzz.sh re-runs their (no-op) build and fuzzes
  # each target.
  rc=0
  fuzz_started=$SECONDS
  BABELQUEUE_FUZZ_TREE=$repo/build/asan BABELQUEUE_SHARED_DIR=$shared \
    bash scripts/fuzz.sh "$fuzz_seconds" 2>&1 | tee "$logs/fuzz.log" || rc=$?
  line=$(grep -E '^fuzz targets: [0-9]+ ok, [0-9]+ crashed' "$logs/fuzz.log" | tail -n 1 || true)
  if [[ -n "$line" ]]; then
    ok=$(sed -E 's/^fuzz targets: ([0-9]+) ok.*/\1/' <<<"$line")
    bad=$(sed -E 's/.* ([0-9]+) crashed.*/\1/' <<<"$line")
    passed=$((passed + ok))
    failed=$((failed + bad))
    note fuzz "$t" "$BUILD_NOTE, fuzzing $((SECONDS - fuzz_started))s: fuzz.sh ${fuzz_seconds} (seconds per target x its share): $ok ok, $bad crashed"
  else
    failed=$((failed + 1))
    note fuzz "$t" "fuzz.sh broke (exit $rc, see $logs/fuzz.log)"
  fi
done
services_stop

if ((${#failed_tests[@]} > 0)) && compgen -G "$logs/ctest-*.log" >/dev/null; then
  echo
  echo "== first failed assertions (whole output: build/test-logs/ctest-<phase>.log) =="
  grep -h -A 5 -E ': Failure$|Exception thrown|\*\*\*Timeout|\*\*\*Exception' "$logs"/ctest-*.log |
    head -n 80 || true
fi

echo
echo "== summary (elapsed per phase) =="
printf '%s\n' "${report[@]}"
echo "total  $((SECONDS - total_start))s"
if ((${#failed_tests[@]} > 0)); then
  echo "failed tests (their output: build/test-logs/ctest-<phase>.log, lint-*.log):"
  printf '  %s\n' "${failed_tests[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
