#!/usr/bin/env bash
# The Redis bars for the Laravel-compatible mode (redis://…?laravel=1): `babelqueue bench`
# beside `redis-benchmark` on one throwaway redis-server, interleaved rounds, ratios per round
# (the owned layout's table is bench/redis_rounds.sh).
#   bash bench/redis_laravel_rounds.sh [rounds]   (default 3; needs build/release/cli/babelqueue)
# Bars (issue #16): single publish >= 80 % of RPUSH, consume >= 50 % of RPUSH per connection.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
# shellcheck source=bench/redis_bench_common.sh
source "$repo/bench/redis_bench_common.sh"
bench_cli
bench_server pin
url="redis://127.0.0.1:$port?laravel=1"

rb() { "${pin_client[@]}" redis-benchmark -p "$port" -t rpush -d 370 --csv "$@" | tail -1 | cut -d, -f2 | tr -d '"'; }
# bq <publish|consume> <queue> <bench args>: msgs/s of one phase of `babelqueue bench`.
bq() {
  local phase=$1 q=$2
  shift 2
  redis-cli -p "$port" del "queues:$q" "queues:$q:reserved" "queues:$q:delayed" \
    "queues:$q:notify" >/dev/null
  "${pin_client[@]}" "$cli" bench --broker "$url" --queue "$q" --size 370 "$@" |
    sed -nE "s/^$phase: .* = ([0-9]+) msg\/s.*/\1/p"
}

printf '%-5s %8s %8s %6s %8s %8s %6s %8s %6s\n' round rpush publish % rpushP16 batch16 % consume %
rows=()
for r in $(seq "$rounds"); do
  rp=$(rb -n 40000 -c 1)
  rp16=$(rb -n 200000 -c 1 -P 16)
  pub=$(bq publish "p$r" --messages 30000)
  bat=$(bq publish "b$r" --messages 200000 --batch 16)
  con=$(bq consume "c$r" --messages 30000)
  row=$(python3 - "$r" "$rp" "$pub" "$rp16" "$bat" "$con" <<'PY'
import sys
r, rp, pub, rp16, bat, con = sys.argv[1:2] + [float(v) for v in sys.argv[2:]]
pc = lambda a, b: f"{100 * a / b:.0f}"
print(f"{r:<5} {rp:8.0f} {pub:8.0f} {pc(pub, rp):>6} {rp16:8.0f} {bat:8.0f} {pc(bat, rp16):>6} "
      f"{con:8.0f} {pc(con, rp):>6}")
PY
)
  echo "$row"
  rows+=("$row")
done
printf '%s\n' "${rows[@]}" | bench_medians "single publish vs RPUSH c1 (bar 80)=3" \
  "batch publish vs RPUSH -P16=6" "consume vs RPUSH c1 (bar 50)=8"
