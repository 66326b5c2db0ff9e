#!/usr/bin/env bash
# `babelqueue dlq list|show` and `babelqueue redrive` driven as an operator would, on a sqlite
# queue file: a consumer dead-letters unknown URNs; listing leaves the DLQ as it was (peek);
# show finds one message by meta.id; a dry run changes nothing; filters, --max, --to and
# --bypass redrive exactly what they say, reset (attempts 0, no dead_letter block).
# usage: redrive_cli_test.sh BABELQUEUE_BINARY
set -euo pipefail
BQ=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
B="sqlite://$dir/q.db"
Q=orders

ids=()
for n in 1 2 3; do
  ids+=("$("$BQ" publish --broker "$B" --queue "$Q" urn:babel:other:thing --data "{\"n\":$n}")")
done
"$BQ" publish --broker "$B" --queue "$Q" urn:babel:orders:created >/dev/null
"$BQ" consume --broker "$B" --queue "$Q" --timeout 1 -q --handle urn:babel:orders:created \
  --on-unknown dead_letter --dead-letter >/dev/null

echo "-- dlq list: a table of the three, and the DLQ is not consumed"
out=$("$BQ" dlq list --broker "$B" --queue "$Q.dlq")
grep -q "^META.ID *URN *REASON *ERROR *FAILED_AT *ATTEMPTS" <<<"$out" || fail "no table header: $out"
for id in "${ids[@]}"; do grep -q "^$id .*unknown_urn" <<<"$out" || fail "$id missing: $out"; done
grep -q "3 message(s) in $Q.dlq" <<<"$out" || fail "no count line: $out"
again=$("$BQ" dlq list --broker "$B" --queue "$Q.dlq")
[ "$out" = "$again" ] || fail "listing twice differed (the DLQ changed)"
json=$("$BQ" dlq list --broker "$B" --queue "$Q.dlq" --json --limit 2 --offset 1)
python3 - "$json" "${ids[1]}" "${ids[2]}" <<'PY' || fail "bad --json: $json"
import json, sys
rows = json.loads(sys.argv[1])
assert [r["id"] for r in rows] == sys.argv[2:4], rows
assert all(r["reason"] == "unknown_urn" and r["original_queue"] == "orders" for r in rows), rows
PY

echo "-- dlq show"
shown=$("$BQ" dlq show "${ids[0]}" --broker "$B" --queue "$Q.dlq")
grep -q "^reason: *unknown_urn" <<<"$shown" || fail "show: $shown"
grep -q '"dead_letter":{"reason":"unknown_urn"' <<<"$shown" || fail "show printed no body: $shown"
set +e
"$BQ" dlq show no-such-id --broker "$B" --queue "$Q.dlq" >/dev/null 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "show of an unknown id exited $rc, not 1"

echo "-- redrive --dry-run changes nothing"
plan=$("$BQ" redrive --broker "$B" --dlq "$Q.dlq" --dry-run)
grep -q "dry run: 0 redriven, 3 skipped, 3 taken" <<<"$plan" || fail "dry run: $plan"
[ "$(grep -cE ' dry_run( |$)' <<<"$plan")" -eq 3 ] || fail "dry run rows: $plan"
[ "$("$BQ" dlq list --broker "$B" --queue "$Q.dlq")" = "$out" ] || fail "dry run changed the DLQ"

echo "-- --older-than selects by failed_at; a bad duration is a usage error"
res=$("$BQ" redrive --broker "$B" --dlq "$Q.dlq" --older-than 1d)
grep -q "0 redriven, 3 skipped" <<<"$res" || fail "older-than 1d: $res"
set +e
"$BQ" redrive --broker "$B" --dlq "$Q.dlq" --older-than soon >/dev/null 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "bad --older-than exited $rc"

echo "-- redrive --urn --max 2 --to sandbox --bypass"
res=$("$BQ" redrive --broker "$B" --dlq "$Q.dlq" --urn urn:babel:other:thing --max 2 --to sandbox \
      --bypass --json)
python3 - "$res" <<'PY' || fail "redrive --json: $res"
import json, sys
r = json.loads(sys.argv[1])
assert r["redriven"] == 2 and r["skipped"] == 0, r
assert all(i["to"] == "sandbox" and i["bypassed"] and i["outcome"] == "redriven" for i in r["items"]), r
PY
got=$("$BQ" consume --broker "$B" --queue sandbox --timeout 1 -q --handle urn:babel:other:thing)
[ "$(wc -l <<<"$got")" -eq 2 ] || fail "sandbox got: $got"
grep -q '"attempts":0' <<<"$got" || fail "not reset: $got"
grep -q 'dead_letter' <<<"$got" && fail "dead_letter block kept: $got"
left=$("$BQ" dlq list --broker "$B" --queue "$Q.dlq" --json)
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert len(r)==1 and r[0]["id"]==sys.argv[2], r' \
  "$left" "${ids[2]}" || fail "DLQ left: $left"

echo "-- a message naming another queue than its DLQ's: refused unless --allow-queue"
"$BQ" redrive --broker "$B" --dlq "$Q.dlq" >/dev/null  # the last one home; the DLQ is empty
"$BQ" publish --broker "$B" --queue billing urn:babel:other:thing --data '{"n":9}' >/dev/null
"$BQ" consume --broker "$B" --queue billing --timeout 1 -q --handle urn:babel:orders:created \
  --on-unknown dead_letter --dead-letter >/dev/null
# Moved into orders.dlq (reset: meta.queue billing is all it names now), as a misrouted or
# forged message would be.
"$BQ" redrive --broker "$B" --dlq billing.dlq --to "$Q.dlq" >/dev/null
res=$("$BQ" redrive --broker "$B" --dlq "$Q.dlq" --json)
python3 - "$res" <<'PY' || fail "foreign target not refused: $res"
import json, sys
r = json.loads(sys.argv[1])
assert r["redriven"] == 0 and r["items"][0]["outcome"] == "refused_target", r
assert r["items"][0]["to"] == "billing" and "'orders'" in r["items"][0]["detail"], r
PY
res=$("$BQ" redrive --broker "$B" --dlq "$Q.dlq" --json --allow-queue billing)
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert r["redriven"]==1 and r["items"][0]["to"]=="billing", r' \
  "$res" || fail "--allow-queue: $res"
echo "ok"
