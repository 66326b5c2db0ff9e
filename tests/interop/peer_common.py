"""What both Python interop peers share (peer.py for Redis, rabbitmq_peer.py for RabbitMQ):
the JSON-lines output and the runtime commands, which are the same on every broker because
the Python runtime (`BabelQueue(url)`) picks its transport from the URL."""

import json
import sys

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
