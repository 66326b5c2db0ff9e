"""The Python side of the live Laravel-mode interop tests (tests/interop/laravel_interop_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[redis]`) with its Laravel-compatible Redis layout.
In babelqueue 1.24.0 the `?laravel=1` URL flag fails with redis-py 8 (the query reaches
redis-py's own URL parser), so the transport is built with `laravel_compat=True` instead and the
runtime gets it as `transport=`.

    laravel_python_peer.py publish URL PREFIX QUEUE CASES_JSON   publish each case; prints {"id": …}
    laravel_python_peer.py consume URL PREFIX QUEUE N            consume N with the runtime; prints what
                                                                 the handler saw
    laravel_python_peer.py failing URL PREFIX QUEUE              consume one always-failing message until the
                                                                 DLQ; prints the attempts seen
    laravel_python_peer.py publish-delayed URL PREFIX QUEUE SECONDS
                                                                 one envelope through the transport's
                                                                 publish_delayed (ZADD :delayed); prints
                                                                 {"body": …, "score": …}
"""

import sys

import peer_common
import redis
from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.redis_transport import RedisTransport


def transport(url, prefix):
    return RedisTransport(url, laravel_compat=True, key_prefix=prefix)


def failing(url, prefix, queue):
    app = BabelQueue(transport=transport(url, prefix), queue=queue, max_attempts=3, dead_letter=True)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("always fails")

    app.register("urn:babel:interop:fails", handler)
    app.consume(queue, max_messages=10, timeout=1.0, handle_signals=False)
    peer_common.out({"seen": seen})


def publish_delayed(url, prefix, queue, seconds):
    t = transport(url, prefix)
    body = EnvelopeCodec.encode(EnvelopeCodec.make(
        "urn:babel:interop:big", {"n": 1, "big": 12345678901234567890}, queue=queue,
        trace_id="trace-delayed-py"))
    t.publish_delayed(queue, body, float(seconds))
    score = redis.Redis.from_url(url).zscore(f"{prefix}{queue}:delayed", body)
    peer_common.out({"body": body, "score": score})


if __name__ == "__main__":
    cmd, url, prefix, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    # peer_common's runtime commands build their app through make_app(): give it this layout.
    peer_common.make_app = lambda _url, queue, **o: BabelQueue(
        transport=transport(url, prefix), queue=queue, **o)
    if cmd == "failing":
        failing(url, prefix, *args)
    elif cmd == "publish-delayed":
        publish_delayed(url, prefix, *args)
    else:
        {"publish": peer_common.publish, "consume": peer_common.consume}[cmd](url, *args)
