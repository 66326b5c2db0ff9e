#!/usr/bin/env bash
# CLI test of the runtime commands: runs the built `babelqueue` binary.
# usage: cli_test.sh BABELQUEUE_BINARY WORK_DIR HAVE_SQLITE(0|1)
set -euo pipefail
BQ=$1
WORK=$2
HAVE_SQLITE=$3
rm -rf "$WORK"
mkdir -p "$WORK"
export BABELQUEUE_BROKER="memory://cli-test"  # never touch the user's default queue file
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {  # expect_rc CODE CMD...
  local want=$1; shift
  set +e; "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat "$WORK/err" >&2; fail "'$*' exited $rc, expected $want"; }
}
wait_lines() {  # wait_lines FILE N SECONDS
  local i=0
  while [ "$(wc -l <"$1")" -lt "$2" ]; do
    i=$((i + 1)); [ $i -gt $(($3 * 20)) ] && fail "timed out waiting for $2 lines in $1"
    sleep 0.05
  done
}

echo "-- demo"
out=$("$BQ" demo) || fail "demo exited $?"
grep -q 'reason=failed error="Payment gateway timeout" exception=shop::payment_gateway_timeout' <<<"$out" || fail "demo: no DLQ block"
grep -q 'attempts=3 original_queue=orders lang=cpp' <<<"$out" || fail "demo: attempts"
grep -q 'attempt 2: calling' <<<"$out" || fail "demo: third attempt missing"

echo "-- usage errors exit 2"
expect_rc 2 "$BQ" publish --queue q "  "
expect_rc 2 "$BQ" publish --queue q urn:a:b:c --data '[1'
expect_rc 2 "$BQ" publish --queue q urn:a:b:c --header novalue
expect_rc 2 "$BQ" publish --broker nosuch://x --queue q urn:a:b:c
grep -q unknown_scheme "$WORK/err" || fail "no unknown_scheme reason"
expect_rc 2 "$BQ" consume --queue q --on-unknown explode
expect_rc 2 "$BQ" consume --queue q --handle " " --max 1
grep -q empty_urn "$WORK/err" || fail "no empty_urn reason for a blank --handle"
expect_rc 2 "$BQ" consume --broker 'memory://x?bogus=1' --queue q --max 1
expect_rc 2 "$BQ" publish urn:a:b:c  # --queue is required

