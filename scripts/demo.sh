#!/usr/bin/env bash
# Fresh-machine demo: installs the build dependencies, builds the `babelqueue` CLI (release
# preset) and runs `babelqueue demo`. Until the runtime's demo command exists it shows the
# codec instead: make an envelope, check it, and print its canonical form.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${BABELQUEUE_JOBS:-$(nproc)}
cd "$repo"

bash scripts/install-deps.sh
# The benchmarks are not needed for the demo (and need bench/ to be complete).
cmake --preset release -DBABELQUEUE_BUILD_BENCH=OFF >/dev/null
cmake --build --preset release -j "$jobs" --target babelqueue_cli
cli=$repo/build/release/cli/babelqueue

if "$cli" --help 2>/dev/null | grep -qE '^\s+demo\b'; then
  exec "$cli" demo "$@"
fi

echo "(the 'demo' command is not built yet; showing the codec instead)"
data='{"order_id":1042,"amount":99.9,"currency":"EUR"}'
echo "\$ babelqueue make urn:babel:orders:created --data '$data' --queue orders"
envelope=$("$cli" make urn:babel:orders:created --data "$data" --queue orders)
echo "$envelope"
echo "\$ babelqueue check -   (the envelope above on stdin)"
echo "$envelope" | "$cli" check -
echo "\$ babelqueue check -   (an envelope without a URN)"
echo '{"trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0}' | "$cli" check - || true
