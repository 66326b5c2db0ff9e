"""The Python side of the live Pulsar interop tests (tests/interop/pulsar_python_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[pulsar]`, i.e. its PulsarTransport over the
official pulsar-client) on the Pulsar standalone of scripts/services.sh. The URL is the bare
`pulsar://127.0.0.1:P` (the C++ side adds its own query keys; the Python SDK hands the URL to
pulsar.Client as it is). Topics are bare names (persistent://public/default/<name>), the
subscription is `babelqueue` (Shared), as in the C++ transport.

The Python SDK's consumer subscribes at the pulsar-client default position (Latest) and its
producer creates no subscription: a message published to a topic no subscription exists on is
kept for nobody. So the C++ test creates every subscription these commands read (and every
one the Python SDK publishes to, dead-letter topics included) before anything is published.

The SDK's PulsarTransport builds `pulsar.Client(url)` with the client's default logger, which
prints INFO lines on stdout; here the same transport gets a client that logs its warnings and
errors to a file instead (printed as {"cmd": "log"} lines when the process ends): that is the
only difference. (A Python logger would be called from the client's own threads, which can
abort the interpreter at exit.)

Every command prints JSON objects, one per line, each tagged {"cmd": <command>}. Several
commands run in one process (one interpreter start) when separated by `--then`.

    pulsar_peer.py publish   URL QUEUES CASES_JSON  the runtime publishes each case to each comma-separated queue
                                                    (publish_with_headers when a case has headers); prints the id
                                                    and the body the transport was handed
    pulsar_peer.py consume   URL QUEUES N           the runtime consumes N from each comma-separated queue; prints
                                                    what each handler saw, plus the delivery as PulsarTransport.pop
                                                    returned it (body, route_urn, properties, redelivery count)
    pulsar_peer.py inspect   URL TOPIC N SUB        N messages read by a bare pulsar-client consumer on the
                                                    subscription SUB (acknowledged); prints them field by field
    pulsar_peer.py read-dlq  URL QUEUE              one PulsarTransport pop + ack of QUEUE (e.g. orders.dlq); prints
                                                    the decoded envelope, the raw body and the properties
    pulsar_peer.py failing   URL QUEUE              publish one message (with a traceparent header) and fail it
                                                    until the DLQ (max_attempts 3); prints each delivery
    pulsar_peer.py fail      URL QUEUE N            handle N deliveries with an always-failing handler
                                                    (max_attempts 3, dead-lettering on); prints each delivery
    pulsar_peer.py gate      URL QUEUE N            the runtime (dead-lettering on, a handler for every interop
                                                    URN) consumes N; prints what the handlers saw
    pulsar_peer.py send-raw  URL QUEUE VERSION      a bare pulsar-client producer sends one envelope the Python
                                                    codec made, with the SDK's properties but bq-schema-version
                                                    = VERSION; prints the body and its id
    pulsar_peer.py nack      URL QUEUE K            a bare pulsar-client consumer negatively acknowledges the
                                                    next message K times (each time waiting for the redelivery),
                                                    then closes with it in hand; prints the counts it saw
    pulsar_peer.py later     URL QUEUE N            the runtime consumes N messages of LATER_URN; prints what each
                                                    handler saw, its delivery, and when (wall clock, Unix ms)
"""

import json
import logging
import os
import sys
import tempfile
import time

import pulsar

import peer_common
from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.headers import headers_from_context
from babelqueue.pulsar_transport import PulsarTransport

#: The longest a command waits for the messages it expects (seconds); every wait returns as
#: soon as they are there, so this only bounds a failure.
DEADLINE = 40.0
#: One receive (seconds).
POLL = 5.0

FAILS_URN = "urn:babel:interop:fails"
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
_cmd = "?"


def out(obj):
    obj = dict(obj)
    obj["cmd"] = _cmd
    peer_common.out(obj)


class _JsonLog(logging.Handler):
    """SDK log records as JSON lines (run_peer treats any other line as a failure)."""

    def emit(self, record):
        peer_common.out({"cmd": "log", "logger": record.name, "level": record.levelname,
                         "msg": record.getMessage()})


#: The files the clients of this process log to (see the module comment).
_client_logs = []