echo "-- publish prints meta.id"
id=$("$BQ" publish --broker memory://t --queue q urn:a:b:c --data '{"n":1}')
[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] || fail "not a UUIDv4: $id"
expect_rc 0 "$BQ" publish --broker memory://t --queue q urn:a:b:c \
  --data '{"neg":-12345678901234567890,"low":-9223372036854775809}'
expect_rc 2 "$BQ" publish --queue q urn:a:b:c --data '[1]'
grep -q invalid_data "$WORK/err" || fail "no invalid_data reason for --data [1]"

echo "-- SIGTERM stops an idle consumer gracefully"
"$BQ" consume --broker memory://idle --queue q -q >"$WORK/idle.out" 2>&1 &
p=$!; pids+=("$p")
sleep 0.3
kill -TERM "$p"
set +e; wait "$p"; rc=$?; set -e
[ "$rc" -eq 0 ] || fail "consume after SIGTERM exited $rc"

if [ "$HAVE_SQLITE" = 1 ]; then
  B="sqlite://$WORK/q.db"
  echo "-- publish in one process, consume in another ($B)"
  id1=$("$BQ" publish --broker "$B" --queue orders urn:babel:orders:created \
        --data '{"order_id":1,"big":12345678901234567890,"neg":-12345678901234567890,"low":-9223372036854775809,"f":1.10,"s":"caf\u00e9"}' \
        --trace-id trace-xyz --header traceparent=00-abc)
  id2=$("$BQ" publish --broker "$B" --queue orders urn:babel:other:thing)
  out=$("$BQ" consume --broker "$B" --queue orders --timeout 0.5 -q \
        --handle urn:babel:orders:created --on-unknown dead_letter --dead-letter)
  [ "$(wc -l <<<"$out")" -eq 1 ] || fail "expected one handled line, got: $out"
  grep -q "\"id\":\"$id1\"" <<<"$out" || fail "handled message is not $id1"
  grep -q '"big":12345678901234567890,"neg":-12345678901234567890,"low":-9223372036854775809,"f":1.10,"s":"café"' <<<"$out" \
    || fail "--data numbers changed: $out"
  grep -q '"trace_id":"trace-xyz"' <<<"$out" || fail "trace_id changed"
  dlq=$("$BQ" consume --broker "$B" --queue orders.dlq --max 1 -q)
  grep -q "\"id\":\"$id2\"" <<<"$dlq" || fail "unknown URN not dead-lettered: $dlq"
  grep -q '"attempts":0,"dead_letter":{"reason":"unknown_urn","error":null' <<<"$dlq" || fail "bad DLQ block: $dlq"

  echo "-- --on-unknown fail: retried, then dead-lettered with the bumped count"
  "$BQ" publish --broker "$B" --queue jobs urn:babel:jobs:run >/dev/null
  out=$("$BQ" consume --broker "$B" --queue jobs --timeout 0.5 -q --handle urn:none:x:y \
        --max-attempts 2 --retry-delay 0s)
  [ -z "$out" ] || fail "nothing should be handled: $out"
  dlq=$("$BQ" consume --broker "$B" --queue jobs.dlq --max 1 -q)
  grep -q '"attempts":2,"dead_letter":{"reason":"unknown_urn"' <<<"$dlq" || fail "bad retry DLQ: $dlq"
  grep -q '"attempts":2,"lang":"cpp"}}$' <<<"$dlq" || fail "dead_letter.attempts: $dlq"

  echo "-- --max N takes exactly N"
  for i in 1 2 3; do "$BQ" publish --broker "$B" --queue three urn:a:b:c --data "{\"i\":$i}" >/dev/null; done
  out=$("$BQ" consume --broker "$B" --queue three --max 2 -q)
  [ "$(wc -l <<<"$out")" -eq 2 ] || fail "--max 2 printed: $out"
  out=$("$BQ" consume --broker "$B" --queue three --timeout 0.3 -q)
  grep -q '"i":3' <<<"$out" || fail "third message lost: $out"

  echo "-- SIGTERM under load: nothing lost"
  "$BQ" consume --broker "$B" --queue load --workers 2 -q >"$WORK/load.out" 2>"$WORK/load.err" &
  p=$!; pids+=("$p")
  for i in $(seq 1 20); do "$BQ" publish --broker "$B" --queue load urn:a:b:c --data "{\"i\":$i}" >/dev/null; done
  wait_lines "$WORK/load.out" 5 20
  kill -TERM "$p"
  set +e; wait "$p"; rc=$?; set -e
  [ "$rc" -eq 0 ] || { cat "$WORK/load.err" >&2; fail "loaded consume after SIGTERM exited $rc"; }
  got=$(wc -l <"$WORK/load.out")
  rest=$("$BQ" consume --broker "$B" --queue load --timeout 0.5 -q | grep -c . || true)
  [ $((got + rest)) -eq 20 ] || fail "handled $got + left $rest != 20"
fi
if [ "$HAVE_SQLITE" = 1 ]; then
  B="sqlite://$WORK/time.db"
  echo "-- publish --delay / --at: not before, then delivered; bad times exit 2, nothing sent"
  "$BQ" publish --broker "$B" --queue later urn:babel:t:later --delay 1500ms >/dev/null
  out=$("$BQ" consume --broker "$B" --queue later --timeout 0.5 -q)
  [ -z "$out" ] || fail "a 1.5 s delayed message arrived at once: $out"
  sleep 1.2
  out=$("$BQ" consume --broker "$B" --queue later --max 1 -q)
  grep -q '"job":"urn:babel:t:later"' <<<"$out" || fail "delayed message never came: $out"
  at=$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%SZ)
  "$BQ" publish --broker "$B" --queue later urn:babel:t:at --at "$at" >/dev/null
  out=$("$BQ" consume --broker "$B" --queue later --max 1 -q)
  grep -q '"job":"urn:babel:t:at"' <<<"$out" || fail "--at message never came: $out"
  expect_rc 2 "$BQ" publish --broker "$B" --queue later urn:a:b:c --delay 30
  grep -q "bare number is ambiguous" "$WORK/err" || fail "bare --delay: $(cat "$WORK/err")"
  expect_rc 2 "$BQ" publish --broker "$B" --queue later urn:a:b:c --delay=-1s
  expect_rc 2 "$BQ" publish --broker "$B" --queue later urn:a:b:c --at 2020-01-01T00:00:00Z
  grep -q "in the past" "$WORK/err" || fail "past --at: $(cat "$WORK/err")"
  expect_rc 2 "$BQ" publish --broker "$B" --queue later urn:a:b:c --at 2026-12-24T09:00:00
  expect_rc 2 "$BQ" publish --broker "$B" --queue later urn:a:b:c --at 2026-02-30T09:00:00Z
  expect_rc 2 "$BQ" publish --broker "$B" --queue later urn:a:b:c --delay 1s --at 2030-01-01T00:00:00Z
  out=$("$BQ" consume --broker "$B" --queue later --timeout 0.3 -q)
  [ -z "$out" ] || fail "a refused publish sent something: $out"

  echo "-- --on-unknown release with --timeout returns within it (no busy loop)"
  "$BQ" publish --broker "$B" --queue spin urn:babel:nobody:knows >/dev/null
  start=$(date +%s%N)
  "$BQ" consume --broker "$B" --queue spin --handle urn:other:a:b --on-unknown release \
    --timeout 1 -q >/dev/null
  took=$((($(date +%s%N) - start) / 1000000))
  [ "$took" -lt 2500 ] || fail "consume --timeout 1 took $took ms with a released message waiting"

  echo "-- consume dead-letters by default; --no-dead-letter drops with a warning"
  "$BQ" publish --broker "$B" --queue dl urn:babel:nobody:knows >/dev/null
  "$BQ" consume --broker "$B" --queue dl --handle urn:other:a:b --on-unknown dead_letter \
    --timeout 0.5 -q >/dev/null
  dlq=$("$BQ" consume --broker "$B" --queue dl.dlq --max 1 -q)
  grep -q '"reason":"unknown_urn"' <<<"$dlq" || fail "not dead-lettered by default: $dlq"
  "$BQ" publish --broker "$B" --queue dl urn:babel:nobody:knows >/dev/null
  "$BQ" consume --broker "$B" --queue dl --handle urn:other:a:b --on-unknown dead_letter \
    --timeout 0.5 -q --no-dead-letter >/dev/null 2>"$WORK/nodl.err"
  grep -q "warning: --no-dead-letter" "$WORK/nodl.err" || fail "no warning: $(cat "$WORK/nodl.err")"
  out=$("$BQ" consume --broker "$B" --queue dl.dlq --timeout 0.3 -q)
  [ -z "$out" ] || fail "--no-dead-letter still dead-lettered: $out"
fi

echo "-- no secret in any output of a failing broker open"
for url in 'redis://user:s3cretPW@127.0.0.1:1?connect_timeout=200ms' \
             'nosuch://user:s3cretPW@host/x?password=s3cretPW' 'user:s3cretPW@host'; do
  for cmd in "consume --max 1 --timeout 0.2" "publish urn:babel:t:x"; do
    set +e
    # shellcheck disable=SC2086  # the command's words split on purpose
    out=$("$BQ" ${cmd%% *} --broker "$url" ${cmd#* } 2>&1)
    rc=$?
    set -e
    [ "$rc" -ne 0 ] || fail "$cmd on $url should fail"
    if grep -q s3cretPW <<<"$out"; then fail "secret printed by $cmd: $out"; fi
  done
done
echo "PASS"
