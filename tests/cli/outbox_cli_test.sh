#!/usr/bin/env bash
# `babelqueue outbox relay|list|retry` as an operator runs them, on a sqlite outbox and a
# sqlite:// queue: the relay runs as a process, publishes what is pending, keeps polling, and
# stops on SIGTERM with exit 0 and its summary; list shows rows by status; retry of a row that
# is not parked changes nothing (exit 1); a bad --db is a usage error (exit 2).
# usage: outbox_cli_test.sh BABELQUEUE_BINARY
set -euo pipefail
BQ=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d)
relay_pid=
trap '[ -n "$relay_pid" ] && kill -9 "$relay_pid" 2>/dev/null; rm -rf "$dir"' EXIT
DB="sqlite://$dir/app.db"
Q="sqlite://$dir/q.db"

# Rows written by the producer's own transaction (the sqlite3 CLI stands in for the app; the
# table is the store's, created by `outbox list` -> migrate()).
"$BQ" outbox list --db "$DB" >/dev/null
body1=$("$BQ" make urn:babel:orders:created --queue orders --data '{"n":1}')
body2=$("$BQ" make urn:babel:orders:created --queue orders --data '{"n":2}')
python3 - "$dir/app.db" "$body1" "$body2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
with db:
    for b in sys.argv[2:]:
        db.execute("INSERT INTO babelqueue_outbox (queue, body, created_at) VALUES ('orders', ?, "
                   "strftime('%Y-%m-%dT%H:%M:%SZ','now'))", (b.encode(),))
PY
out=$("$BQ" outbox list --db "$DB" --status pending)
[ "$(grep -c $'\tpending\t' <<<"$out")" -eq 2 ] || fail "list: $out"

echo "-- relay as a process; SIGTERM stops it gracefully"
"$BQ" outbox relay --db "$DB" --broker "$Q" --poll 0.1 >"$dir/relay.out" 2>"$dir/relay.err" &
relay_pid=$!
for _ in $(seq 1 100); do
  n=$("$BQ" outbox list --db "$DB" --status published | grep -c $'\tpublished\t' || true)
  [ "$n" -eq 2 ] && break
  sleep 0.1
done
[ "$n" -eq 2 ] || fail "the relay did not publish both rows: $(cat "$dir/relay.err")"
kill -TERM "$relay_pid"
set +e
wait "$relay_pid"
rc=$?
set -e
relay_pid=
[ $rc -eq 0 ] || fail "relay exited $rc after SIGTERM"
grep -q "relayed 2 row(s), 0 failed" "$dir/relay.out" || fail "summary: $(cat "$dir/relay.out")"
got=$("$BQ" consume --broker "$Q" --queue orders --timeout 1 -q --handle urn:babel:orders:created)
[ "$got" = "$(printf '%s\n%s' "$body1" "$body2")" ] || fail "published bytes differ: $got"

echo "-- list --json, retry, usage errors"
"$BQ" outbox list --db "$DB" --json | python3 -c '
import json, sys
rows = json.load(sys.stdin)
assert [r["status"] for r in rows] == ["published", "published"], rows
assert all(r["queue"] == "orders" and r["attempts"] == 0 for r in rows), rows' || fail "list --json"
set +e
"$BQ" outbox retry --db "$DB" 1 >/dev/null; rc1=$?
"$BQ" outbox list --db "mysql://x" >/dev/null 2>&1; rc2=$?
set -e
[ $rc1 -eq 1 ] || fail "retry of a published row exited $rc1, not 1"
[ $rc2 -eq 2 ] || fail "a bad --db exited $rc2, not 2"
echo ok
