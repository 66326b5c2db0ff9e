#!/usr/bin/env bash
# Measures the Redis bars of the runtime issue: `babelqueue bench` beside `redis-benchmark`
# on one throwaway redis-server, several interleaved rounds, ratios computed per round.
#   bash bench/redis_rounds.sh [rounds]      (default 3; needs build/release/cli/babelqueue)
# Prints one table row per round and the median ratio of each measurement. Run it on a quiet
# machine: both sides share the CPU with the server, so a busy neighbour skews one round.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
# shellcheck source=bench/redis_bench_common.sh
source "$repo/bench/redis_bench_common.sh"
bench_cli
bench_server
url=redis://127.0.0.1:$port

# rb <args>: redis-benchmark RPUSH requests/s.
rb() { redis-benchmark -p "$port" -t rpush -d 370 --csv "$@" | tail -1 | cut -d, -f2 | tr -d '"'; }
# bq <publish|consume> <url> <queue> <bench args>: msgs/s of one phase of `babelqueue bench`.
bq() {
  local phase=$1 u=$2 q=$3
  shift 3
  redis-cli -p "$port" del "$q" "$q:processing" "$q:processing:deadlines" >/dev/null
  "$cli" bench --broker "$u" --queue "$q" --size 370 "$@" |
    sed -nE "s/^$phase: .* = ([0-9]+) msg\/s.*/\1/p"
}

printf '%-5s %8s %8s %6s %8s %8s %6s %8s %8s %6s %8s %6s %8s %6s %8s %6s\n' round \
  rpush publish % rpushP16 batch16 % c4P16 4x16 % default % untrack % peers %
rows=()
for r in $(seq "$rounds"); do
  rp=$(rb -n 40000 -c 1)
  rp16=$(rb -n 200000 -c 1 -P 16)
  rp4=$(rb -n 400000 -c 4 -P 16)
  pub=$(bq publish "$url" "p$r" --messages 30000)
  def=$(bq consume "$url" "d$r" --messages 30000)
  bat=$(bq publish "$url?prefetch=16" "b$r" --messages 200000 --batch 16)
  four=$(bq publish "$url?prefetch=16" "f$r" --messages 400000 --batch 16 --publishers 4 --consumers 4)
  unt=$(bq consume "$url?track_reservations=false" "u$r" --messages 30000)
  peers=$(bq consume "$url?track_reservations=false&pipeline_acks=false" "x$r" --messages 30000)
  row=$(python3 - "$r" "$rp" "$pub" "$rp16" "$bat" "$rp4" "$four" "$def" "$unt" "$peers" <<'PY'
import sys
r, rp, pub, rp16, bat, rp4, four, d, u, x = sys.argv[1:2] + [float(v) for v in sys.argv[2:]]
pc = lambda a, b: f"{100 * a / b:.0f}"
print(f"{r:<5} {rp:8.0f} {pub:8.0f} {pc(pub, rp):>6} {rp16:8.0f} {bat:8.0f} {pc(bat, rp16):>6} "
      f"{rp4:8.0f} {four:8.0f} {pc(four, rp4):>6} {d:8.0f} {pc(d, rp):>6} {u:8.0f} {pc(u, rp):>6} "
      f"{x:8.0f} {pc(x, rp):>6}")
PY
)
  echo "$row"
  rows+=("$row")
done
printf '%s\n' "${rows[@]}" | bench_medians "single publish vs RPUSH c1 (bar 80)=3" \
  "batch publish vs RPUSH -P16 (bar 80)=6" "4 publishers vs c4 -P16 (bar 80)=9" \
  "consume default vs RPUSH c1 (bar 50)=11" "consume untracked vs RPUSH c1=13" \
  "consume peers pattern vs RPUSH c1=15"
