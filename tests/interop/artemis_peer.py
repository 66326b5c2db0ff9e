"""The Python side of the live Artemis interop tests (tests/interop/artemis_python_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[artemis]`, i.e. its ArtemisTransport over
python-qpid-proton's BlockingConnection). URLs are the SDK's own form,
`artemis://user:password@host:port` (translated by the SDK to proton's `amqp://`). The SDK
attaches bare links (no `queue` capability), so the broker needs ANYCAST default routing.
Every command prints one JSON object per line on stdout; the C++ test parses them.

    artemis_peer.py publish  URL QUEUES CASES_JSON  publish each case to each comma-separated queue with
                                                    the runtime; prints {"queue": …, "id": …}
    artemis_peer.py consume  URL QUEUE N            consume N with the runtime; prints what each handler saw,
                                                    plus the raw body the transport handed the runtime
    artemis_peer.py consume-timed URL QUEUE N       the runtime consumes N (polling up to 30 s); prints
                                                    {"polling_ms"} (Unix ms of its first poll), then per message
                                                    the raw body and {"handled_ms"} (when its handler ran)
    artemis_peer.py inspect  URL QUEUE N            N messages read by a bare python-qpid-proton receiver
                                                    (accepted); prints every section it decoded, typed
    artemis_peer.py read-dlq URL QUEUE              one ArtemisTransport pop + ack; prints the decoded envelope
    artemis_peer.py failing  URL QUEUE              publish one message and fail it until the DLQ (left in
                                                    QUEUE.dlq); prints the attempts the handler saw
    artemis_peer.py fail     URL QUEUE N            consume N deliveries with an always-failing handler
                                                    (max_attempts 3, dead-lettering on)
    artemis_peer.py release-unknown URL QUEUE       consume one message whose URN has no handler with
                                                    on_unknown_urn=release and a 30 s release delay
"""

import sys

from cproton import pn_message_get_content_type
from proton.utils import BlockingConnection

import peer_common
from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.headers import headers_from_context
from babelqueue.routing import UnknownUrnStrategy
from peer_common import out


def _amqp_url(url):
    return "amqp://" + url[len("artemis://"):] if url.startswith("artemis://") else url


def _typed(value):
    """A value as proton decoded it, with its Python type name (str / symbol / int / bytes ...)."""
    kind = type(value).__name__
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    elif not isinstance(value, (bool, int, float)) and value is not None:
        value = str(value)
    return {"type": kind, "value": value}


def publish(url, queues, cases_json):
    for q in queues.split(","):
        peer_common.publish(url, q, cases_json)


def consume(url, queue, n):
    """peer_common.consume, plus the raw body of each delivery (what ArtemisTransport.pop
    handed the runtime): the test checks it byte for byte."""
    app = BabelQueue(url, queue=queue)
    raw = []
    pop = app.transport.pop

    def recording_pop(q, timeout=1.0):
        m = pop(q, timeout=timeout)
        if m is not None:
            raw.append(m.body)
        return m

    app.transport.pop = recording_pop
    seen = []

    def handler(data, meta, envelope):
        seen.append({"urn": envelope.get("job"), "trace_id": envelope.get("trace_id"),
                     "attempts": envelope.get("attempts"), "data": data, "meta": meta,
                     "headers": dict(headers_from_context()), "raw": raw[-1]})

    for urn in peer_common.URNS:
        app.register(urn, handler)
    app.consume(queue, max_messages=int(n), timeout=peer_common.CONSUME_TIMEOUT, handle_signals=False)
    peer_common.close(app)
    for s in seen:
        out(s)


def inspect(url, queue, n):
    """What a bare python-qpid-proton receiver (the SDK's client library, no SDK code) sees."""
    conn = BlockingConnection(_amqp_url(url))
    rcv = conn.create_receiver(queue, credit=int(n))
    for _ in range(int(n)):
        try:
            m = rcv.receive(timeout=5)
        except Exception as exc:  # noqa: BLE001 - proton.Timeout
            out({"error": type(exc).__name__})
            break
        out({
            "body": _typed(m.body),
            "inferred": m.inferred,
            "durable": m.durable,
            "delivery_count": m.delivery_count,
            "subject": m.subject,
            # Message.content_type turns an absent content-type into symbol('None'): ask the C API.
            "content_type": pn_message_get_content_type(m._msg),
            "correlation_id": _typed(m.correlation_id),
            "message_id": _typed(m.id),
            "creation_time_ms": round(m.creation_time * 1000),
            "annotations": {str(k): _typed(v) for k, v in (m.annotations or {}).items()},
            "properties": {str(k): _typed(v) for k, v in (m.properties or {}).items()},
        })
        rcv.accept()
    conn.close()


def read_dlq(url, queue):
    app = BabelQueue(url, queue=queue)
    t = app.transport
    msg = t.pop(queue, timeout=5.0)
    if msg is None:
        out({"error": "empty"})
        return
    env = EnvelopeCodec.decode(msg.body)
    out({"envelope": env, "accepts": EnvelopeCodec.accepts(env), "headers": dict(msg.headers)})
    t.ack(msg)
    t.close()


def _failing_app(url, queue):
    app = BabelQueue(url, queue=queue, max_attempts=3, dead_letter=True)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("always fails")

    app.register("urn:babel:interop:fails", handler)
    return app, seen


def failing(url, queue):
    app, seen = _failing_app(url, queue)
    mid = app.publish("urn:babel:interop:fails", {"n": 1}, trace_id="trace-py-fails")
    app.consume(queue, max_messages=3, timeout=3.0, handle_signals=False)
    peer_common.close(app)
    out({"seen": seen, "id": mid})


def fail(url, queue, n):
    app, seen = _failing_app(url, queue)
    app.consume(queue, max_messages=int(n), timeout=3.0, handle_signals=False)
    peer_common.close(app)
    out({"seen": seen})


def release_unknown(url, queue):
    app = BabelQueue(url, queue=queue, on_unknown_urn=UnknownUrnStrategy.RELEASE,
                     unknown_urn_release_delay=30.0)
    app.register("urn:babel:interop:other", lambda data, meta: None)
    n = app.consume(queue, max_messages=1, timeout=3.0, handle_signals=False)
    peer_common.close(app)
    out({"processed": n})


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "consume": consume, "inspect": inspect, "read-dlq": read_dlq,
     "failing": failing, "fail": fail, "release-unknown": release_unknown,
     "consume-timed": peer_common.consume_timed}[cmd](*args)
