#!/usr/bin/env bash
# The delay bar of issue #37: a publish with a delay runs at >= 90 % of the same publish
# without one, on each broker, in the same run. For every broker URL given (or every one
# scripts/services.sh exported), interleaved rounds of `babelqueue bench` publishing N
# messages plainly and N with --delay (each on a queue of its own), the delayed/plain rate
# per round, then the median and the min-max over the rounds.
#   source build/services/services.env
#   bash bench/delay_rounds.sh [rounds] [URL...]     # default 5 rounds
# Environment: N (messages per measurement, default 2000), DELAY (default 1s), BABELQUEUE_CLI
# (default build/release/cli/babelqueue; build it with
#   cmake --preset release && cmake --build build/release --target babelqueue_cli).
# SQS needs AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (ElasticMQ takes any) and a queue that
# exists: its URL gets create_queues=true. Kafka's URL needs retry tiers (its delays are the
# tiers): `retry_topics=1s,5s` is added when the URL has none.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-5}
shift || true
cli=${BABELQUEUE_CLI:-$repo/build/release/cli/babelqueue}
n=${N:-2000}
delay=${DELAY:-1s}
[[ -x "$cli" ]] || { echo "build the release preset first ($cli missing)" >&2; exit 2; }

urls=("$@")
if [[ ${#urls[@]} -eq 0 ]]; then
  for var in BABELQUEUE_REDIS_URL BABELQUEUE_RABBITMQ_URL BABELQUEUE_KAFKA_URL \
             BABELQUEUE_ARTEMIS_URL BABELQUEUE_SQS_URL BABELQUEUE_PULSAR_URL; do
    [[ -n "${!var:-}" ]] && urls+=("${!var}")
  done
  urls+=("sqlite:///tmp/bq-delay-bench-$$.db")
fi

with_option() { [[ $1 == *\?* ]] && echo "$1&$2" || echo "$1?$2"; }

# The publish rate (msg/s) of one bench run.
rate() {  # rate URL QUEUE [--delay D]
  local url=$1 queue=$2; shift 2
  # Only the publish line counts: the consume phase may time out (Kafka's delayed records wait
  # on a tier until a re-injector runs), which is not this measurement's failure.
  { "$cli" bench --broker "$url" --queue "$queue" --messages "$n" --timeout 10 "$@" 2>/dev/null ||
      true; } |
    awk '/^publish:/ { for (i = 1; i <= NF; i++) if ($i == "msg/s;") print $(i - 1) }'
}

for url in "${urls[@]}"; do
  case $url in
    sqs://*) url=$(with_option "$url" create_queues=true) ;;
    kafka://*) [[ $url == *retry_topics=* ]] || url=$(with_option "$url" retry_topics=1s,5s) ;;
  esac
  ratios=()
  for r in $(seq 1 "$rounds"); do
    tag="bqdelay-$$-$r-$RANDOM"
    plain=$(rate "$url" "$tag-plain")
    later=$(rate "$url" "$tag-later" --delay "$delay")
    [[ -n $plain && -n $later ]] || { echo "  round $r: a measurement failed" >&2; continue; }
    ratios+=("$(awk -v a="$later" -v b="$plain" 'BEGIN { printf "%.3f", a / b }')")
    printf '  round %d: plain %s msg/s, delayed %s msg/s\n' "$r" "$plain" "$later"
  done
  scheme=${url%%://*}
  if [[ ${#ratios[@]} -eq 0 ]]; then echo "$scheme: no round completed"; continue; fi
  printf '%s\n' "${ratios[@]}" | sort -n | awk -v s="$scheme" -v n="$n" -v d="$delay" '
    { v[NR] = $1 } END {
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%s: delayed/plain publish rate median %.2f (min %.2f, max %.2f) over %d rounds of %d msgs, delay %s\n",
             s, m, v[1], v[NR], NR, n, d }'
done
