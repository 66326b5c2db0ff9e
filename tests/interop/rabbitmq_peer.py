"""The Python side of the live RabbitMQ interop tests (tests/interop/rabbitmq_python_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[amqp]`, i.e. its PikaTransport over pika).
Every command prints one JSON object per line on stdout; the C++ test parses them.

    rabbitmq_peer.py publish   URL QUEUE CASES_JSON  publish each case with the runtime; prints {"id": …}
    rabbitmq_peer.py consume   URL QUEUE N           consume N with the runtime; prints what each handler saw
    rabbitmq_peer.py inspect   URL QUEUE N           N raw pika basic.get (auto-ack); prints body + properties
    rabbitmq_peer.py read-dlq  URL QUEUE             one PikaTransport pop + ack; prints the decoded envelope
    rabbitmq_peer.py failing   URL QUEUE             publish one message and fail it until the DLQ (left in
                                                     QUEUE.dlq); prints the attempts the handler saw
    rabbitmq_peer.py consume-timed URL QUEUE N   the runtime consumes N (polling up to 30 s); prints
                                                     {"polling_ms"}, then {"handled_ms", "raw", …} per message
    rabbitmq_peer.py fail-once URL QUEUE             consume one message with a failing handler (max_attempts 3,
                                                     dead-lettering on): the runtime republishes it with attempts+1
"""

import sys

import pika

from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.pika_transport import PikaTransport

import peer_common
from peer_common import consume, out, publish


def _typed(value):
    """A header value as pika decoded it, with its Python type name (int / str / bytes...)."""
    kind = type(value).__name__
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    return {"type": kind, "value": value}


def inspect(url, queue, n):
    """What a plain pika consumer sees: the AMQP property projection of each message."""
    conn = pika.BlockingConnection(pika.URLParameters(url))
    ch = conn.channel()
    for _ in range(int(n)):
        method, props, body = ch.basic_get(queue=queue, auto_ack=True)
        if method is None:
            out({"error": "empty"})
            break
        out(
            {
                "body": body.decode("utf-8"),
                "content_type": props.content_type,
                "content_encoding": props.content_encoding,
                "delivery_mode": props.delivery_mode,
                "app_id": props.app_id,
                "type": props.type,
                "correlation_id": props.correlation_id,
                "message_id": props.message_id,
                "headers": {k: _typed(v) for k, v in (props.headers or {}).items()},
            }
        )
    conn.close()


def read_dlq(url, queue):
    t = PikaTransport(url)
    msg = t.pop(queue, timeout=3.0)
    if msg is None:
        out({"error": "empty"})
        return
    env = EnvelopeCodec.decode(msg.body)
    out({"envelope": env, "accepts": EnvelopeCodec.accepts(env), "headers": dict(msg.headers)})
    t.ack(msg)
    t.close()


def failing(url, queue):
    app = BabelQueue(url, queue=queue, max_attempts=3, dead_letter=True)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("always fails")

    app.register("urn:babel:interop:fails", handler)
    mid = app.publish("urn:babel:interop:fails", {"n": 1}, trace_id="trace-py-fails")
    app.consume(queue, max_messages=10, timeout=1.0, handle_signals=False)
    app.transport.close()
    out({"seen": seen, "id": mid})


def fail_once(url, queue):
    app = BabelQueue(url, queue=queue, max_attempts=3, dead_letter=True)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("fails in Python")

    app.register("urn:babel:interop:fails", handler)
    app.consume(queue, max_messages=1, timeout=3.0, handle_signals=False)
    app.transport.close()
    out({"seen": seen})


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "consume": consume, "inspect": inspect, "read-dlq": read_dlq,
     "failing": failing, "fail-once": fail_once,
     "consume-timed": peer_common.consume_timed}[cmd](*args)
