#!/usr/bin/env bash
# Fresh-machine demo: installs the build dependencies, builds the `babelqueue` CLI (release
# preset) and runs `babelqueue demo` — publish → consume (trace continued) → a failing
# handler retried into the dead-letter queue, on the embedded sqlite:// default (no broker).
# Arguments go to `babelqueue demo` (e.g. `--broker redis://127.0.0.1:6379`).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${BABELQUEUE_JOBS:-$(nproc)}
cd "$repo"

bash scripts/install-deps.sh
# The benchmarks are not needed for the demo (and need bench/ to be complete).
cmake --preset release -DBABELQUEUE_BUILD_BENCH=OFF >/dev/null
cmake --build --preset release -j "$jobs" --target babelqueue_cli
cli=$repo/build/release/cli/babelqueue

if ! "$cli" --help 2>/dev/null | grep -qE '^\s+demo\b'; then
  echo "demo.sh: this build has no 'demo' command (the runtime or sqlite component is off)" >&2
  exit 1
fi
exec "$cli" demo "$@"
