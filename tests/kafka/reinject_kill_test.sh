#!/usr/bin/env bash
# A re-injector SIGKILLed while delayed records are coming due (issue #37: "a consumer SIGKILL
# during the delay loses nothing"). Kafka holds a delayed record on a retry tier; the process
# that moves it back is `babelqueue kafka reinject`, which commits a tier offset only after the
# record is on the work topic. N records are published with delays spread over a few seconds,
# the re-injector is killed (-9) while they come due and started again: every record reaches
# the work topic (at least once; duplicates are counted and printed, not failed: Kafka's
# at-least-once).
# usage: reinject_kill_test.sh BABELQUEUE_BINARY   (needs BABELQUEUE_KAFKA_BOOTSTRAP)
set -euo pipefail
BQ=$1
N=${N:-20}
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ -z "${BABELQUEUE_KAFKA_BOOTSTRAP:-}" ]; then
  if [ "${BABELQUEUE_REQUIRE_SERVICES:-}" = 1 ] || [ "${CI:-}" = true ]; then
    fail "BABELQUEUE_KAFKA_BOOTSTRAP is not set (scripts/services.sh start kafka)"
  fi
  echo "skipped: no Kafka (scripts/services.sh start kafka)"; exit 0
fi
T="bq-reinject-kill-$$"
# A short session timeout: the killed re-injector's group membership lapses within seconds, so
# the restarted one gets the tier partitions back soon (librdkafka's default is 45 s).
B="kafka://$BABELQUEUE_KAFKA_BOOTSTRAP?group=$T&retry_topics=1s,10s"
B="$B&rdkafka.session.timeout.ms=6000&rdkafka.heartbeat.interval.ms=500"
reinjector=
trap '[ -n "$reinjector" ] && kill -9 "$reinjector" 2>/dev/null; true' EXIT

"$BQ" kafka reinject --broker "$B" --topic "$T" 2>"$T.reinject1" &
reinjector=$!
# Delays 2.0 s, 2.2 s, ... : the records come due one after another over ~N/5 seconds.
start=$(date +%s%N)
for i in $(seq 1 "$N"); do
  "$BQ" publish --broker "$B" --queue "$T" urn:babel:test:item --data "{\"n\":$i}" \
    --delay "$((2000 + 200 * i))ms" >/dev/null 2>>"$T.err"
done
published_ms=$((($(date +%s%N) - start) / 1000000))
# Kill in the middle of the due times (the first is due 2.2 s after its publish, the last
# 2 + 0.2 N s after its own).
sleep "$(awk -v n="$N" 'BEGIN { printf "%.1f", 2 + n / 10 }')"
kill -9 "$reinjector"
wait "$reinjector" 2>/dev/null || true
killed_ms=$((($(date +%s%N) - start) / 1000000))
sleep 1
"$BQ" kafka reinject --broker "$B" --topic "$T" 2>"$T.reinject2" &
reinjector=$!

# No --max: a duplicate must not end the consume before every record was seen. --timeout
# counts only settled messages: it ends 20 s after the last one.
out=$("$BQ" consume --broker "$B" --queue "$T" --timeout 20 -q \
      --handle urn:babel:test:item 2>>"$T.err") || true
kill -TERM "$reinjector" 2>/dev/null || true
wait "$reinjector" 2>/dev/null || true
reinjector=

got=$(grep -o '"data":{"n":[0-9]*}' <<<"$out" | sort -u | wc -l)
lines=$(grep -c '"data":{"n":' <<<"$out" || true)
echo "published $N delayed records in ${published_ms} ms; re-injector killed at ${killed_ms} ms," \
     "restarted 1 s later; $got distinct of $N arrived ($lines deliveries)"
[ "$got" -eq "$N" ] || fail "lost records: $got of $N arrived (re-injector logs: $T.reinject1, $T.reinject2)"
rm -f "$T.err" "$T.reinject1" "$T.reinject2"
echo "ok"
