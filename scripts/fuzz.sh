#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, libFuzzer + ASan + UBSan) and runs every fuzz target
# for a bounded time. A crash leaves its reproducer in build/fuzz-artifacts/<target>/ and
# fails the script.
#
#   bash scripts/fuzz.sh [seconds]      (default 60)
#
# Which tree: by default the `fuzz` preset (build/fuzz: the libraries and the fuzzers only),
# configured and built here. BABELQUEUE_FUZZ_TREE=<build dir> uses an existing tree that
# builds them instead, e.g. a clang asan tree (`cmake --preset asan
# -DCMAKE_CXX_COMPILER=clang++-14`: its BABELQUEUE_BUILD_FUZZ=AUTO adds the fuzzers); only the
# target babelqueue_fuzzers is (re)built there. scripts/test.sh's fuzz phase does that with
# build/asan, so CI compiles no tree of its own for fuzzing. That tree is -O0 (Debug); the
# fuzz preset is -O1, whose fuzzers run 1.5-9x (median 6x) more executions per second
# (measured per target), so prefer it for long runs.
#
# The targets are not listed here: fuzz/replay.cmake holds the one table (targets, the
# components they need, seed directories, dictionaries, time shares) and the build writes
# <tree>/fuzz/fuzz-targets.tsv, which this script reads. A target whose component is not
# built is absent from it.
#
# Time budget: each target runs `seconds x share / 100` (at least 1 s). The shares are in
# fuzz/replay.cmake, beside each target: 100 for decode and canonicalize (the envelope codec
# and the JSON canonicalizer, the widest input spaces), 25 to 50 for the others.
# Targets run BABELQUEUE_JOBS at a time (each libFuzzer process is single-threaded),
# longest budget first, so on 2 cores `fuzz.sh 60` takes about 3.5 min (60 + 5 x 30 s);
# every target still gets its full time on a core of its own.
#
# Seeds: libFuzzer writes new inputs into a temporary directory per target and reads the
# target's seed directories in place (fuzz/corpus/ for the JSON targets plus the conformance
# fixtures, fuzz/corpus-<target>/ for the others, fuzz/regressions/<target>/ when present).
# Dictionaries listed for a target are concatenated.
#
# Environment: BABELQUEUE_SHARED_DIR (default <repo>/../shared), BABELQUEUE_JOBS (nproc),
# BABELQUEUE_FUZZ_TREE (default: the fuzz preset's build/fuzz, see above).
# Last line: `fuzz targets: N ok, N crashed`; exit status is the number of crashed targets.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shared=${BABELQUEUE_SHARED_DIR:-$repo/../shared}
fixtures=$shared/conformance/fixtures
jobs=${BABELQUEUE_JOBS:-$(nproc)}
tree=${BABELQUEUE_FUZZ_TREE:-}  # relative to the caller's directory
[[ -n "$tree" && -d "$tree" ]] && tree=$(cd "$tree" && pwd)
cd "$repo"

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "usage: bash scripts/fuzz.sh [seconds]   (a whole number >= 1)" >&2
  exit 2
fi

if [[ -z "$tree" ]]; then
  tree=$repo/build/fuzz
  cmake --preset fuzz -DBABELQUEUE_CONFORMANCE_DIR="$shared/conformance" >/dev/null
  cmake --build --preset fuzz -j "$jobs"
else
  if [[ ! -f "$tree/CMakeCache.txt" ]]; then
    echo "fuzz: BABELQUEUE_FUZZ_TREE=$tree is not a configured build tree" >&2
    echo "fuzz targets: 0 ok, 1 crashed"
    exit 1
  fi
  if [[ ! -f "$tree/fuzz/fuzz-targets.tsv" ]]; then
    echo "fuzz: $tree builds no fuzz targets (it needs clang and ASan; see BABELQUEUE_BUILD_FUZZ" \
      "in its configure summary)" >&2
    echo "fuzz targets: 0 ok, 1 crashed"
    exit 1
  fi
  cmake --build "$tree" -j "$jobs" --target babelqueue_fuzzers
fi
manifest=$tree/fuzz/fuzz-targets.tsv

if [[ ! -d "$fixtures" ]]; then
  echo "fuzz: warning: no conformance fixtures at $fixtures; using fuzz/ seeds only" >&2
fi

# The manifest: `target <name> <exe> <share>`, `seed <name> <dir>`, `dict <name> <file>`.
targets=()
declare -A exe share seeds dicts
while IFS=$'\t' read -r kind name value extra; do
  case $kind in
    target)
      targets+=("$name")
      exe[$name]=$value
      share[$name]=$extra
      ;;
    seed) seeds[$name]+="$value"$'\n' ;;
    dict) dicts[$name]+="$value"$'\n' ;;
  esac
done <"$manifest"
if ((${#targets[@]} == 0)); then
  echo "fuzz: no targets in $manifest" >&2
  echo "fuzz targets: 0 ok, 1 crashed"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/babelqueue-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fuzz_one <target>: one bounded libFuzzer run in $work/<target>/ (log, new corpus,
# artifacts); its exit status is libFuzzer's.
fuzz_one() {
  local target=$1 dir=$work/$1 seed dict budget seed_dirs=() dict_arg=()
  mkdir -p "$dir/corpus" "$dir/artifacts"
  while IFS= read -r seed; do
    [[ -n "$seed" && -d "$seed" ]] && seed_dirs+=("$seed")
  done <<<"${seeds[$target]:-}"
  : >"$dir/dict"
  while IFS= read -r dict; do
    [[ -n "$dict" ]] && cat "$dict" >>"$dir/dict"
  done <<<"${dicts[$target]:-}"
  [[ -s "$dir/dict" ]] && dict_arg=("-dict=$dir/dict")
  budget=$(budget_of "$target")
  echo "fuzz: $target for ${budget}s (seeds: ${seed_dirs[*]:-none})"
  "${exe[$target]}" -max_total_time="$budget" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    "${dict_arg[@]}" -artifact_prefix="$dir/artifacts/" -print_final_stats=1 \
    "$dir/corpus" "${seed_dirs[@]}" >"$dir/log" 2>&1
}

budget_of() {
  local budget=$((seconds * ${share[$1]} / 100))
  ((budget >= 1)) || budget=1
  echo "$budget"
}

# Longest budget first, then $jobs at a time.
mapfile -t order < <(for target in "${targets[@]}"; do
  echo "$(budget_of "$target") $target"
done | sort -s -k1,1nr | cut -d' ' -f2)
for target in "${order[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do
    wait -n || true
  done
  (
    rc=0
    fuzz_one "$target" || rc=$?
    echo "$rc" >"$work/$target.rc"
  ) &
done
wait

ok=0
crashed=0
for target in "${targets[@]}"; do
  dir=$work/$target
  rc=$(cat "$work/$target.rc" 2>/dev/null || echo 1)
  echo "fuzz: $target ($(budget_of "$target")s):"
  grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|Done )" \
    "$dir/log" || true
  if ((rc == 0)); then
    echo "fuzz: $target ok ($(ls "$dir/corpus" | wc -l) new corpus entries)"
    ok=$((ok + 1))
  else
    crashed=$((crashed + 1))
    keep=$repo/build/fuzz-artifacts/$target
    mkdir -p "$keep"
    cp -r "$dir/artifacts/." "$keep/" 2>/dev/null || true
    cp "$dir/log" "$keep/fuzz.log"
    echo "fuzz: $target FAILED (exit $rc); log and reproducer kept in $keep" >&2
    tail -n 60 "$dir/log" >&2
  fi
done

echo "fuzz targets: $ok ok, $crashed crashed"
exit "$crashed"
