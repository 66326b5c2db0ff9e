#!/usr/bin/env bash
# The Redis bars in cluster mode: `babelqueue bench` with a `?cluster=1` URL beside
# `redis-benchmark` RPUSH on the node that owns the queue's slot (same key tag, same 370-byte
# values), on the cluster of `scripts/services.sh start redis-cluster`, several interleaved
# rounds, ratios per round (RPUSH measured before and after, averaged). Also the same bench
# in single-node mode against the owning node (what cluster mode costs on top).
#   source build/services/services.env   # BABELQUEUE_REDIS_CLUSTER_URL / _PORTS
#   bash bench/redis_cluster_rounds.sh [rounds]   (default 3; needs build/release/cli/babelqueue)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3}
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
[[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }
[[ -n ${BABELQUEUE_REDIS_CLUSTER_URL:-} ]] || { echo "no BABELQUEUE_REDIS_CLUSTER_URL" >&2; exit 2; }
read -ra ports <<<"$BABELQUEUE_REDIS_CLUSTER_PORTS"
url="$BABELQUEUE_REDIS_CLUSTER_URL"

# owner TAG: the port of the primary owning the slot of {TAG} (the others answer MOVED).
owner() {
  local p
  for p in "${ports[@]}"; do
    [[ $(redis-cli -p "$p" exists "{$1}" 2>&1) =~ ^[0-9]+$ ]] && { echo "$p"; return; }
  done
  echo "no node owns {$1}" >&2
  exit 1
}
value=$(head -c 370 /dev/zero | tr '\0' x)
# rb PORT KEY: unpipelined RPUSH requests/s of one client on the node.
rb() {
  redis-benchmark -p "$1" -c 1 -n 40000 --csv rpush "$2" "$value" | tail -1 | cut -d, -f2 | tr -d '"'
}
# bq <publish|consume> URL QUEUE PORT: msgs/s of one phase of `babelqueue bench`.
bq() {
  local phase=$1 u=$2 q=$3 p=$4
  redis-cli -p "$p" del "$q" "$q:processing" "$q:processing:deadlines" >/dev/null
  "$cli" bench --broker "$u" --queue "$q" --size 370 --messages 30000 |
    sed -nE "s/^$phase: .* = ([0-9]+) msg\/s.*/\1/p"
}

printf '%-5s %6s %8s %8s %6s %8s %6s %8s %8s\n' round node rpush publish % consume % pub-1node con-1node
for r in $(seq "$rounds"); do
  tag="bqc$r"
  q="{$tag}"
  p=$(owner "$tag")
  single="redis://127.0.0.1:$p"
  # RPUSH is measured right before and right after the cluster phases and averaged, so that
  # a neighbour's burst skews both sides of a ratio alike.
  rp_before=$(rb "$p" "{$tag}:rb")
  pub=$(bq publish "$url" "$q" "$p")
  con=$(bq consume "$url" "$q" "$p")
  rp_after=$(rb "$p" "{$tag}:rb")
  rp=$(python3 -c "print(($rp_before + $rp_after) / 2)")
  pub1=$(bq publish "$single" "$q" "$p")
  con1=$(bq consume "$single" "$q" "$p")
  redis-cli -p "$p" del "{$tag}:rb" >/dev/null
  python3 - "$r" "$p" "$rp" "$pub" "$con" "$pub1" "$con1" <<'PY'
import sys
r, p = sys.argv[1:3]
rp, pub, con, pub1, con1 = (float(v) for v in sys.argv[3:])
pc = lambda a: f"{100 * a / rp:.0f}"
print(f"{r:<5} {p:>6} {rp:8.0f} {pub:8.0f} {pc(pub):>6} {con:8.0f} {pc(con):>6} {pub1:8.0f} {con1:8.0f}")
PY
done
