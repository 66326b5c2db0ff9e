#!/usr/bin/env bash
# The CLI's OpenTelemetry export (cli/telemetry.hpp, docs/otel.md "The CLI"): `publish` and
# `consume` in separate processes over one sqlite:// file, their spans sent by OTLP/HTTP to a
# local receiver (otlp_receiver.py, which writes each span as a JSON line), or printed on
# stderr by the console exporter. No timing is asserted: an exporting CLI waits for the
# receiver's reply before it exits, and the receiver writes the spans before replying, so
# after the commands ran their spans are in the file (and "nothing" means nothing was sent).
# Needs the Python peer with opentelemetry-proto ($BABELQUEUE_PEER_PYTHON, else
# build/peer-python.txt: scripts/setup-python-peer.sh); without it the test is skipped (77),
# except under CI=true or BABELQUEUE_REQUIRE_SERVICES=1, where it fails.
# usage: otel_cli_test.sh BABELQUEUE_BINARY
set -euo pipefail
BQ=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${BABELQUEUE_REQUIRE_SERVICES:-}" = 1 ] || [ "${CI:-}" = true ]; then fail "$*"; fi
  echo "skipped: $*"; exit 77
}

PY=${BABELQUEUE_PEER_PYTHON:-}
if [ -z "$PY" ] && [ -f "$repo/build/peer-python.txt" ]; then PY=$(head -1 "$repo/build/peer-python.txt"); fi
[ -n "$PY" ] && [ -x "$PY" ] || skip "no Python peer (scripts/setup-python-peer.sh)"
"$PY" -c 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2' 2>/dev/null ||
  skip "the Python peer $PY lacks opentelemetry-proto (scripts/setup-python-peer.sh)"

# The cases set their own OTEL_* variables; none may leak in from the caller. The exporter
# (libcurl) honours http_proxy: the receiver is local.
while read -r var; do unset "$var"; done < <(compgen -e | grep '^OTEL_' || true)
export no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}" NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}"

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
B="sqlite://$tmp/queue.db"
URN=urn:babel:orders:created

# start_receiver NAME [PORT]: a receiver writing $tmp/NAME.jsonl; sets $port. Fails (1) when
# it cannot listen (e.g. PORT is taken).
start_receiver() {
  local name=$1 pid
  "$PY" "$here/otlp_receiver.py" "$tmp/$name.jsonl" ${2:+"$2"} >"$tmp/$name.port" 2>"$tmp/$name.err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 200); do  # bounded: the interpreter starting, at most ~20 s
    [ -s "$tmp/$name.port" ] && break
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  port=$(head -1 "$tmp/$name.port")
  [ -n "$port" ]
}
spans() { wc -l <"$tmp/$1.jsonl"; }

# The span assertions, per case: check.py CASE SPANS_FILE ARGS...
cat >"$tmp/check.py" <<'EOF'
import hashlib, json, sys

PRODUCER, CONSUMER, ERROR = 4, 5, 2  # opentelemetry.proto SpanKind / Status.StatusCode

def fail(msg): sys.exit("FAIL: " + msg)
def expect(cond, msg):
    if not cond: fail(msg)
def load(path): return [json.loads(line) for line in open(path, encoding="utf-8")]
def only(spans, name):
    found = [s for s in spans if s["name"] == name]
    expect(len(found) == 1, f"one '{name}' span expected, got {[s['name'] for s in spans]}")
    return found[0]
def uuid(h): return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
def attr(span, key, want):
    got = span["attributes"].get(key)
    expect(got == want and type(got) is type(want),
           f"{span['name']}: {key} = {got!r}, want {want!r}")

