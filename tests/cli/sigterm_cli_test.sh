#!/usr/bin/env bash
# SIGTERM during `babelqueue consume` on the brokers the per-broker CLI tests do not cover
# (tests/cli/broker_cli_test.sh has amqp, artemis, sqs, pulsar; issue #38): Redis (owned and
# Laravel), Kafka, the Service Bus stand-in and sqlite. The CLI blocks SIGINT/SIGTERM before
# any broker client starts a thread, so the signal always reaches its watcher: consume stops,
# closes its transports and exits 0, logging "consume stopped". A broker the environment does
# not name is skipped (or fails under CI / BABELQUEUE_REQUIRE_SERVICES=1).
# usage: sigterm_cli_test.sh BABELQUEUE_BINARY   (with build/services/services.env sourced)
set -uo pipefail
BQ=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
required=0
[[ ${CI:-} == true || ${CI:-} == 1 || ${BABELQUEUE_REQUIRE_SERVICES:-} == 1 ]] && required=1

encode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# The sb:// URL of the stand-in's connection string (Endpoint, SharedAccessKeyName, -Key).
sb_url() {
  local cs=${BABELQUEUE_ASB_CONNECTION_STRING:-} endpoint name key
  [[ -z $cs ]] && return
  endpoint=$(sed -n 's/.*Endpoint=sb:\/\/\([^;/]*\).*/\1/p' <<<"$cs")
  name=$(sed -n 's/.*SharedAccessKeyName=\([^;]*\).*/\1/p' <<<"$cs")
  key=$(sed -n 's/.*SharedAccessKey=\([^;]*\).*/\1/p' <<<"$cs")
  echo "sb://$(encode "$name"):$(encode "$key")@$endpoint?emulator=true"
}

kafka_url=""
[[ -n ${BABELQUEUE_KAFKA_BOOTSTRAP:-} ]] &&
  kafka_url="kafka://$BABELQUEUE_KAFKA_BOOTSTRAP?group=bq-sigterm-$$"
redis=${BABELQUEUE_REDIS_URL:-}
declare -A urls=(
  [redis]=$redis
  [redis_laravel]=${redis:+$redis?laravel=1}
  [kafka]=$kafka_url
  [sb]=$(sb_url)
  [sqlite]="sqlite://$work/queue.db"
)

for name in redis redis_laravel kafka sb sqlite; do
  url=${urls[$name]}
  if [[ -z $url ]]; then
    if ((required)); then
      echo "FAIL: $name: no server in the environment (source build/services/services.env)"
      fail=1
    else
      echo "skip: $name (no server)"
    fi
    continue
  fi
  for try in 1 2; do
    err="$work/$name-$try.err"
    "$BQ" consume --broker "$url" --queue "bq-sigterm-$$" >/dev/null 2>"$err" &
    pid=$!
    sleep 3  # the transport is open and the consumer waits (Kafka: has joined its group)
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    if [[ $rc -ne 0 ]] || ! grep -q "consume stopped" "$err"; then
      echo "FAIL: $name (try $try): exit $rc on SIGTERM: $(tail -3 "$err")"
      fail=1
    fi
  done
  ((fail)) || echo "ok: $name: 2 of 2 exit 0, stopped cleanly"
done
exit $fail
