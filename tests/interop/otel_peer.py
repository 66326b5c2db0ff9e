"""The Python side of the OpenTelemetry interop tests (tests/interop/otel_python_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[redis,otel]`) with the real OpenTelemetry
Python SDK: every span goes to an InMemorySpanExporter of a private TracerProvider (not the
global one), so what is printed is exactly what the SDK recorded. Every command prints one
JSON object per line on stdout; the C++ test parses them. Ids are lowercase hex, as W3C
writes them (trace 32 digits, span 16, parent "" for a root span).

    otel_peer.py publish  URL QUEUE URN             otel.publish one message; prints
                                                    {"id", "trace_id", "stored", "spans"}
    otel_peer.py plain    URL QUEUE URN TRACE_ID    app.publish without OpenTelemetry (no
                                                    headers); prints {"id", "stored"}
    otel_peer.py consume  URL QUEUE URN N           consume N with an otel.wrap_handler handler;
                                                    prints {"stored", "seen", "spans"}
    otel_peer.py trace-ids JSON_ARRAY               for each string: {"in", "trace_id" (32 hex),
                                                    "uuid" (uuid_of of it), "span_id" (the
                                                    synthetic parent's, 16 hex), "sha256" (the
                                                    first 16 bytes of its SHA-256, 32 hex)}

`stored` is the raw values of the Redis list QUEUE (LRANGE) right after the publish / before
the consume: the test checks the `__bq_frame` layout on the wire with it.
"""

import hashlib
import json
import sys

import redis
from babelqueue import BabelQueue, otel
from babelqueue.headers import headers_from_context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

#: How long the runtime's consume waits for a message (seconds).
CONSUME_TIMEOUT = 3.0


def out(obj):
    # ensure_ascii keeps the pipe 7-bit; the C++ side parses the JSON, so values compare exactly.
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def recorder():
    """A private TracerProvider whose spans land in memory; returns (tracer, exporter)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("babelqueue-interop"), exporter


def span_json(span):
    ctx = span.get_span_context()
    return {
        "name": span.name,
        "kind": span.kind.name,  # PRODUCER / CONSUMER
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else "",
        "parent_remote": bool(span.parent.is_remote) if span.parent else False,
        "attributes": dict(span.attributes or {}),
    }


def stored(url, queue):
    return redis.Redis.from_url(url, decode_responses=True).lrange(queue, 0, -1)


def publish(url, queue, urn):
    tracer, exporter = recorder()
    app = BabelQueue(url, queue=queue)
    mid = otel.publish(tracer, app, urn, {"from": "python"})
    values = stored(url, queue)
    # The trace_id otel.publish stamped: read back from the envelope the transport stored.
    body = values[-1]
    frame = json.loads(body)
    envelope = json.loads(frame["body"]) if "__bq_frame" in frame else frame
    out({"id": mid, "trace_id": envelope["trace_id"], "stored": values,
         "spans": [span_json(s) for s in exporter.get_finished_spans()]})


def plain(url, queue, urn, trace_id):
    app = BabelQueue(url, queue=queue)
    mid = app.publish(urn, {"from": "python"}, trace_id=trace_id)
    out({"id": mid, "stored": stored(url, queue)})


def consume(url, queue, urn, n):
    tracer, exporter = recorder()
    values = stored(url, queue)
    app = BabelQueue(url, queue=queue)
    seen = []

    def handler(data, meta, envelope):
        seen.append({"trace_id": envelope.get("trace_id"), "id": meta.get("id"),
                     "headers": dict(headers_from_context())})

    app.register(urn, otel.wrap_handler(tracer, handler))
    app.consume(queue, max_messages=int(n), timeout=CONSUME_TIMEOUT, handle_signals=False)
    out({"stored": values, "seen": seen,
         "spans": [span_json(s) for s in exporter.get_finished_spans()]})


def trace_ids(strings_json):
    for s in json.loads(strings_json):
        tid = otel.trace_id_of(s)
        out({"in": s, "trace_id": format(tid, "032x"), "uuid": otel.uuid_of(tid),
             "span_id": format(otel._span_id_of(s), "016x"),
             "sha256": hashlib.sha256(s.encode("utf-8")).hexdigest()[:32]})


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "plain": plain, "consume": consume, "trace-ids": trace_ids}[cmd](*args)
