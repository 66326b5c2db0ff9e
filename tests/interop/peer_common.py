"""What both Python interop peers share (peer.py for Redis, rabbitmq_peer.py for RabbitMQ):
the JSON-lines output and the runtime commands, which are the same on every broker because
the Python runtime (`BabelQueue(url)`) picks its transport from the URL."""

import json
import sys
import time

from babelqueue import BabelQueue
from babelqueue.headers import headers_from_context

URNS = ("urn:babel:interop:unicode", "urn:babel:interop:big", "urn:babel:interop:ls",
        "urn:babel:interop:headers")


#: How long the runtime's consume waits for a message (seconds); a peer script may raise it
#: (Kafka: the first poll includes the consumer-group join).
CONSUME_TIMEOUT = 3.0


def make_app(url, queue, **options):
    """The Python runtime for URL; a peer script may replace it (e.g. to build its transport
    with options the URL cannot carry)."""
    return BabelQueue(url, queue=queue, **options)


def out(obj):
    # ensure_ascii keeps the pipe 7-bit; the C++ side parses the JSON, so values compare exactly.
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def close(app):
    closer = getattr(app.transport, "close", None)
    if closer is not None:
        closer()


def publish(url, queue, cases_json):
    """Publishes each case with the runtime; prints {"id": …} per case."""
    app = make_app(url, queue)
    for case in json.loads(cases_json):
        headers = case.get("headers") or {}
        if headers:
            mid = app.publish_with_headers(case["urn"], case["data"], headers, trace_id=case.get("trace_id"))
        else:
            mid = app.publish(case["urn"], case["data"], trace_id=case.get("trace_id"))
        out({"id": mid})
    close(app)


def consume(url, queue, n, urns=None):
    """Consumes N with the runtime; prints what each handler saw. URNS (comma-separated)
    replaces the interop payload set's URNs (the typed-message tests use their own)."""
    app = make_app(url, queue)
    seen = []

    def handler(data, meta, envelope):
        seen.append(
            {
                "urn": envelope.get("job"),
                "trace_id": envelope.get("trace_id"),
                "attempts": envelope.get("attempts"),
                "data": data,
                "meta": meta,
                "headers": dict(headers_from_context()),
            }
        )

    for urn in (urns.split(",") if urns else URNS):
        app.register(urn, handler)
    app.consume(queue, max_messages=int(n), timeout=CONSUME_TIMEOUT, handle_signals=False)
    close(app)
    for s in seen:
        out(s)


def now_ms():
    return int(time.time() * 1000)


def consume_timed(url, queue, n, urns=URNS, within=30.0, emit=None):
    """When a delayed message reached the Python runtime: prints {"polling_ms"} (when the
    runtime first polled, Unix ms), then per message {"handled_ms", "urn", "raw", "attempts"}.
    The test compares polling_ms with the due time ("not before" needs a poller before it) and
    handled_ms with the time the C++ side published. Consumes N, polling up to WITHIN seconds;
    EMIT prints a line (default out; a peer that tags its lines passes its own)."""
    emit = emit or out
    app = BabelQueue(url, queue=queue)
    pop = app.transport.pop
    polling, raw = [], []

    def recording_pop(q, timeout=1.0):
        if not polling:
            polling.append(now_ms())
        m = pop(q, timeout=timeout)
        if m is not None:
            raw.append(m.body)
        return m

    app.transport.pop = recording_pop
    seen = []

    def handler(data, meta, envelope):
        seen.append({"handled_ms": now_ms(), "urn": envelope.get("job"), "raw": raw[-1],
                     "attempts": envelope.get("attempts")})

    for urn in urns:
        app.register(urn, handler)
    done, deadline = 0, time.time() + within
    while done < int(n) and time.time() < deadline:
        done += app.consume(queue, max_messages=int(n) - done, timeout=1.0, handle_signals=False)
    close(app)
    emit({"polling_ms": polling[0] if polling else None})
    for s in seen:
        emit(s)
