#!/usr/bin/env bash
# No secret on the CLI's output, whatever characters it holds (issue #38): for each of
# / ? # % @ : + = & ; and a space, a password (or token, SAS key, AWS secret) holding it is
# given raw and percent-encoded to every scheme's `publish` and to `demo`, and to
# `outbox list --db postgresql://` (and its sslmode=prefer refusal), `outbox relay --once` and
# `redrive` (their broker-outage paths); every broker is 127.0.0.1:1 (nothing listens), so each
# command fails, and neither half of the secret may appear in what it printed (stdout and
# stderr).
# usage: secrets_cli_test.sh BABELQUEUE_BINARY
set -uo pipefail
BQ=$1
fail=0
checked=0
# The two halves of every secret: long enough never to occur by chance in an error text.
LEFT=Kq7SeCrEtL
RIGHT=Zr9SeCrEtR

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

encode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# run LABEL COMMAND...: the command's output (bounded in time) must not hold either half.
run() {
  local label=$1
  shift
  local out
  out=$(timeout 60 "$@" 2>&1 </dev/null)
  checked=$((checked + 1))
  if [[ $out == *"$LEFT"* || $out == *"$RIGHT"* ]]; then
    echo "LEAK: $label"
    echo "$out" | grep -E "$LEFT|$RIGHT" | head -3 | sed 's/^/    /'
    fail=1
  fi
}

for c in '/' '?' '#' '%' '@' ':' '+' '=' '&' ';' ' '; do
  secret="$LEFT$c$RIGHT"
  for form in raw encoded; do
    s=$secret
    [[ $form == encoded ]] && s=$(encode "$secret")
    urls=(
      "amqp://guest:$s@127.0.0.1:1/"
      "redis://:$s@127.0.0.1:1?connect_timeout=200ms"
      "redis://alice:$s@127.0.0.1:1?laravel=1&connect_timeout=200ms"
      "artemis://admin:$s@127.0.0.1:1"
      "sb://RootManageSharedAccessKey:$s@127.0.0.1:1"
      "pulsar://127.0.0.1:1?token=$s&operation_timeout=1s"
      "kafka://127.0.0.1:1?rdkafka.security.protocol=sasl_plaintext&rdkafka.sasl.mechanism=PLAIN&rdkafka.sasl.username=u&rdkafka.sasl.password=$s&operation_timeout=1s"
    )
    for url in "${urls[@]}"; do
      run "publish ${url%%:*} ($form '$c')" \
        "$BQ" publish --broker "$url" --queue q urn:babel:secrets:probe --data '{}'
      run "demo ${url%%:*} ($form '$c')" "$BQ" demo --broker "$url"
    done
    # The same URL from the environment (one scheme: the CLI reads it through one path).
    run "publish BABELQUEUE_BROKER amqp ($form '$c')" \
      env BABELQUEUE_BROKER="${urls[0]}" "$BQ" publish --queue q urn:babel:secrets:probe --data '{}'
    run "publish sqs AWS_SECRET_ACCESS_KEY ($form '$c')" \
      env AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$s" AWS_SESSION_TOKEN="$s" \
      "$BQ" publish --broker "sqs://us-east-1?endpoint=http://127.0.0.1:1" --queue q \
      urn:babel:secrets:probe --data '{}'
    if "$BQ" outbox --help >/dev/null 2>&1; then
      run "outbox list postgresql ($form '$c')" \
        "$BQ" outbox list --db "postgresql://babelqueue:$s@127.0.0.1:1/babelqueue?connect_timeout=2"
      # The TLS rule's refusal (sslmode=prefer may fall back to plain text), before connecting.
      run "outbox list postgresql sslmode=prefer ($form '$c')" \
        "$BQ" outbox list --db "postgresql://babelqueue:$s@db.example:5432/babelqueue?sslmode=prefer"
      # The relay's outage path: the broker is down, the pass ends, --once exits 2.
      run "outbox relay amqp ($form '$c')" \
        "$BQ" outbox relay --once --db "sqlite://$work/outbox.db" --broker "${urls[0]}"
    fi
    if "$BQ" redrive --help >/dev/null 2>&1; then
      run "redrive amqp ($form '$c')" "$BQ" redrive --broker "${urls[0]}" --dlq q.dlq
    fi
  done
done
echo "secrets: $checked command runs checked"
exit $fail
