#!/usr/bin/env bash
# The CLI over a queue broker (amqp://, artemis://, sqs://, pulsar://): publish in one process, consume in
# another against the shared server; stdout carries only the messages; unknown URNs are
# dead-lettered; retries counted; SIGTERM during consume ends it cleanly with exit 0; a refused
# login is a clear error without the password.
# SQS (SERVICE=sqs) differs: queues must exist, so the URL gets `create_queues=true`; the
# dead-letter queue of Q is the SQS queue `Q-dlq`, which the CLI still consumes by the contract
# name `Q.dlq` (the transport maps it); and its URL holds no password, so instead a missing
# queue, an unreachable endpoint and an invalid option must each be a clear error, and a
# `--header k=v` must arrive as a String message attribute (read with curl's own SigV4, as
# scripts/services.sh probes the server).
# usage: broker_cli_test.sh BABELQUEUE_BINARY URL_VARIABLE SERVICE
#   e.g. broker_cli_test.sh build/dev/cli/babelqueue BABELQUEUE_ARTEMIS_URL artemis
set -euo pipefail
BQ=$1 VAR=$2 SERVICE=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ -z "${!VAR:-}" ]; then
  if [ "${BABELQUEUE_REQUIRE_SERVICES:-}" = 1 ] || [ "${CI:-}" = true ]; then
    fail "$VAR is not set (scripts/services.sh start $SERVICE)"
  fi
  echo "skipped: no $SERVICE (scripts/services.sh start $SERVICE)"; exit 0
fi
B=${!VAR}
Q="bq-cli-$$"
if [ "$SERVICE" = sqs ]; then
  # The test server checks no signatures; any key will do (as tests/sqs/sqs_fixture.hpp).
  export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}
  PLAIN=$B
  B="$B&create_queues=true"
fi

echo "-- publish in one process, consume in another ($Q)"
id1=$("$BQ" publish --broker "$B" --queue "$Q" urn:babel:orders:created \
      --data '{"order_id":1,"big":12345678901234567890,"s":"caf\u00e9"}' \
      --trace-id trace-cli --header traceparent=00-abc)