def trace(path, url_path, service, queue, urn, msg_id, body):
    """publish then consume of one message without --trace-id."""
    spans = load(path)
    expect(len(spans) == 2, f"two spans expected, got {[s['name'] for s in spans]}")
    pub, proc = only(spans, "publish " + urn), only(spans, "process " + urn)
    env = json.loads(body)
    for s in spans:
        expect(s["path"] == url_path, f"{s['name']} sent to {s['path']}, want {url_path}")
        expect(s["resource"].get("service.name") == service,
               f"service.name {s['resource'].get('service.name')!r}, want {service!r}")
    expect(pub["kind"] == PRODUCER, f"publish kind {pub['kind']}")
    expect(proc["kind"] == CONSUMER, f"process kind {proc['kind']}")
    expect(pub["parent_span_id"] == "", "the publish span of a fresh message is a root")
    expect(proc["trace_id"] == pub["trace_id"], "publish and process are not one trace")
    expect(proc["parent_span_id"] == pub["span_id"], "process is not the child of publish")
    expect(env["meta"]["id"] == msg_id, "consumed another message")
    expect(env["trace_id"] == uuid(pub["trace_id"]),
           f"trace_id {env['trace_id']} is not the span's trace {pub['trace_id']}")
    for span, operation in ((pub, "publish"), (proc, "process")):
        attr(span, "messaging.system", "babelqueue")
        attr(span, "messaging.operation", operation)
        attr(span, "messaging.destination.name", queue)
        attr(span, "messaging.message.id", msg_id)
        attr(span, "messaging.message.conversation_id", env["trace_id"])
        expect(span["status"]["code"] != ERROR, f"{span['name']} has status Error")
    attr(proc, "messaging.babelqueue.attempts", 0)
    attr(proc, "messaging.babelqueue.outcome", "acked")

def dead_letter(path, urn, queue, trace_id):
    """An unknown URN under `fail` with --max-attempts 1 --dead-letter, and --trace-id."""
    spans = load(path)
    proc = only(spans, "process " + urn)
    expect(proc["status"]["code"] == ERROR, "the failed delivery's span is not Error")
    expect(any(e["name"] == "exception" for e in proc["events"]), "no exception event")
    attr(proc, "messaging.babelqueue.attempts", 0)
    attr(proc, "messaging.babelqueue.outcome", "dead_lettered")
    attr(proc, "messaging.babelqueue.next_attempts", 1)
    attr(proc, "messaging.babelqueue.dead_letter.reason", "unknown_urn")
    attr(proc, "messaging.babelqueue.dead_letter.queue", queue + ".dlq")
    dlq = [s for s in spans
           if s["attributes"].get("messaging.babelqueue.publish_kind") == "dead_letter"]
    expect(len(dlq) == 1, "one dead-letter publish span expected")
    expect(dlq[0]["kind"] == PRODUCER, "dead-letter span kind")
    expect(dlq[0]["parent_span_id"] == proc["span_id"], "dead-letter is not the child of process")
    attr(dlq[0], "messaging.destination.name", queue + ".dlq")
    # --trace-id is kept (GR-4); not a UUID, so its TraceID is the first 16 SHA-256 bytes.
    want = hashlib.sha256(trace_id.encode()).digest()[:16].hex()
    for s in spans:
        expect(s["trace_id"] == want, f"{s['name']}: trace {s['trace_id']}, want {want}")
        attr(s, "messaging.message.conversation_id", trace_id)

def acked(path, urn, url_path):
    """One delivery processed, nothing else."""
    spans = load(path)
    expect(len(spans) == 1, f"one span expected, got {[s['name'] for s in spans]}")
    proc = only(spans, "process " + urn)
    expect(proc["path"] == url_path, f"sent to {proc['path']}, want {url_path}")
    attr(proc, "messaging.babelqueue.outcome", "acked")

globals()[sys.argv[1]](*sys.argv[2:])
EOF
check() { "$PY" "$tmp/check.py" "$@" || fail "$1 (above)"; }

