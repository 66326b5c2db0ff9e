#!/usr/bin/env bash
# The CLI over a queue broker (amqp://, artemis://): publish in one process, consume in
# another against the shared server; stdout carries only the messages; unknown URNs are
# dead-lettered; retries counted; a refused login is a clear error without the password.
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
      --max-attempts 2 --dead-letter)
[ -z "$out" ] || fail "nothing should be handled: $out"
dlq=$("$BQ" consume --broker "$B" --queue "$Q-jobs.dlq" --max 1 -q)
grep -q '"attempts":2,"dead_letter":{"reason":"unknown_urn"' <<<"$dlq" || fail "bad retry DLQ: $dlq"

echo "-- a refused login is a clear error, without the password"
bad=$(sed -E 's#//[^:]*:[^@]*@#//guest:Wr0ngPass@#' <<<"$B")
set +e; "$BQ" publish --broker "$bad" --queue "$Q" urn:a:b:c >/dev/null 2>"$Q.err"; rc=$?; set -e
[ "$rc" -ne 0 ] || fail "publish with a wrong password succeeded"
grep -q 'Wr0ngPass' "$Q.err" && fail "the password was printed: $(cat "$Q.err")"
grep -qi 'permission\|refused\|ACCESS' "$Q.err" || fail "unclear error: $(cat "$Q.err")"
rm -f "$Q.err"
echo "ok"
