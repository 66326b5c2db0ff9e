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
"""

import sys

import peer_common
from babelqueue import BabelQueue
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


if __name__ == "__main__":
    cmd, url, prefix, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    # peer_common's runtime commands build their app through make_app(): give it this layout.
    peer_common.make_app = lambda _url, queue, **o: BabelQueue(
        transport=transport(url, prefix), queue=queue, **o)
    if cmd == "failing":
        failing(url, prefix, *args)
    else:
        {"publish": peer_common.publish, "consume": peer_common.consume}[cmd](url, *args)