echo "-- (a) OTEL_EXPORTER_OTLP_ENDPOINT: publish + process on /v1/traces, one trace"
start_receiver a || fail "receiver: $(cat "$tmp/a.err")"
ep="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port"
id=$(env "$ep" OTEL_SERVICE_NAME=bq-otel-test "$BQ" publish --broker "$B" --queue qa "$URN" \
       --data '{"n":1}' 2>"$tmp/a.err1")
[[ $id =~ ^[0-9a-f-]{36}$ ]] || fail "publish printed '$id', not a meta.id"
# A base with a trailing '/' resolves to the same /v1/traces (not //v1/traces).
body=$(env "$ep/" OTEL_SERVICE_NAME=bq-otel-test "$BQ" consume --broker "$B" --queue qa --max 1 -q \
         2>"$tmp/a.err2")
[ "$(wc -l <<<"$body")" -eq 1 ] || fail "consume printed more than the body: $body"
[ ! -s "$tmp/a.err1" ] && [ ! -s "$tmp/a.err2" ] || fail "stderr: $(cat "$tmp"/a.err?)"
check trace "$tmp/a.jsonl" /v1/traces bq-otel-test qa "$URN" "$id" "$body"

echo "-- (b) OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as given; default service.name"
start_receiver b || fail "receiver: $(cat "$tmp/b.err")"
ep="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:$port/custom/path"
id=$(env "$ep" OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 \
       "$BQ" publish --broker "$B" --queue qb "$URN")
body=$(env "$ep" "$BQ" consume --broker "$B" --queue qb --max 1 -q)
check trace "$tmp/b.jsonl" /custom/path babelqueue-cli qb "$URN" "$id" "$body"

echo "-- (c) no OTEL_* variable: the commands work, nothing is exported"
start_receiver c || fail "receiver: $(cat "$tmp/c.err")"
id=$("$BQ" publish --broker "$B" --queue qc "$URN" 2>"$tmp/c.err1")
body=$("$BQ" consume --broker "$B" --queue qc --max 1 -q 2>"$tmp/c.err2")
grep -q "\"id\":\"$id\"" <<<"$body" || fail "consumed '$body', not $id"
[ ! -s "$tmp/c.err1" ] && [ ! -s "$tmp/c.err2" ] || fail "stderr: $(cat "$tmp"/c.err?)"
[ "$(spans c)" -eq 0 ] || fail "spans arrived without OTEL_*: $(cat "$tmp/c.jsonl")"

echo "-- (d) OTEL_SDK_DISABLED=true / OTEL_TRACES_EXPORTER=none win over an endpoint"
start_receiver d || fail "receiver: $(cat "$tmp/d.err")"
ep="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port"
for off in OTEL_SDK_DISABLED=true OTEL_SDK_DISABLED=TRUE OTEL_TRACES_EXPORTER=none; do
  id=$(env "$ep" "$off" "$BQ" publish --broker "$B" --queue qd "$URN")
  body=$(env "$ep" "$off" "$BQ" consume --broker "$B" --queue qd --max 1 -q)
  grep -q "\"id\":\"$id\"" <<<"$body" || fail "$off: consumed '$body', not $id"
  [ "$(spans d)" -eq 0 ] || fail "$off: spans arrived: $(cat "$tmp/d.jsonl")"
done

echo "-- (e) OTEL_TRACES_EXPORTER=console: span text on stderr, stdout unchanged"
start_receiver e || fail "receiver: $(cat "$tmp/e.err")"
ep="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port"
id=$(env "$ep" OTEL_TRACES_EXPORTER=console "$BQ" publish --broker "$B" --queue qe "$URN" \
       2>"$tmp/e.err1")
[[ $id =~ ^[0-9a-f-]{36}$ ]] || fail "publish stdout is not just the id: $id"
grep -q "name          : publish $URN" "$tmp/e.err1" || fail "no publish span on stderr"
grep -q "span kind     : Producer" "$tmp/e.err1" || fail "publish span kind: $(cat "$tmp/e.err1")"
body=$(env "$ep" OTEL_TRACES_EXPORTER=console "$BQ" consume --broker "$B" --queue qe --max 1 -q \
         2>"$tmp/e.err2")
