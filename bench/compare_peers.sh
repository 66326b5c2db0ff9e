#!/usr/bin/env bash
# Codec speed against the goals of issue #17, in one run: ROUNDS (default 5) interleaved
# rounds of bench/codec_bench (make+encode and decode+accept, small and ≈13 KB envelopes,
# with a bare simdjson DOM parse of the same bytes beside each decode) and of the Python
# peer (PyPI babelqueue 1.24.0, bench/peers/python_codec_bench.py) on the same payloads,
# every process pinned to the same core (CPU, default 1). Prints min / median / max over the
# rounds of each figure and of each per-round ratio, and the verdict against each goal.
#   bash bench/compare_peers.sh            (builds $BUILD_DIR, default build/release-bench)
# The PHP and Go SDKs cannot be installed from the registries reachable here: their figures
# are the issue's reference table (same machine kind, pinned, one run), printed beside ours.
# CPU time per call, as Google Benchmark and the Python timer report it.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build/release-bench}
rounds=${ROUNDS:-5}
cpu=${CPU:-1}
if [[ ! -x "$build/bench/codec_bench" || -z "${NO_BUILD:-}" ]]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBABELQUEUE_BUILD_BENCH=ON \
    -DBABELQUEUE_BUILD_TESTS=OFF -DBABELQUEUE_BUILD_EXAMPLES=OFF -DBABELQUEUE_WARNINGS_AS_ERRORS=OFF >/dev/null
  ninja -C "$build" codec_bench >/dev/null
fi
peer_python=${BABELQUEUE_PEER_PYTHON:-$(cat "$repo/build/peer-python.txt" 2>/dev/null || true)}
if [[ ! -x "$peer_python" ]]; then
  peer_python=$(bash "$repo/scripts/setup-python-peer.sh" | sed -n 's/^BABELQUEUE_PEER_PYTHON=//p' | tail -1)
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  taskset -c "$cpu" "$build/bench/codec_bench" --benchmark_min_time=0.5 --benchmark_format=json \
    >"$out/cpp-$r.json" 2>/dev/null
  taskset -c "$cpu" "$peer_python" "$repo/bench/peers/python_codec_bench.py" >"$out/python-$r.json"
  echo "round $r/$rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
UNIT = {"ns": 1, "us": 1e3, "ms": 1e6}
cpp, py = [], []
for r in range(1, rounds + 1):
    bench = json.load(open(f"{out}/cpp-{r}.json"))["benchmarks"]
    cpp.append({b["run_name"]: b["cpu_time"] * UNIT[b["time_unit"]] for b in bench})
    py.append(json.load(open(f"{out}/python-{r}.json")))
size = {"small": py[0]["bytes/small"], "large_16k": py[0]["bytes/large_16k"]}
# The issue's reference figures (one pinned run on this machine kind), in ns.
PHP = {"make_encode/large_16k": 104e3, "decode_accept/large_16k": 148e3}
GO = {"make_encode/large_16k": 450e3, "decode_accept/large_16k": 384e3}

def stats(values):
    return min(values), statistics.median(values), max(values)

def row(label, values, fmt="{:.0f}"):
    lo, med, hi = stats(values)
    print(f"  {label:<46} {fmt.format(med):>10}   ({fmt.format(lo)} – {fmt.format(hi)})")
    return med

print(f"{rounds} interleaved rounds, median (min – max); ns per call unless marked")
verdicts = []
for op in ("make_encode", "decode_accept"):
    for payload in ("small", "large_16k"):
        name = f"{op}/{payload}"
        print(f"{name}:")
        c = [x[name] for x in cpp]
        row("C++", c)
        row("Python SDK (same run)", [x[name] for x in py])
        row("C++ vs Python (×)", [p[name] / x[name] for x, p in zip(cpp, py)], "{:.1f}")
        gbps = row("C++ throughput (GB/s of envelope)", [size[payload] / v for v in c], "{:.2f}")
        if name in PHP:
            php = row("C++ vs the issue's PHP figure (×)", [PHP[name] / v for v in c], "{:.1f}")
            row("C++ vs the issue's Go figure (×)", [GO[name] / v for v in c], "{:.1f}")
        ref = f"simdjson_parse/{payload}"
        if op == "decode_accept" and ref in cpp[0]:
            row("bare simdjson parse, same bytes", [x[ref] for x in cpp])
            ratio = row("C++ decode / simdjson parse (×, same round)", [x[name] / x[ref] for x in cpp], "{:.2f}")
        med = statistics.median(c)
        if name == "make_encode/large_16k":
            verdicts.append(("make+encode large ≥ 5× PHP", php >= 5, f"{php:.1f}×"))
            verdicts.append(("make+encode large ≥ 1 GB/s", gbps >= 1, f"{gbps:.2f} GB/s"))
        if name == "make_encode/small":
            verdicts.append(("make+encode small ≤ 0.5 µs", med <= 500, f"{med:.0f} ns"))
        if name == "decode_accept/large_16k" and ref in cpp[0]:
            verdicts.append(("decode+accept large ≤ 1.3× simdjson", ratio <= 1.3, f"{ratio:.2f}×"))
            verdicts.append(("decode+accept large ≥ 1.5 GB/s", gbps >= 1.5, f"{gbps:.2f} GB/s"))
        if name == "decode_accept/small" and ref in cpp[0]:
            verdicts.append(("decode+accept small ≤ 1.5× simdjson", ratio <= 1.5, f"{ratio:.2f}×"))
print("goals (medians):")
for goal, ok, figure in verdicts:
    print(f"  {'met    ' if ok else 'NOT met'}  {goal:<40} {figure}")
PY
