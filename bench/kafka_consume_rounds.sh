#!/usr/bin/env bash
# The consume rows of bench/kafka_rounds.sh alone, in more interleaved rounds than the full
# script can afford (a full round there takes ~50 s, most of it publishing and the peers):
# per round, `babelqueue bench` publishes N records in one publish_batch and consumes them
# (receive + ack), then the plain librdkafka loop (bench/kafka_ceiling) publishes N and
# consumes them twice — bare, and reading value + 2 headers (--read 1) in a second group.
# Prints each round, then min / median / max of every rate and of the per-round ratios.
#   source /tmp/svc/services.env        # BABELQUEUE_KAFKA_URL
#   bash bench/kafka_consume_rounds.sh [rounds]   (default 5; N_PIPE records, default 200000)
# QUERY (e.g. "&rdkafka.queued.max.messages.kbytes=16384") is appended to the URL of both,
# so the transport and the loop always run with the same librdkafka settings.
# BABELQUEUE_CLI_BEFORE (another build's babelqueue binary, e.g. a copy of main's) adds a
# before/after pair per round: that CLI runs the same job right before this one.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-5}
n=${N_PIPE:-200000}
query=${QUERY:-}
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
ceiling=${BABELQUEUE_CEILING:-$repo/build/release/bench/kafka_ceiling}
url=${BABELQUEUE_KAFKA_URL:?set BABELQUEUE_KAFKA_URL (source the services.env of scripts/services.sh)}
[[ -x "$cli" ]] || { echo "build the release tree first ($cli missing)" >&2; exit 2; }
[[ -x "$ceiling" ]] || { echo "build kafka_ceiling first ($ceiling missing)" >&2; exit 2; }
prefix=bq-con-$$
# shellcheck source=kafka_bench_common.sh
source "$repo/bench/kafka_bench_common.sh"

echo "kafka_consume_rounds: $rounds rounds of $n records${query:+, query $query}; load $(cut -d' ' -f1-3 /proc/loadavg)"
results=$(mktemp)
before_cli=${BABELQUEUE_CLI_BEFORE:-}
for r in $(seq "$rounds"); do
  b_st=0
  if [[ -n $before_cli ]]; then
    fresh
    out=$(nice "$before_cli" bench --broker "$url?group=$current$query" --queue "$current" --size 370 \
      --messages "$n" --batch "$n")
    drop
    b_st=$(or0 "$(rate consume-steady <<<"$out")")
  fi
  fresh
  out=$(nice "$cli" bench --broker "$url?group=$current$query" --queue "$current" --size 370 \
    --messages "$n" --batch "$n")
  drop
  c_con=$(or0 "$(rate consume <<<"$out")")
  c_st=$(or0 "$(rate consume-steady <<<"$out")")
  fresh
  out=$(nice "$ceiling" --url "$url?group=$current$query" --topic "$current" --group "$current" \
    --size 370 --messages "$n" --batch "$n")
  out2=$(nice "$ceiling" --url "$url?group=$current$query" --topic "$current" --group "$current-read" \
    --messages "$n" --phase consume --read 1)
  drop
  a_con=$(or0 "$(rate consume <<<"$out")")
  a_st=$(or0 "$(rate consume-steady <<<"$out")")
  a_rd=$(or0 "$(rate consume-steady <<<"$out2")")
  echo "round $r: transport consume $c_con steady $c_st${before_cli:+ (before: steady $b_st)} |" \
    "loop consume $a_con steady $a_st, reading headers steady $a_rd (load $(cut -d' ' -f1 /proc/loadavg))"
  if [[ $c_st == 0 || $a_st == 0 || $a_rd == 0 ]]; then echo "a measurement failed" >&2; exit 1; fi
  echo "$c_con $c_st $a_con $a_st $a_rd $b_st" >>"$results"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
def show(name, f, pct=False):
    v = sorted(f(r) for r in rows)
    fmt = (lambda x: f"{100 * x:.0f} %") if pct else (lambda x: f"{x:.0f}")
    print(f"  {name:46} min {fmt(v[0]):>8}  median {fmt(statistics.median(v)):>8}  max {fmt(v[-1]):>8}")
print(f"{len(rows)} rounds (msg/s; ratios per round)")
show("transport consume incl. group join", lambda r: r[0])
show("transport consume steady", lambda r: r[1])
show("loop consume incl. group join", lambda r: r[2])
show("loop consume steady", lambda r: r[3])
show("loop reading value + 2 headers, steady", lambda r: r[4])
show("transport / loop, incl. join", lambda r: r[0] / r[2], True)
show("transport / loop, steady", lambda r: r[1] / r[3], True)
show("transport / loop reading headers, steady", lambda r: r[1] / r[4], True)
if all(r[5] > 0 for r in rows):
    show("before: transport consume steady", lambda r: r[5])
    show("before: transport / loop, steady", lambda r: r[5] / r[3], True)
    show("after / before, steady", lambda r: r[1] / r[5], True)
PY
rm -f "$results"