def _client(url):
    fd, path = tempfile.mkstemp(prefix="pulsar_peer_", suffix=".log")
    os.close(fd)
    _client_logs.append(path)
    return pulsar.Client(url, logger=pulsar.FileLogger(pulsar.LoggerLevel.Warn, path))


def _print_client_logs():
    for path in _client_logs:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    peer_common.out({"cmd": "log", "logger": "pulsar", "msg": line.rstrip()})
        os.unlink(path)


def _transport(url):
    """The SDK's PulsarTransport exactly as BabelQueue(url) builds it, but with a quiet client."""
    return PulsarTransport(url, client=_client(url))


def _app(url, queue, **options):
    return BabelQueue(transport=_transport(url), queue=queue, **options)


def _delivery(m):
    """What PulsarTransport.pop handed the runtime, and the bare message under it."""
    return {"body": m.body, "route_urn": m.route_urn, "native_attempts": m.native_attempts,
            "headers": dict(m.headers), "properties": dict(m.handle.properties()),
            "redelivery_count": m.handle.redelivery_count(),
            "event_timestamp": m.handle.event_timestamp()}


def _recording(app):
    """Wraps app.transport.pop: every delivery it returns is appended to the returned list."""
    deliveries = []
    pop = app.transport.pop

    def recording_pop(q, timeout=1.0):
        m = pop(q, timeout=timeout)
        if m is not None:
            deliveries.append(_delivery(m))
        return m

    app.transport.pop = recording_pop
    return deliveries


def _consume_n(app, queue, n):
    """app.consume until N messages were handled (or DEADLINE): returns at once when done."""
    done, deadline = 0, time.time() + DEADLINE
    while done < n and time.time() < deadline:
        done += app.consume(queue, max_messages=n - done, timeout=POLL, handle_signals=False)
    return done


def publish(url, queues, cases_json):
    app = _app(url, queues.split(",")[0])
    sent = []
    publish_raw = app.transport.publish

    def recording_publish(q, body):
        sent.append(body)
        publish_raw(q, body)

    app.transport.publish = recording_publish
    for q in queues.split(","):
        for case in json.loads(cases_json):
            headers = case.get("headers") or {}
            if headers:
                mid = app.publish_with_headers(case["urn"], case["data"], headers,
                                               queue=q, trace_id=case.get("trace_id"))
            else:
                mid = app.publish(case["urn"], case["data"], queue=q, trace_id=case.get("trace_id"))
            out({"queue": q, "id": mid, "body": sent[-1]})
    peer_common.close(app)


def consume(url, queues, n):
    for queue in queues.split(","):
        app = _app(url, queue)
        deliveries = _recording(app)
        seen = []

        def handler(data, meta, envelope, deliveries=deliveries, seen=seen, queue=queue):
            seen.append({"queue": queue, "urn": envelope.get("job"),
                         "trace_id": envelope.get("trace_id"), "attempts": envelope.get("attempts"),
                         "data": data, "meta": meta, "headers": dict(headers_from_context()),
                         "delivery": deliveries[-1]})

        for urn in peer_common.URNS:
            app.register(urn, handler)
        _consume_n(app, queue, int(n))
        peer_common.close(app)
        for s in seen:
            out(s)


def inspect(url, topic, n, subscription):
    """What a bare pulsar-client consumer (the SDK's client library, no SDK code) sees."""
    client = _client(url)
    consumer = client.subscribe(topic, subscription, consumer_type=pulsar.ConsumerType.Shared,
                                initial_position=pulsar.InitialPosition.Earliest)
    got, deadline = 0, time.time() + DEADLINE
    while got < int(n) and time.time() < deadline:
        try:
            m = consumer.receive(timeout_millis=int(POLL * 1000))
        except pulsar.Timeout:
            continue
        got += 1
        out({"payload": m.data().decode("utf-8", "surrogateescape"),
             "properties": dict(m.properties()), "redelivery_count": m.redelivery_count(),
             "event_timestamp": m.event_timestamp(), "publish_timestamp": m.publish_timestamp()})
        consumer.acknowledge(m)
    if got < int(n):
        out({"error": "only %d message(s)" % got})
    consumer.close()
    client.close()


