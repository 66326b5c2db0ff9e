"""The Python side of the live SQS interop tests (tests/interop/sqs_python_test.cpp).

Runs the real Python SDK from PyPI (`babelqueue[sqs]`, i.e. its SqsTransport over boto3) on
the ElasticMQ server of scripts/services.sh. URLs are the SDK's own form, which is also the
C++ one: `sqs://us-east-1?endpoint=http://127.0.0.1:P` (add `&fifo=1` for FIFO queues: the
Python SDK sends MessageGroupId only with that key, not by the `.fifo` name). The SDK never
creates queues: the C++ test creates every queue (dead-letter queues `<queue>-dlq` included)
first. Credentials come from the environment (the test sets AWS_ACCESS_KEY_ID=test).

Every command prints JSON objects, one per line, each tagged {"cmd": <command>}; log records
of the SDK are printed as {"cmd": "log"} lines. Several commands run in one process (one
interpreter start, which is slow on a loaded machine) when separated by `--then`.

    sqs_peer.py publish     URL QUEUES CASES_JSON  the runtime publishes each case to each comma-separated queue
                                                   (publish_with_headers when a case has headers); prints ids
    sqs_peer.py publish-seq URL QUEUE N            the runtime publishes urn:babel:interop:seq {"n": i}, i < N
    sqs_peer.py try-publish URL QUEUE              one runtime publish; prints its id, or the error it raised
    sqs_peer.py consume     URL QUEUES N           the runtime consumes N from each comma-separated queue; prints
                                                   what each handler saw and the raw body SqsTransport.pop returned
    sqs_peer.py inspect     URL QUEUE N            N messages read by a bare boto3 client (ReceiveMessage with every
                                                   attribute, then DeleteMessage); prints them field by field
    sqs_peer.py read-dlq    URL QUEUE              one SqsTransport pop + ack of the SQS queue QUEUE (a native name,
                                                   e.g. orders-dlq); prints the decoded envelope and headers
    sqs_peer.py failing     URL QUEUE              publish one message (with a traceparent header) and fail it until
                                                   the DLQ (max_attempts 3); prints the attempts the handler saw
                                                   and each delivery's ApproximateReceiveCount - 1 ("native")
    sqs_peer.py fail        URL QUEUE N            handle N deliveries with an always-failing handler (max_attempts 3,
                                                   dead-lettering on); prints the same
    sqs_peer.py consume-timed URL QUEUE N          the runtime consumes N from QUEUE; prints {"polling_ms"} (Unix ms
                                                   of its first poll), then per message the raw body and
                                                   {"handled_ms"} (when its handler ran)
    sqs_peer.py publish-delayed URL QUEUE SECONDS  SqsTransport.publish(queue, body, delay_seconds=SECONDS) of one
                                                   envelope; prints the body, {"before_ms"} and {"sent_ms"}
                                                   (Unix ms around SendMessage), or the error the SDK raised (FIFO, over 900 s)
    sqs_peer.py dlq-names   QUEUES SUFFIX          SqsTransport.dead_letter_queue_name of each queue ("-" = no suffix)
    sqs_peer.py url-options URL                    what SqsTransport read from URL
"""

import json
import logging
import sys
import time
from urllib.parse import parse_qs, urlsplit

import boto3

import peer_common
from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.headers import headers_from_context
from babelqueue.sqs_transport import SqsTransport

#: The longest a command waits for a message it expects (seconds). Every wait returns as soon
#: as the message is there (SQS long polls, at most 20 s each), so this only bounds a failure.
DEADLINE = 40.0
#: One long poll (seconds): SQS's maximum.
POLL = 20

SEQ_URN = "urn:babel:interop:seq"
_cmd = "?"


def out(obj):
    obj = dict(obj)
    obj["cmd"] = _cmd
    peer_common.out(obj)


class _JsonLog(logging.Handler):
    """SDK log records as JSON lines (run_peer treats any other line as a failure)."""

    def emit(self, record):
        peer_common.out({"cmd": "log", "level": record.levelname, "msg": record.getMessage()})


