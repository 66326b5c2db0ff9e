"""The Python side of the live Kafka interop tests (tests/interop/kafka_python_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[kafka]`, i.e. its KafkaTransport over
confluent-kafka). URLs are `kafka://host:port?group=G&tiers=1000`: the group and the retry
tiers (ms) are this script's additions (the SDK's URL carries the brokers only; group and
tiers are constructor arguments). The Python SDK retries on Kafka only through retry tiers,
so the failing commands run its RetryReinjector beside the runtime.
Every command prints one JSON object per line on stdout; the C++ test parses them.

    kafka_peer.py publish   URL TOPIC CASES_JSON  publish each case with the runtime; prints {"id": …}
    kafka_peer.py consume   URL TOPIC N           consume N with the runtime; prints what each handler saw
    kafka_peer.py inspect   URL TOPIC N           N records read by a plain confluent-kafka consumer
    kafka_peer.py read-dlq  URL TOPIC             one KafkaTransport pop + ack; prints the decoded envelope
    kafka_peer.py failing   URL TOPIC             publish one message and fail it until the DLQ (left in
                                                  TOPIC.dlq); prints the attempts the handler saw
    kafka_peer.py reinject  URL TOPIC SECONDS     run the SDK's RetryReinjector for TOPIC's tiers that long
    kafka_peer.py fail-once URL TOPIC             consume one message with a failing handler (max_attempts 3,
                                                  dead-lettering on): the runtime republishes it with attempts+1
    kafka_peer.py publish-delayed URL TOPIC MS    KafkaTransport.publish_delayed of one envelope (LATER_URN);
                                                  prints its id, body and the wall clock (ms) before it was made
    kafka_peer.py delayed-consume URL TOPIC N     the SDK's RetryReinjector beside the runtime consuming N
                                                  (LATER_URN); prints what each handler saw and when (wall ms)
"""

import sys
import threading
import time
import uuid
from urllib.parse import parse_qs, urlsplit

from confluent_kafka import Consumer, TopicPartition

import peer_common
from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.kafka_retry import RetryReinjector
from babelqueue.kafka_transport import KafkaTransport
from peer_common import consume, out, publish

peer_common.CONSUME_TIMEOUT = 45.0  # the first poll includes the consumer-group join (slow on a loaded CI box)


def _split(url):
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    group = query.get("group", ["babelqueue"])[0]
    tiers = [int(t) for t in query.get("tiers", [""])[0].split(",") if t]
    return "kafka://" + parts.netloc, parts.netloc, group, tiers


def _transport(url):
    base, _, group, tiers = _split(url)
    return KafkaTransport(base, group_id=group, retry_tiers_ms=tiers or None)


def _make_app(url, queue, **options):
    return BabelQueue(transport=_transport(url), queue=queue, **options)


class _Reinjector:
    """The Python SDK's RetryReinjector for TOPIC's tiers, on a thread while in a with-block."""

    def __init__(self, url, topic):
        base, _, group, tiers = _split(url)
        self.r = RetryReinjector(base, work_topics=[topic], retry_tiers_ms=tiers,
                                 group_id=group + ".py-reinjector", poll_interval=0.2)

    def __enter__(self):
        self.t = threading.Thread(target=self.r.run, daemon=True)
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.r.stop()
        self.t.join(10)
        self.r.close()


peer_common.make_app = _make_app


