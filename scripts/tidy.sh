#!/usr/bin/env bash
# Runs clang-tidy (config: /.clang-tidy) over the sources of one or more components, using
# the compile database of the `dev` preset (configured here when missing).
#
#   bash scripts/tidy.sh [component...]        (default: core)
#
# Prints the findings and exits non-zero when there is any. About 30 s per file on 2 cores.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
jobs=${BABELQUEUE_JOBS:-$(nproc)}
components=("${@:-core}")
db=build/dev

if [[ ! -f $db/compile_commands.json ]]; then
  shared=${BABELQUEUE_SHARED_DIR:-$repo/../shared}
  cmake --preset dev -DBABELQUEUE_CONFORMANCE_DIR="$shared/conformance" >/dev/null
fi

files=()
for component in "${components[@]}"; do
  files+=(src/"$component"/*.cpp)
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 1 clang-tidy -p "$db" --quiet 2>/dev/null >"$out" || true
if grep -qE '(warning|error):' "$out"; then
  cat "$out"
  echo "tidy: $(grep -cE '(warning|error):' "$out") findings in ${components[*]}" >&2
  exit 1
fi
echo "tidy: ${components[*]} clean (${#files[@]} files)"