def _client(url):
    """A bare boto3 SQS client for the URL's region and endpoint."""
    parts = urlsplit(url)
    q = parse_qs(parts.query)
    kwargs = {"region_name": parts.hostname or None}
    if q.get("endpoint"):
        kwargs["endpoint_url"] = q["endpoint"][0]
    return boto3.client("sqs", **kwargs)


def _consume_n(app, queue, n):
    """app.consume until N messages were handled (or DEADLINE): returns at once when done."""
    done, deadline = 0, time.time() + DEADLINE
    while done < n and time.time() < deadline:
        done += app.consume(queue, max_messages=n - done, timeout=POLL, handle_signals=False)
    return done


def publish(url, queues, cases_json):
    app = BabelQueue(url, queue=queues.split(",")[0])
    for q in queues.split(","):
        for case in json.loads(cases_json):
            headers = case.get("headers") or {}
            if headers:
                mid = app.publish_with_headers(case["urn"], case["data"], headers,
                                               queue=q, trace_id=case.get("trace_id"))
            else:
                mid = app.publish(case["urn"], case["data"], queue=q, trace_id=case.get("trace_id"))
            out({"queue": q, "id": mid})
    peer_common.close(app)


def try_publish(url, queue):
    """One runtime publish that may fail: prints {"id": …} or the error's class and text."""
    app = BabelQueue(url, queue=queue)
    try:
        out({"id": app.publish(SEQ_URN, {"n": 0})})
    except Exception as exc:  # noqa: BLE001 - botocore's ClientError, reported to the test
        code = getattr(exc, "response", {}).get("Error", {}).get("Code")
        out({"error": type(exc).__name__, "code": code, "message": str(exc)})
    peer_common.close(app)


def publish_seq(url, queue, n):
    app = BabelQueue(url, queue=queue)
    for i in range(int(n)):
        out({"id": app.publish(SEQ_URN, {"n": i}, trace_id="trace-seq-%d" % i)})
    peer_common.close(app)


def consume(url, queues, n):
    """The runtime's consume, plus the raw body of each delivery (what SqsTransport.pop handed
    the runtime, after its attempts reconciliation): the test checks it byte for byte."""
    for queue in queues.split(","):
        app = BabelQueue(url, queue=queue)
        raw = []
        pop = app.transport.pop

        def recording_pop(q, timeout=1.0, pop=pop, raw=raw):
            m = pop(q, timeout=timeout)
            if m is not None:
                raw.append(m.body)
            return m

        app.transport.pop = recording_pop
        seen = []

        def handler(data, meta, envelope, raw=raw, seen=seen, queue=queue):
            seen.append({"queue": queue, "urn": envelope.get("job"),
                         "trace_id": envelope.get("trace_id"), "attempts": envelope.get("attempts"),
                         "data": data, "meta": meta, "headers": dict(headers_from_context()),
                         "raw": raw[-1]})

        for urn in peer_common.URNS + (SEQ_URN,):
            app.register(urn, handler)
        _consume_n(app, queue, int(n))
        peer_common.close(app)
        for s in seen:
            out(s)


def inspect(url, queue, n):
    """What a bare boto3 client (the SDK's client library, no SDK code) sees."""
    sqs = _client(url)
    qurl = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
    got, deadline = 0, time.time() + DEADLINE
    while got < int(n) and time.time() < deadline:
        resp = sqs.receive_message(QueueUrl=qurl, MaxNumberOfMessages=min(10, int(n) - got),
                                   WaitTimeSeconds=POLL, MessageAttributeNames=["All"],
                                   AttributeNames=["All"])
        for m in resp.get("Messages") or []:
            got += 1
            out({
                "message_id": m["MessageId"],
                "body": m["Body"],
                "md5_of_body": m.get("MD5OfBody"),
                "attributes": m.get("Attributes") or {},
                "message_attributes": {
                    k: {"type": v.get("DataType"), "value": v.get("StringValue")}
                    for k, v in (m.get("MessageAttributes") or {}).items()
                },
            })
            sqs.delete_message(QueueUrl=qurl, ReceiptHandle=m["ReceiptHandle"])
    if got < int(n):
        out({"error": "only %d message(s)" % got})