[ "$(wc -l <<<"$body")" -eq 1 ] && grep -q "^{\"job\":\"$URN\".*\"id\":\"$id\"" <<<"$body" ||
  fail "consume stdout is not just the body: $body"
grep -q "name          : process $URN" "$tmp/e.err2" || fail "no process span on stderr"
grep -q "span kind     : Consumer" "$tmp/e.err2" || fail "process span kind"
[ "$(spans e)" -eq 0 ] || fail "console only, yet spans were sent: $(cat "$tmp/e.jsonl")"
# Both exporters at once.
"$BQ" publish --broker "$B" --queue qe2 "$URN" >/dev/null
env "$ep" OTEL_TRACES_EXPORTER=otlp,console "$BQ" consume --broker "$B" --queue qe2 --max 1 -q \
  >/dev/null 2>"$tmp/e.err3"
grep -q "name          : process $URN" "$tmp/e.err3" || fail "otlp,console: nothing on stderr"
check acked "$tmp/e.jsonl" "$URN" /v1/traces

echo "-- (f) a failed delivery: Error status, outcome and the dead-letter child; --trace-id kept"
start_receiver f || fail "receiver: $(cat "$tmp/f.err")"
ep="OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port"
env "$ep" "$BQ" publish --broker "$B" --queue qf "$URN" --trace-id trace-otel-cli >/dev/null
env "$ep" "$BQ" consume --broker "$B" --queue qf --max 1 -q --handle urn:babel:other:thing \
  --max-attempts 1 --dead-letter >/dev/null 2>"$tmp/f.err1"
check dead_letter "$tmp/f.jsonl" "$URN" qf trace-otel-cli

echo "-- (g) a consume stopped by SIGTERM exports its spans before exiting"
start_receiver g || fail "receiver: $(cat "$tmp/g.err")"
env "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port" \
  "$BQ" consume --broker "$B" --queue qg -q >"$tmp/g.out" 2>"$tmp/g.err1" &
consumer=$!
pids+=("$consumer")
"$BQ" publish --broker "$B" --queue qg "$URN" >/dev/null
for _ in $(seq 300); do  # bounded: until the consumer printed the message (~30 s at most)
  [ -s "$tmp/g.out" ] && break
  kill -0 "$consumer" 2>/dev/null || fail "consume ended early: $(cat "$tmp/g.err1")"
  sleep 0.1
done
[ -s "$tmp/g.out" ] || fail "the consumer never printed the message"
kill -TERM "$consumer"
rc=0; wait "$consumer" || rc=$?
[ "$rc" -eq 0 ] || fail "consume stopped by SIGTERM exited $rc: $(cat "$tmp/g.err1")"
check acked "$tmp/g.jsonl" "$URN" /v1/traces

echo "-- validate first: bad --data fails (exit 2) before the broker and the exporter"
start_receiver v || fail "receiver: $(cat "$tmp/v.err")"
rc=0
env "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port" "$BQ" publish \
  --broker "sqlite://$tmp/never.db" --queue qv "$URN" --data '{' >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "bad --data exited $rc, want 2"
[ ! -e "$tmp/never.db" ] || fail "the broker was opened before --data was checked"
[ "$(spans v)" -eq 0 ] || fail "a span was sent for a rejected publish"

echo "-- (h) OTEL_TRACES_EXPORTER=otlp alone: the default endpoint localhost:4318/v1/traces"
if start_receiver h 4318; then
  "$BQ" publish --broker "$B" --queue qh "$URN" >/dev/null
  OTEL_TRACES_EXPORTER=otlp "$BQ" consume --broker "$B" --queue qh --max 1 -q >/dev/null
  check acked "$tmp/h.jsonl" "$URN" /v1/traces
else
  echo "   skipped: port 4318 is taken"
fi
echo "ok"