def inspect(url, topic, n):
    """What a plain confluent-kafka consumer sees: value, headers, timestamp and key."""
    _, brokers, _, _ = _split(url)
    c = Consumer({"bootstrap.servers": brokers, "group.id": "inspect-" + uuid.uuid4().hex,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    got, deadline = 0, time.time() + 20
    while got < int(n) and time.time() < deadline:
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        ts_type, ts = m.timestamp()
        out({
            "value": m.value().decode("utf-8"),
            "key": None if m.key() is None else m.key().decode("utf-8", "replace"),
            "timestamp_type": ts_type,
            "timestamp": ts,
            "headers": [[k, v.decode("utf-8") if v is not None else None] for k, v in (m.headers() or [])],
        })
        got += 1
    c.close()
    if got < int(n):
        out({"error": "only %d record(s)" % got})


def read_dlq(url, topic):
    t = _transport(url)
    msg = None
    deadline = time.time() + 20
    while msg is None and time.time() < deadline:
        msg = t.pop(topic, timeout=2.0)
    if msg is None:
        out({"error": "empty"})
        return
    env = EnvelopeCodec.decode(msg.body)
    out({"envelope": env, "accepts": EnvelopeCodec.accepts(env), "headers": dict(msg.headers or {})})
    t.ack(msg)
    t.close()


def failing(url, topic):
    app = _make_app(url, topic, max_attempts=3, dead_letter=True)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("always fails")

    app.register("urn:babel:interop:fails", handler)
    mid = app.publish("urn:babel:interop:fails", {"n": 1}, trace_id="trace-py-fails")
    # One consume() can end before the group join has handed this consumer its partition
    # (seen on a loaded CI box: an empty first pop well inside the timeout), so keep
    # consuming until the three deliveries arrived or the overall deadline passed.
    deadline = time.monotonic() + peer_common.CONSUME_TIMEOUT
    with _Reinjector(url, topic):
        while len(seen) < 3 and time.monotonic() < deadline:
            app.consume(topic, max_messages=3 - len(seen), timeout=peer_common.CONSUME_TIMEOUT,
                        handle_signals=False)
    peer_common.close(app)
    out({"seen": seen, "id": mid})


def fail_once(url, topic):
    app = _make_app(url, topic, max_attempts=3, dead_letter=True)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("fails in Python")

    app.register("urn:babel:interop:fails", handler)
    app.consume(topic, max_messages=1, timeout=peer_common.CONSUME_TIMEOUT, handle_signals=False)
    peer_common.close(app)
    out({"seen": seen})


LATER_URN = "urn:babel:interop:later"


def publish_delayed(url, topic, delay_ms):
    """The Python SDK's delayed publish: parked on the smallest tier >= the delay."""
    t = _transport(url)
    before_ms = int(time.time() * 1000)  # before the envelope's created_at, the record timestamp
    env = EnvelopeCodec.make(LATER_URN, {"n": 9}, queue=topic, trace_id="trace-py-later")
    body = EnvelopeCodec.encode(env)
    t.publish_delayed(topic, body, int(delay_ms))
    t.close()
    out({"id": env["meta"]["id"], "body": body, "before_ms": before_ms})


def delayed_consume(url, topic, n):
    """Python's RetryReinjector (it waits each tier's own delay) and the runtime, until N handled."""
    app = _make_app(url, topic)
    seen = []

    def handler(data, meta, envelope):
        seen.append({"urn": envelope.get("job"), "trace_id": envelope.get("trace_id"),
                     "attempts": envelope.get("attempts"), "data": data, "id": meta.get("id"),
                     "seen_ms": int(time.time() * 1000)})

    app.register(LATER_URN, handler)
    deadline = time.monotonic() + peer_common.CONSUME_TIMEOUT
    with _Reinjector(url, topic):
        while len(seen) < int(n) and time.monotonic() < deadline:
            app.consume(topic, max_messages=int(n) - len(seen), timeout=5.0, handle_signals=False)
    peer_common.close(app)
    for s in seen:
        out(s)


def reinject(url, topic, seconds):
    with _Reinjector(url, topic):
        time.sleep(float(seconds))
    out({"done": True})


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "consume": consume, "inspect": inspect, "read-dlq": read_dlq,
     "failing": failing, "fail-once": fail_once, "reinject": reinject,
     "publish-delayed": publish_delayed, "delayed-consume": delayed_consume}[cmd](*args)