def read_dlq(url, queue):
    t = SqsTransport(url)
    msg, deadline = None, time.time() + DEADLINE
    while msg is None and time.time() < deadline:
        msg = t.pop(queue, timeout=POLL)
    if msg is None:
        out({"error": "empty"})
        return
    env = EnvelopeCodec.decode(msg.body)
    out({"envelope": env, "accepts": EnvelopeCodec.accepts(env), "headers": dict(msg.headers),
         "raw": msg.body})
    t.ack(msg)


def _failing_app(url, queue):
    """A runtime whose handler always fails; `seen` gets the attempts each run saw, `native` the
    ApproximateReceiveCount - 1 of each delivery (SqsTransport.pop's native_attempts)."""
    app = BabelQueue(url, queue=queue, max_attempts=3, dead_letter=True)
    seen, native = [], []
    pop = app.transport.pop

    def recording_pop(q, timeout=1.0):
        m = pop(q, timeout=timeout)
        if m is not None:
            native.append(m.native_attempts)
        return m

    app.transport.pop = recording_pop

    def handler(data, meta, envelope):
        seen.append(envelope.get("attempts"))
        raise RuntimeError("always fails")

    app.register("urn:babel:interop:fails", handler)
    return app, seen, native


def failing(url, queue):
    app, seen, native = _failing_app(url, queue)
    mid = app.publish_with_headers("urn:babel:interop:fails", {"n": 1},
                                   {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                                   trace_id="trace-py-fails")
    _consume_n(app, queue, 3)
    peer_common.close(app)
    out({"seen": seen, "native": native, "id": mid})


def fail(url, queue, n):
    app, seen, native = _failing_app(url, queue)
    _consume_n(app, queue, int(n))
    peer_common.close(app)
    out({"seen": seen, "native": native})


def publish_delayed(url, queue, seconds):
    """The Python SDK's own delayed publish (SqsTransport.publish's delay_seconds: DelaySeconds
    on SendMessage). It refuses a delay on a FIFO queue and over 900 s: the error is printed."""
    t = SqsTransport(url)
    body = EnvelopeCodec.encode(EnvelopeCodec.make(SEQ_URN, {"n": 1}, queue=queue,
                                                   trace_id="trace-py-delay"))
    before = peer_common.now_ms()
    try:
        t.publish(queue, body, delay_seconds=int(seconds))
    except Exception as exc:  # noqa: BLE001 - BabelQueueError, reported to the test
        out({"error": type(exc).__name__, "message": str(exc)})
        return
    out({"before_ms": before, "sent_ms": peer_common.now_ms(), "body": body})


def dlq_names(queues, suffix):
    t = SqsTransport("sqs://us-east-1", client=object())  # naming only: no client call
    for q in queues.split(","):
        out({"queue": q, "dlq": t.dead_letter_queue_name(q, None if suffix == "-" else suffix)})


def url_options(url):
    t = SqsTransport(url, client=object())
    out({"region": t._region, "endpoint": t._endpoint, "prefix": t._queue_url_prefix,
         "wait_time": t._wait_time, "visibility_timeout": t._visibility_timeout, "fifo": t._fifo,
         "group_id": t._message_group_id, "content_dedup": t._content_dedup})


def consume_timed(url, queue, n):
    """peer_common.consume_timed with this peer's URNs, deadline and tagged lines."""
    peer_common.consume_timed(url, queue, n, urns=peer_common.URNS + (SEQ_URN,), within=DEADLINE,
                              emit=out)


COMMANDS = {"publish": publish, "publish-seq": publish_seq, "consume": consume, "inspect": inspect,
            "read-dlq": read_dlq, "failing": failing, "fail": fail, "dlq-names": dlq_names,
            "url-options": url_options, "try-publish": try_publish,
            "consume-timed": consume_timed, "publish-delayed": publish_delayed}

if __name__ == "__main__":
    log = logging.getLogger("babelqueue")
    log.addHandler(_JsonLog())
    log.setLevel(logging.WARNING)
    log.propagate = False
    group = []
    for arg in sys.argv[1:] + ["--then"]:
        if arg != "--then":
            group.append(arg)
            continue
        _cmd = group[0]
        COMMANDS[_cmd](*group[1:])
        group = []