def read_dlq(url, queue):
    t = _transport(url)
    msg, deadline = None, time.time() + DEADLINE
    while msg is None and time.time() < deadline:
        msg = t.pop(queue, timeout=POLL)
    if msg is None:
        out({"error": "empty"})
        t.close()
        return
    env = EnvelopeCodec.decode(msg.body)
    out({"envelope": env, "accepts": EnvelopeCodec.accepts(env), "delivery": _delivery(msg)})
    t.ack(msg)
    t.close()


def _failing_app(url, queue):
    """A runtime whose handler always fails; returns it, the attempts each run saw and every
    delivery pop returned."""
    app = _app(url, queue, max_attempts=3, dead_letter=True)
    deliveries = _recording(app)
    seen = []

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("always fails")

    app.register(FAILS_URN, handler)
    return app, seen, deliveries


def failing(url, queue):
    app, seen, deliveries = _failing_app(url, queue)
    mid = app.publish_with_headers(FAILS_URN, {"n": 1}, {"traceparent": TRACEPARENT},
                                   trace_id="trace-py-fails")
    _consume_n(app, queue, 3)
    peer_common.close(app)
    out({"seen": seen, "deliveries": deliveries, "id": mid})


def fail(url, queue, n):
    app, seen, deliveries = _failing_app(url, queue)
    _consume_n(app, queue, int(n))
    peer_common.close(app)
    out({"seen": seen, "deliveries": deliveries})


def gate(url, queue, n):
    app = _app(url, queue, max_attempts=3, dead_letter=True)
    deliveries = _recording(app)
    seen = []
    for urn in peer_common.URNS + (FAILS_URN,):
        app.register(urn, lambda data, meta, envelope: seen.append(envelope.get("job")))
    _consume_n(app, queue, int(n))
    peer_common.close(app)
    out({"handled": seen, "deliveries": deliveries})


def send_raw(url, queue, version):
    env = EnvelopeCodec.make(FAILS_URN, {"n": 5}, queue=queue, trace_id="trace-gate")
    body = EnvelopeCodec.encode(env)
    props = PulsarTransport._projection(body)
    props["bq-schema-version"] = version
    client = _client(url)
    producer = client.create_producer(queue)
    producer.send(body.encode("utf-8"), properties=props)
    producer.close()
    client.close()
    out({"body": body, "id": env["meta"]["id"], "properties": props})


def nack(url, queue, k):
    client = _client(url)
    consumer = client.subscribe(queue, "babelqueue", consumer_type=pulsar.ConsumerType.Shared,
                                negative_ack_redelivery_delay_ms=200)
    counts = []
    for i in range(int(k) + 1):
        m = consumer.receive(timeout_millis=int(DEADLINE * 1000))
        counts.append(m.redelivery_count())
        if i < int(k):
            consumer.negative_acknowledge(m)
    consumer.close()  # the last delivery in hand, unsettled: back to the broker
    client.close()
    out({"redelivery_counts": counts})


LATER_URN = "urn:babel:interop:later"


def later(url, queue, n):
    """Delayed messages a C++ producer sent (the SDK itself has no Pulsar delay)."""
    app = _app(url, queue)
    deliveries = _recording(app)
    seen = []

    def handler(data, meta, envelope):
        seen.append({"urn": envelope.get("job"), "trace_id": envelope.get("trace_id"),
                     "attempts": envelope.get("attempts"), "id": meta.get("id"), "data": data,
                     "delivery": deliveries[-1], "seen_ms": int(time.time() * 1000)})

    app.register(LATER_URN, handler)
    _consume_n(app, queue, int(n))
    peer_common.close(app)
    for s in seen:
        out(s)


COMMANDS = {"publish": publish, "consume": consume, "inspect": inspect, "read-dlq": read_dlq,
            "failing": failing, "fail": fail, "gate": gate, "send-raw": send_raw, "nack": nack,
            "later": later}

if __name__ == "__main__":
    log = logging.getLogger("babelqueue")
    log.addHandler(_JsonLog())
    log.setLevel(logging.WARNING)
    log.propagate = False
    group = []
    try:
        for arg in sys.argv[1:] + ["--then"]:
            if arg != "--then":
                group.append(arg)
                continue
            _cmd = group[0]
            COMMANDS[_cmd](*group[1:])
            group = []
    finally:
        _print_client_logs()