id2=$("$BQ" publish --broker "$B" --queue "$Q" urn:babel:other:thing)
[ ${#id1} -eq 36 ] || fail "publish printed '$id1', not a meta.id"
out=$("$BQ" consume --broker "$B" --queue "$Q" --timeout 1 -q \
      --handle urn:babel:orders:created --on-unknown dead_letter --dead-letter)
[ "$(wc -l <<<"$out")" -eq 1 ] || fail "expected one handled line, got: $out"
grep -q "\"id\":\"$id1\"" <<<"$out" || fail "handled message is not $id1"
grep -q '"big":12345678901234567890,"s":"café"' <<<"$out" || fail "--data changed: $out"
grep -q '"trace_id":"trace-cli"' <<<"$out" || fail "trace_id changed"
dlq=$("$BQ" consume --broker "$B" --queue "$Q.dlq" --max 1 -q)
grep -q "\"id\":\"$id2\"" <<<"$dlq" || fail "unknown URN not dead-lettered: $dlq"
grep -q '"attempts":0,"dead_letter":{"reason":"unknown_urn","error":null' <<<"$dlq" || fail "bad DLQ block: $dlq"

echo "-- retried, then dead-lettered with the bumped count"
"$BQ" publish --broker "$B" --queue "$Q-jobs" urn:babel:jobs:run >/dev/null
out=$("$BQ" consume --broker "$B" --queue "$Q-jobs" --timeout 1 -q --handle urn:none:x:y \
      --max-attempts 2 --dead-letter --retry-delay 0s)
[ -z "$out" ] || fail "nothing should be handled: $out"
dlq=$("$BQ" consume --broker "$B" --queue "$Q-jobs.dlq" --max 1 -q)
grep -q '"attempts":2,"dead_letter":{"reason":"unknown_urn"' <<<"$dlq" || fail "bad retry DLQ: $dlq"

# `must_fail WHAT PATTERN CMD...`: CMD fails and says PATTERN on stderr.
must_fail() {
  local what=$1 pattern=$2; shift 2
  set +e; "$@" >/dev/null 2>"$Q.err"; local rc=$?; set -e
  [ "$rc" -ne 0 ] || fail "$what succeeded"
  grep -q "$pattern" "$Q.err" || fail "$what: unclear error: $(cat "$Q.err")"
  echo "   $what: $(head -1 "$Q.err")"
  rm -f "$Q.err"
}

echo "-- SIGTERM during consume: a clean close and exit 0 (issue #38)"
# The broker client's own threads start when the transport opens, before consume installs
# its graceful stop; the CLI blocks both signals before any thread starts, so no such thread
# can take the signal and die of it (RabbitMQ and Artemis did: exit 143, 5 of 5 tries).
for try in 1 2 3; do
  "$BQ" consume --broker "$B" --queue "$Q-sigterm" >/dev/null 2>"$Q.err" &
  pid=$!
  sleep 2
  kill -TERM "$pid"
  set +e; wait "$pid"; rc=$?; set -e
  [ "$rc" -eq 0 ] || fail "consume ended by SIGTERM with exit $rc (try $try): $(tail -3 "$Q.err")"
  grep -q "consume stopped" "$Q.err" || fail "consume did not stop cleanly: $(tail -3 "$Q.err")"
done
rm -f "$Q.err"
echo "   3 of 3: exit 0, stopped cleanly"

if [ "$SERVICE" = pulsar ]; then
  # The test broker has no authentication: instead an unreachable broker and an invalid
  # option must each be a clear error (the client's own log lines stay off stdout: the
  # one-line checks above would have failed).
  echo "-- an unreachable broker and an invalid option are clear errors"
  dead=$(sed -E 's#^(pulsar://[^:/?]*):[0-9]+#\1:1#' <<<"$B")
  [ "$dead" != "$B" ] || fail "cannot rewrite the port of $B"
  must_fail "publish to an unreachable broker" 'unavailable\|timeout' \
    "$BQ" publish --broker "$dead?operation_timeout=2s&connect_timeout=1s" --queue "$Q" urn:a:b:c
  must_fail "an unknown option" 'invalid_argument' \
    "$BQ" publish --broker "$B?subscripton=x" --queue "$Q" urn:a:b:c
  must_fail "an invalid subscription type" 'subscription_type' \
    "$BQ" publish --broker "$B?subscription_type=round_robin" --queue "$Q" urn:a:b:c
  echo "ok"
  exit 0
fi

if [ "$SERVICE" != sqs ]; then
  echo "-- a refused login is a clear error, without the password"
  bad=$(sed -E 's#//[^:]*:[^@]*@#//guest:Wr0ngPass@#' <<<"$B")
  set +e; "$BQ" publish --broker "$bad" --queue "$Q" urn:a:b:c >/dev/null 2>"$Q.err"; rc=$?; set -e
  [ "$rc" -ne 0 ] || fail "publish with a wrong password succeeded"
  grep -q 'Wr0ngPass' "$Q.err" && fail "the password was printed: $(cat "$Q.err")"
  grep -qi 'permission\|refused\|ACCESS' "$Q.err" || fail "unclear error: $(cat "$Q.err")"
  rm -f "$Q.err"
  echo "ok"
  exit 0
fi

# SQS only from here.

echo "-- --header k=v is a String message attribute beside the bq-* ones"
command -v curl >/dev/null || fail "curl is needed to read the message attributes"
endpoint=$(sed -E 's/.*[?&]endpoint=([^&]*).*/\1/' <<<"$PLAIN")
region=$(sed -E 's#^sqs://([^?/]*).*#\1#' <<<"$PLAIN")
sqs() {  # sqs OPERATION JSON: one SigV4-signed AWS JSON 1.0 call (the bare API, no SDK)
  curl -sS -X POST "$endpoint/" --aws-sigv4 "aws:amz:${region:-us-east-1}:sqs" \
       --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
       -H 'Content-Type: application/x-amz-json-1.0' -H "X-Amz-Target: AmazonSQS.$1" -d "$2"
}
id3=$("$BQ" publish --broker "$B" --queue "$Q-hdr" urn:babel:orders:created --trace-id trace-hdr \
      --header traceparent=00-abc --header tenant=acme)
qurl=$(sqs GetQueueUrl "{\"QueueName\":\"$Q-hdr\"}" | sed -E 's/.*"QueueUrl":"([^"]*)".*/\1/')
msg=$(sqs ReceiveMessage "{\"QueueUrl\":\"$qurl\",\"MessageAttributeNames\":[\"All\"],\"WaitTimeSeconds\":5}")
attr() {  # attr NAME TYPE VALUE: the message carries attribute NAME of that type and value
  local a; a=$(grep -o "\"$1\":{[^}]*}" <<<"$msg") || fail "no attribute $1: $msg"
  grep -q "\"DataType\":\"$2\"" <<<"$a" || fail "$1 is not a $2: $a"
  grep -q "\"StringValue\":\"$3\"" <<<"$a" || fail "$1 is not '$3': $a"
}
attr traceparent String 00-abc
attr tenant String acme
attr bq-job String urn:babel:orders:created
attr bq-trace-id String trace-hdr
attr bq-message-id String "$id3"
attr bq-source-lang String cpp
attr bq-schema-version Number 1

echo "-- the dead-letter queues above are the SQS queues Q-dlq, not Q.dlq"
for q in "$Q" "$Q-jobs"; do
  sqs GetQueueUrl "{\"QueueName\":\"$q-dlq\"}" | grep -q '"QueueUrl"' || fail "no SQS queue $q-dlq"
  if sqs GetQueueUrl "{\"QueueName\":\"$q.dlq\"}" | grep -q '"QueueUrl"'; then
    fail "an SQS queue $q.dlq exists"
  fi
done

echo "-- a missing queue, an unreachable endpoint and an invalid option are clear errors"
must_fail "publish to a queue that does not exist (no create_queues)" 'not_found' \
  "$BQ" publish --broker "$PLAIN" --queue "$Q-missing" urn:a:b:c
# Port 1 on the loopback: nothing listens there, so the connection is refused at once.
dead=$(sed -E 's#(endpoint=http://[^:/&]*):[0-9]+#\1:1#' <<<"$PLAIN")
[ "$dead" != "$PLAIN" ] || fail "cannot rewrite the endpoint port of $PLAIN"
must_fail "publish to an unreachable endpoint" 'unavailable' \
  "$BQ" publish --broker "$dead" --queue "$Q" urn:a:b:c
must_fail "consume from an unreachable endpoint" 'unavailable' \
  "$BQ" consume --broker "$dead" --queue "$Q" --max 1 --timeout 1 -q
must_fail "batch=11 (SQS takes at most 10)" 'invalid_argument' \
  "$BQ" publish --broker "$PLAIN&batch=11" --queue "$Q" urn:a:b:c
must_fail "an unknown option" 'invalid_argument' \
  "$BQ" publish --broker "$PLAIN&content_dedup=1" --queue "$Q" urn:a:b:c
echo "ok"
