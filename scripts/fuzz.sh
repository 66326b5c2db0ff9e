#!/usr/bin/env bash
# Builds the `fuzz` preset (clang-14, libFuzzer + ASan + UBSan) and runs every fuzz target for
# a bounded time over a temporary copy of fuzz/corpus/, plus the conformance fixtures read in
# place. A crash leaves its reproducer in build/fuzz-artifacts/<target>/ and fails the script.
#
#   bash scripts/fuzz.sh [seconds-per-target]      (default 60)
#
# Environment: BABELQUEUE_SHARED_DIR (default <repo>/../shared), BABELQUEUE_JOBS (nproc).
# Last line: `fuzz targets: N ok, N crashed`; exit status is the number of crashed targets.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shared=${BABELQUEUE_SHARED_DIR:-$repo/../shared}
fixtures=$shared/conformance/fixtures
jobs=${BABELQUEUE_JOBS:-$(nproc)}
targets=(decode canonicalize)
cd "$repo"

cmake --preset fuzz -DBABELQUEUE_CONFORMANCE_DIR="$shared/conformance" >/dev/null
cmake --build --preset fuzz -j "$jobs"

seeds=()
if [[ -d "$fixtures" ]]; then
  seeds+=("$fixtures")
else
  echo "fuzz: warning: no conformance fixtures at $fixtures; using fuzz/corpus only" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/babelqueue-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

ok=0
crashed=0
for target in "${targets[@]}"; do
  exe=$repo/build/fuzz/fuzz/babelqueue_fuzz_$target
  mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
  cp "$repo"/fuzz/corpus/* "$work/$target/corpus/"
  echo "fuzz: $target for ${seconds}s"
  rc=0
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -dict="$repo/fuzz/json.dict" -artifact_prefix="$work/$target/artifacts/" \
    -print_final_stats=1 "$work/$target/corpus" "${seeds[@]}" >"$work/$target/log" 2>&1 || rc=$?
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|Done )" "$work/$target/log" || true
  if ((rc == 0)); then
    echo "fuzz: $target ok ($(ls "$work/$target/corpus" | wc -l) corpus entries)"
    ok=$((ok + 1))
  else
    crashed=$((crashed + 1))
    keep=$repo/build/fuzz-artifacts/$target
    mkdir -p "$keep"
    cp -r "$work/$target/artifacts/." "$keep/" 2>/dev/null || true
    cp "$work/$target/log" "$keep/fuzz.log"
    echo "fuzz: $target FAILED (exit $rc); log and reproducer kept in $keep" >&2
    tail -n 60 "$work/$target/log" >&2
  fi
done

echo "fuzz targets: $ok ok, $crashed crashed"
exit "$crashed"
