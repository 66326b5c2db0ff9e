#!/usr/bin/env bash
# CLI over kafka://: publish in one process, consume in another against the shared Kafka
# broker; stdout carries only the messages (librdkafka's logs go to stderr); unknown URNs are
# dead-lettered; retries go through the tiers with `babelqueue kafka reinject` running as a
# process, then to <topic>.dlq.
# usage: cli_test.sh BABELQUEUE_BINARY   (needs BABELQUEUE_KAFKA_BOOTSTRAP)
set -euo pipefail
BQ=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ -z "${BABELQUEUE_KAFKA_BOOTSTRAP:-}" ]; then
  if [ "${BABELQUEUE_REQUIRE_SERVICES:-}" = 1 ] || [ "${CI:-}" = true ]; then
    fail "BABELQUEUE_KAFKA_BOOTSTRAP is not set (scripts/services.sh start kafka)"
  fi
  echo "skipped: no Kafka (scripts/services.sh start kafka)"; exit 0
fi
T="bq-cli-$$"
B="kafka://$BABELQUEUE_KAFKA_BOOTSTRAP?group=$T"

echo "-- publish in one process, consume in another ($T)"
id1=$("$BQ" publish --broker "$B" --queue "$T" urn:babel:orders:created \
      --data '{"order_id":1,"big":12345678901234567890,"s":"caf\u00e9"}' \
      --trace-id trace-kafka --header traceparent=00-abc)
id2=$("$BQ" publish --broker "$B" --queue "$T" urn:babel:other:thing)
[ ${#id1} -eq 36 ] || fail "publish printed '$id1', not a meta.id"
out=$("$BQ" consume --broker "$B" --queue "$T" --max 2 --timeout 20 -q \
      --handle urn:babel:orders:created --on-unknown dead_letter --dead-letter 2>"$T.err")
[ "$(wc -l <<<"$out")" -eq 1 ] || fail "expected one handled line, got: $out"
grep -q "\"id\":\"$id1\"" <<<"$out" || fail "handled message is not $id1"
grep -q '"big":12345678901234567890,"s":"café"' <<<"$out" || fail "--data changed: $out"
grep -q '"trace_id":"trace-kafka"' <<<"$out" || fail "trace_id changed"
dlq=$("$BQ" consume --broker "$B" --queue "$T.dlq" --max 1 --timeout 20 -q)
grep -q "\"id\":\"$id2\"" <<<"$dlq" || fail "unknown URN not dead-lettered: $dlq"
grep -q '"attempts":0,"dead_letter":{"reason":"unknown_urn","error":null' <<<"$dlq" || fail "bad DLQ block: $dlq"

echo "-- retried through the tiers by 'babelqueue kafka reinject', then dead-lettered"
R="$B&retry_topics=1s,2s"
"$BQ" kafka reinject --broker "$R" --topic "$T-jobs" 2>"$T.reinject" &
reinject=$!
"$BQ" publish --broker "$R" --queue "$T-jobs" urn:babel:jobs:run >/dev/null
out=$("$BQ" consume --broker "$R" --queue "$T-jobs" --max 3 --timeout 30 -q --handle urn:none:x:y \
      --max-attempts 3 --dead-letter 2>>"$T.err")
[ -z "$out" ] || fail "nothing should be handled: $out"
dlq=$("$BQ" consume --broker "$B" --queue "$T-jobs.dlq" --max 1 --timeout 20 -q)
grep -q '"attempts":3,"dead_letter":{"reason":"unknown_urn"' <<<"$dlq" || fail "bad retry DLQ: $dlq"
kill -TERM "$reinject"
wait "$reinject" || fail "reinject did not exit 0 on SIGTERM: $(cat "$T.reinject")"
grep -q '2 record(s) re-injected' "$T.reinject" || fail "reinject summary: $(cat "$T.reinject")"

echo "-- an unreachable broker is a clear error"
set +e; "$BQ" publish --broker "kafka://127.0.0.1:1?operation_timeout=1s" --queue "$T" urn:a:b:c >/dev/null 2>"$T.err"; rc=$?; set -e
[ "$rc" -ne 0 ] || fail "publish to an unreachable broker succeeded"
grep -qi 'unavailable' "$T.err" || fail "unclear error: $(cat "$T.err")"
rm -f "$T.err" "$T.reinject"
echo "ok"
