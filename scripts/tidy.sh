#!/usr/bin/env bash
# Runs clang-tidy (config: /.clang-tidy) over C++ sources, using the compile database of the
# `dev` preset, configured here into build/tidy (see below).
#
#   bash scripts/tidy.sh [component...]      the sources of components (default: core)
#   bash scripts/tidy.sh FILE.cpp...         those files
#   bash scripts/tidy.sh --changed [BASE]    the .cpp files the commits since BASE changed
#
# --changed (what scripts/test.sh's lint phase runs): the files `git diff --name-only
# MERGE-BASE HEAD` lists (added, copied, modified or renamed; committed work only), where
# MERGE-BASE is the merge base of HEAD and BASE. BASE defaults to $BABELQUEUE_LINT_BASE, else
# to the commit recorded in .ci/lint-base: the last commit whose changes were tidied, moved
# forward by whoever merges a tidy-clean tree (`git rev-parse HEAD >.ci/lint-base`). This
# needs nothing but the clone's own history (CI's fresh clone has all of it and no remote
# branches), is the same on every machine, and stays cheap as long as the base is moved. When
# BASE is not in the history (a shallow clone), HEAD's own changes (HEAD^..HEAD) are taken.
# Headers are checked through the sources that include them (HeaderFilterRegex), but a
# changed header alone selects nothing; files the compile database does not know (a component
# that is not configured) are skipped and counted.
#
# Prints the findings and exits non-zero when there is any. About 30 s per file on 2 cores.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
jobs=${BABELQUEUE_JOBS:-$(nproc)}
# Its own configure of the dev preset (no build), one compile command per source: without
# unity batches (a batched source has no entry of its own) and without the precompiled header
# (GCC's, which clang cannot read); cmake/BabelqueuePrecompiledHeaders.cmake.
db=build/tidy
command -v clang-tidy >/dev/null || { echo "tidy: clang-tidy is not installed" >&2; exit 1; }

shared=${BABELQUEUE_SHARED_DIR:-$repo/../shared}
cmake --preset dev -B "$db" -DBABELQUEUE_CONFORMANCE_DIR="$shared/conformance" \
  -DBABELQUEUE_UNITY_BUILD=OFF -DBABELQUEUE_PRECOMPILE_HEADERS=OFF >"$db.configure.log" 2>&1 ||
  { cat "$db.configure.log" >&2; echo "tidy: configure failed" >&2; exit 1; }

# changed_files BASE: the .cpp files of the commits since BASE (see above), one a line.
changed_files() {
  local base=$1 from
  if from=$(git merge-base "$base" HEAD 2>/dev/null); then
    echo "tidy: files changed since $(git rev-parse --short "$from") ($base)" >&2
  else
    from=HEAD^
    echo "tidy: base '$base' is not in this clone's history; the files HEAD changed" >&2
  fi
  git diff --name-only --diff-filter=ACMR "$from" HEAD -- '*.cpp'
}

# in_database FILE...: the files the compile database compiles (prints the others' count).
in_database() {
  python3 - "$db/compile_commands.json" "$@" <<'PY'
import json, os, sys
known = {os.path.realpath(e["file"]) for e in json.load(open(sys.argv[1]))}
files = sys.argv[2:]
kept = [f for f in files if os.path.realpath(f) in known]
for f in kept:
    print(f)
if len(kept) < len(files):
    print(f"tidy: {len(files) - len(kept)} file(s) not in the compile database, skipped",
          file=sys.stderr)
PY
}

files=()
what=
if [[ ${1:-} == --changed ]]; then
  base=${2:-${BABELQUEUE_LINT_BASE:-$(grep -v '^#' .ci/lint-base 2>/dev/null | head -n 1 || true)}}
  mapfile -t files < <(changed_files "$base")
  what="changed files"
elif [[ ${1:-} == *.cpp ]]; then
  files=("$@")
  what="files"
else
  components=("${@:-core}")
  for component in "${components[@]}"; do
    files+=(src/"$component"/*.cpp)
  done
  what=${components[*]}
fi
((${#files[@]} == 0)) || mapfile -t files < <(in_database "${files[@]}")
if ((${#files[@]} == 0)); then
  echo "tidy: $what clean (0 files)"
  exit 0
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 1 clang-tidy -p "$db" --quiet 2>/dev/null >"$out" || true
if grep -qE '(warning|error):' "$out"; then
  cat "$out"
  echo "tidy: $(grep -cE '(warning|error):' "$out") findings in $what (${#files[@]} files)" >&2
  exit 1
fi
echo "tidy: $what clean (${#files[@]} files)"
