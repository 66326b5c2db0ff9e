#!/usr/bin/env bash
# babelqueue make | check | canon: output, exit codes (0 ok, 1 rejected, 2 usage/IO).
set -u
bq=$1
suite=$2
failures=0
expect() {  # expect <label> <wanted rc> <wanted first line (regex)> -- command...
  local label=$1 want_rc=$2 want_line=$3
  shift 4
  local out rc
  out=$("$@" 2>/dev/null)
  rc=$?
  local first=${out%%$'\n'*}
  if [[ $rc -ne $want_rc || ! $first =~ $want_line ]]; then
    echo "FAIL $label: rc=$rc (want $want_rc), first line '$first' (want /$want_line/)"
    failures=$((failures + 1))
  else
    echo "ok   $label"
  fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

line=$("$bq" make urn:babel:orders:created --data '{"order_id":1042,"amount":99.90}' --queue orders --trace-id trace-1)
[[ $line =~ ^\{\"job\":\"urn:babel:orders:created\",\"trace_id\":\"trace-1\",\"data\":\{\"order_id\":1042,\"amount\":99.90\},\"meta\":\{\"id\":\"[0-9a-f-]{36}\",\"queue\":\"orders\",\"lang\":\"cpp\",\"schema_version\":1,\"created_at\":[0-9]{13}\},\"attempts\":0\}$ ]] \
  && echo "ok   make prints one canonical line" || { echo "FAIL make: $line"; failures=$((failures + 1)); }
printf '%s' "$line" > "$tmp/made.json"
expect "check accepts make output" 0 '^ok urn:babel:orders:created$' -- "$bq" check "$tmp/made.json"
expect "check reads stdin" 0 '^ok urn:babel:orders:created$' -- bash -c "printf '%s' '$line' | '$bq' check -"
expect "canon is a fixed point on canonical input" 0 "^$(printf '%s' "$line" | sed 's/[][\.*^$(){}+?|/]/\\&/g')\$" -- "$bq" canon "$tmp/made.json"
expect "check rejects missing urn" 1 '^missing_urn$' -- "$bq" check "$suite/fixtures/invalid-missing-urn.json"
expect "check rejects schema_version 2" 1 '^unsupported_schema_version$' -- "$bq" check "$suite/fixtures/invalid-unknown-schema-version.json"
printf '{"job":' > "$tmp/broken.json"
expect "check reports malformed json" 1 '^malformed_json$' -- "$bq" check "$tmp/broken.json"
expect "canon rejects too" 1 '^malformed_json$' -- "$bq" canon "$tmp/broken.json"
expect "canon pretty fixture" 0 '^\{"job":"urn:babel:catalog:item.indexed",' -- "$bq" canon "$suite/fixtures/unicode-and-numbers.json"
expect "check missing file is an I/O error" 2 '^$' -- "$bq" check "$tmp/none.json"
expect "make blank urn" 2 '^empty_urn$' -- "$bq" make "   "
expect "make bad data" 2 '^malformed_json$' -- "$bq" make urn:x --data '{'
expect "make non-object data" 2 '^invalid_data$' -- "$bq" make urn:x --data '[1]'
expect "make null data" 2 '^invalid_data$' -- "$bq" make urn:x --data 'null'
expect "make trailing data" 2 '^malformed_json$' -- "$bq" make urn:x --data '{} {}'
# Every number of --data is kept exactly, as the decoder keeps it (no int64/double detour).
for n in -12345678901234567890 -9223372036854775809 12345678901234567890 18446744073709551616 1.10 1E2 1e400 -0.0; do
  re=${n//./\\.}
  expect "make keeps $n" 0 "\"data\":\\{\"n\":$re,\"m\":\\[$re\\]\\}," -- "$bq" make urn:x --data "{\"n\":$n,\"m\":[$n]}"
done
expect "make reads [] as {}" 0 '"data":\{\},' -- "$bq" make urn:x --data ' [ ] '
expect "make trims ASCII around the urn" 0 '^\{"job":"urn:x","trace_id":"t",' -- "$bq" make $' \turn:x\n' --trace-id ' t '
expect "unknown option is usage" 2 '' -- "$bq" check --bogus
"$bq" make --help >/dev/null && "$bq" check --help >/dev/null && "$bq" canon --help >/dev/null \
  && echo "ok   --help" || { echo "FAIL --help"; failures=$((failures + 1)); }
echo "$failures failure(s)"
exit $((failures > 0))
