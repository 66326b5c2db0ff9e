#!/usr/bin/env bash
# Runs the codec benchmarks of this SDK and of the peers in one run and prints the ratios
# against the bars of issue 2 (≥10× Go, ≥5× PHP/Python on the small envelope; decode within
# 3× of a bare simdjson parse; the 16 KiB envelope decoded at ≥ 1 GB/s).
#   bash bench/compare_peers.sh            (builds build/release-bench, needs the peer venv)
# The Go peer comes from the Go module proxy; when the proxy does not serve the module the
# script says so and compares with Python only.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build/release-bench}
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBABELQUEUE_BUILD_BENCH=ON \
  -DBABELQUEUE_BUILD_TESTS=OFF -DBABELQUEUE_BUILD_EXAMPLES=OFF >/dev/null
ninja -C "$build" codec_bench >/dev/null
"$build/bench/codec_bench" --benchmark_min_time=1 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_format=json >"$build/cpp.json"

peer_python=${BABELQUEUE_PEER_PYTHON:-}
if [[ -z "$peer_python" ]]; then
  peer_python=$(bash "$repo/scripts/setup-python-peer.sh" | sed -n 's/^BABELQUEUE_PEER_PYTHON=//p' | tail -1)
fi
"$peer_python" "$repo/bench/peers/python_codec_bench.py" >"$build/python.json"

go_json="$build/go.json"
rm -f "$go_json"
if command -v go >/dev/null; then
  if (cd "$repo/bench/peers/go" && GOFLAGS=-mod=mod go get github.com/babelqueue/babelqueue-go@latest >/dev/null 2>"$build/go.err" &&
      go run . >"$go_json" 2>>"$build/go.err"); then
    :
  else
    echo "Go peer unavailable: $(head -c 300 "$build/go.err" | tr '\n' ' ')"
    rm -f "$go_json"
  fi
fi

python3 - "$build/cpp.json" "$build/python.json" "$go_json" <<'PY'
import json, os, sys
cpp = {b["run_name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("aggregate_name") == "median"}
py = json.load(open(sys.argv[2]))
go = json.load(open(sys.argv[3])) if os.path.exists(sys.argv[3]) else None
def ns(name): return cpp[name]["cpu_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[cpp[name]["time_unit"]]
print("%-26s %12s %12s %10s %12s %10s" % ("operation", "C++ ns", "Python ns", "×Python", "Go ns", "×Go"))
for op in ("make_encode/small", "decode_accept/small", "make_encode/large_16k", "decode_accept/large_16k"):
    c = ns(op)
    g = go[op] if go else float("nan")
    print("%-26s %12.0f %12.0f %10.1f %12.0f %10.1f" % (op, c, py[op], py[op] / c, g, g / c))
s = ns("decode_accept/small") / ns("simdjson_parse/small") if "simdjson_parse/small" in cpp else float("nan")
gbps = py["bytes/large_16k"] / ns("decode_accept/large_16k")
print("decode+accept small / bare simdjson parse: %.2f× (bar ≤ 3×)" % s)
print("decode+accept 16 KiB: %.2f GB/s (bar ≥ 1 GB/s)" % gbps)
PY
