# Sourced by the bench/redis_*rounds.sh scripts: what they share.
#   bench_cli                    sets $cli (build/release/cli/babelqueue or $BABELQUEUE_CLI), or exits
#   bench_server [pin]           starts a throwaway redis-server on a free loopback port ($port),
#                                stopped on exit; with `pin`, the server on core 0 and
#                                "${pin_client[@]}" = taskset -c 1 for the clients
#   bench_medians NAME=COL...    reads the round rows on stdin, prints each column's median
# Needs $repo set by the caller.

bench_cli() {
  cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
  [[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }
}

bench_server() {
  local pin_server=()
  pin_client=()
  # Pinned apart: unpinned, the loopback round trip on these VMs flips between ~60 us
  # (different cores) and ~10 us (same core) from run to run, and a round's two sides may
  # land in different modes.
  if [[ ${1:-} == pin ]] && command -v taskset >/dev/null && (($(nproc) >= 2)); then
    pin_server=(taskset -c 0)
    pin_client=(taskset -c 1)
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  bench_dir=$(mktemp -d)
  "${pin_server[@]}" redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$bench_dir" --daemonize yes --pidfile "$bench_dir/pid" --logfile "$bench_dir/log"
  trap 'kill "$(cat "$bench_dir/pid")" 2>/dev/null || true; rm -rf "$bench_dir"' EXIT
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

bench_medians() {
  python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
print("median of %d rounds:" % len(rows))
for spec in sys.argv[1:]:
    name, col = spec.rsplit("=", 1)
    print("  %-40s %s %%" % (name, statistics.median(float(r[int(col)]) for r in rows)))
' "$@"
}
