#!/usr/bin/env bash
# RSS of the kafka:// transport over a long run: `babelqueue bench --broker kafka://...`
# publishes N messages (default 1,000,000; in publish_batch calls of BATCH, default 1000, or
# awaited single publishes with BATCH=1) and then consumes them, while its VmRSS
# (/proc/<pid>/status) is sampled every INTERVAL seconds (default 1). For reference the plain
# librdkafka consume loop (bench/kafka_ceiling) then consumes the same N records in a second
# group, sampled the same way: what librdkafka's own prefetch buffers hold. Prints every
# sample, then first / peak / last per phase and the spread over the second half of each
# phase (a leak grows with the messages handled; a bounded buffer stays within a band).
#   source /tmp/svc/services.env   # BABELQUEUE_KAFKA_URL
#   bash bench/kafka_rss.sh [messages]
# QUERY (e.g. "&rdkafka.queued.max.messages.kbytes=16384") is appended to the URL of both.
# Needs build/release/cli/babelqueue and build/release/bench/kafka_ceiling.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-1000000}
batch=${BATCH:-1000}
interval=${INTERVAL:-1}
query=${QUERY:-}
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
ceiling=${BABELQUEUE_CEILING:-$repo/build/release/bench/kafka_ceiling}
url=${BABELQUEUE_KAFKA_URL:?set BABELQUEUE_KAFKA_URL (source the services.env of scripts/services.sh)}
topic=bq-rss-$$
out=$(mktemp)
samples=$(mktemp)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  for g in "$topic" "$topic-ceiling"; do
    "$ceiling" --url "$url" --topic "$topic" --group "$g" --phase delete >/dev/null 2>&1 || true
  done
  rm -f "$out" "$samples"
}
trap cleanup EXIT

# sampled NAME FIRST_PHASE CMD...: runs CMD, sampling its VmRSS; the phase is FIRST_PHASE
# until CMD printed its "publish:" line, then "consume".
sampled() {
  local name=$1 first=$2 start ms rss phase
  shift 2
  : >"$out"
  nice stdbuf -oL "$@" >"$out" 2>&1 &
  pid=$!
  start=$(date +%s%N)
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -z $rss ]] && break
    phase=$first
    grep -q '^publish:' "$out" && phase=consume
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf '%s %d.%d %s %s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100)) "$phase" "$rss" >>"$samples"
    sleep "$interval"
  done
  wait "$pid" && rc=0 || rc=$?
  pid=
  cat "$out"
  [[ $rc == 0 ]] || { echo "$name exited $rc" >&2; exit 1; }
}

"$ceiling" --url "$url" --topic "$topic" --phase create >/dev/null
echo "kafka_rss: $n messages, batch $batch, sampled every $interval s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$SECONDS
sampled transport publish "$cli" bench --broker "$url?group=$topic$query" --queue "$topic" \
  --messages "$n" --size 370 --batch "$batch" --timeout 30
sampled librdkafka-loop consume "$ceiling" --url "$url?group=$topic$query" --topic "$topic" \
  --group "$topic-ceiling" --messages "$n" --phase consume --timeout 30
echo "samples (who, seconds, phase, VmRSS KiB):"
awk '{printf "  %s %s %s %s\n", $1, $2, $3, $4}' "$samples"
python3 - "$samples" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for who in ("transport", "librdkafka-loop"):
    for phase in ("publish", "consume"):
        v = [int(r[3]) for r in rows if r[0] == who and r[2] == phase]
        if not v:
            continue
        half = v[len(v) // 2:]
        print(f"{who} {phase}: {len(v)} samples; first {v[0]} KiB, peak {max(v)} KiB, last {v[-1]} KiB;"
              f" second half {min(half)}..{max(half)} KiB")
PY
echo "wall time $((SECONDS - t0)) s"
