"""The Python side of the live Redis interop tests (tests/interop/redis_python_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[redis]`). Every command prints one JSON
object per line on stdout; the C++ test parses them.

    peer.py publish  URL QUEUE CASES_JSON        publish each case; prints {"id": …} per case
    peer.py consume  URL QUEUE N [URNS]          consume N with the runtime; prints what the handler saw
                                                 (URNS: comma-separated, instead of the payload set's)
    peer.py read-dlq URL QUEUE                   pop one DLQ message; prints the decoded envelope
    peer.py failing  URL QUEUE                   publish one message, fail it until the DLQ; prints attempts seen
    peer.py pop      URL QUEUE                   one transport pop (its sweep runs first), ack; prints the body
    peer.py pop-noack URL QUEUE                  one transport pop, then exit without ack (a crashed consumer)
    peer.py dead-letter URL QUEUE                publish one message, fail it into QUEUE.dlq and leave it there
    peer.py consume-replays URL QUEUE N          consume N `urn:babel:interop:fails` with the runtime; prints
                                                 attempts, dead_letter presence, is_replay() and the headers
"""

import sys

from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.redis_transport import RedisTransport

from babelqueue.headers import headers_from_context
from peer_common import consume, out, publish


def read_dlq(url, queue):
    t = RedisTransport(url)
    msg = t.pop(queue, timeout=3.0)
    if msg is None:
        out({"error": "empty"})
        return
    env = EnvelopeCodec.decode(msg.body)
    out({"envelope": env, "accepts": EnvelopeCodec.accepts(env)})
    t.ack(msg)


def failing(url, queue):
    app = BabelQueue(url, queue=queue, max_attempts=3, dead_letter=True)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("always fails")

    app.register("urn:babel:interop:fails", handler)
    app.publish("urn:babel:interop:fails", {"n": 1})
    app.consume(queue, max_messages=10, timeout=1.0, handle_signals=False)
    t = RedisTransport(url)
    msg = t.pop(queue + ".dlq", timeout=3.0)
    dlq = EnvelopeCodec.decode(msg.body) if msg is not None else None
    if msg is not None:
        t.ack(msg)
    out({"seen": seen, "dlq_attempts": dlq and dlq.get("attempts"),
         "dlq_block_attempts": dlq and dlq.get("dead_letter", {}).get("attempts"),
         "dlq_reason": dlq and dlq.get("dead_letter", {}).get("reason")})


def dead_letter(url, queue):
    app = BabelQueue(url, queue=queue, max_attempts=2, dead_letter=True)

    def handler(data, meta, envelope):
        raise RuntimeError("python handler always fails")

    app.register("urn:babel:interop:fails", handler)
    mid = app.publish("urn:babel:interop:fails", {"n": 1, "big": 12345678901234567890},
                      trace_id="trace-redrive-interop")
    app.consume(queue, max_messages=10, timeout=1.0, handle_signals=False)
    out({"id": mid})


def consume_replays(url, queue, n):
    from babelqueue.replay import is_replay

    app = BabelQueue(url, queue=queue)
    seen = []

    def handler(data, meta, envelope):
        seen.append({"id": meta.get("id"), "trace_id": envelope.get("trace_id"),
                     "attempts": envelope.get("attempts"), "data": data,
                     "has_dead_letter": "dead_letter" in envelope, "is_replay": bool(is_replay()),
                     "headers": dict(headers_from_context())})

    app.register("urn:babel:interop:fails", handler)
    app.consume(queue, max_messages=int(n), timeout=3.0, handle_signals=False)
    for s in seen:
        out(s)


def pop(url, queue, ack=True):
    t = RedisTransport(url)
    msg = t.pop(queue, timeout=2.0)
    if msg is None:
        out({"body": None})
        return
    out({"body": msg.body, "headers": dict(msg.headers)})
    if ack:
        t.ack(msg)


def pop_noack(url, queue):
    pop(url, queue, ack=False)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "consume": consume, "read-dlq": read_dlq, "failing": failing,
     "pop": pop, "pop-noack": pop_noack, "dead-letter": dead_letter,
     "consume-replays": consume_replays}[cmd](*args)
