"""The Python SDK (PyPI `babelqueue[sqs]`, boto3) doing the job of
`babelqueue bench --broker sqs://`.

    python_sqs_bench.py --url URL --queue Q [--messages N] [--size B] [--consume N] [--idle S]
    python_sqs_bench.py --url URL --queue Q --phase create|delete
    python_sqs_bench.py --url URL --queue Q --phase floor [--messages N]

URL is what `BabelQueue(url)` takes: `sqs://<region>?endpoint=http://127.0.0.1:PORT`
(credentials from the usual AWS chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY).

Phase `run` (default): one process publishes N envelopes of about B bytes with
`SqsTransport.publish`, then receives and acks that many (--consume, default N; 0 = none)
with `SqsTransport.pop` + `ack`. Prints the lines `babelqueue bench` prints ("publish: N msgs
in T s = R msg/s; latency p50 ..", "consume: ..", "consume-steady: .."), for
bench/sqs_rounds.sh. The queue must exist: the SDK never creates queues (`--phase create`
does, with boto3; `--phase delete` deletes it).

The last line, "cpu: S s", is this process's CPU time (user + system) over both measured
phases (without the interpreter's start-up and imports).

Phase `floor`: N `get_queue_url` calls on the transport's boto3 client, one at a time: what
one HTTP round trip costs through boto3 (signing, the botocore pipeline, urllib3 keep-alive)
with the least server work ("roundtrip: N calls in T s = R calls/s; latency ...").

What the SDK's SqsTransport (1.24.0) does, and so what is measured:
- `publish`: parses the envelope for the bq-* MessageAttributes projection, then one
  `send_message` (boto3: SigV4, JSON, HTTP keep-alive through urllib3) — one HTTP round trip
  per message, awaited. The SDK has no batch publish (no SendMessageBatch path) and
  `BabelQueue.publish` goes through the same `publish`.
- `pop`: one `receive_message` with MaxNumberOfMessages = 1 (hard-coded),
  WaitTimeSeconds = int(timeout) (1 s here), MessageAttributeNames All and
  ApproximateReceiveCount; `ack`: one `delete_message`. Two round trips per message; the
  SDK has no batched receive (no `pop_batch` on SqsTransport) and no DeleteMessageBatch.
The transport (and its boto3 client) is built before the clock starts; the queue URL is
resolved (GetQueueUrl, once per queue) and the connection opened at the first call, inside
the clock, as the C++ transport does.
"""

import argparse
import os
import sys
import time
from urllib.parse import parse_qs, urlsplit

from babelqueue.codec import EnvelopeCodec
from babelqueue.sqs_transport import SqsTransport

URN = "urn:babel:bench:message"


def make_body(size):
    data = {"seq": 0, "pad": ""}
    probe = EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))
    if size > len(probe.encode("utf-8")):
        data["pad"] = "x" * (size - len(probe.encode("utf-8")))
    return EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))


def percentiles(ns):
    if not ns:
        return "latency n/a"
    ns = sorted(ns)
    at = lambda q: ns[int(q * (len(ns) - 1))] / 1000.0  # noqa: E731
    return f"latency p50 {at(0.50):.1f} us, p99 {at(0.99):.1f} us"


def boto_client(url):
    """A plain boto3 SQS client for the URL (queue administration only: not the SDK)."""
    import boto3

    parts = urlsplit(url)
    q = parse_qs(parts.query)
    kwargs = {}
    if parts.hostname:
        kwargs["region_name"] = parts.hostname
    if q.get("endpoint"):
        kwargs["endpoint_url"] = q["endpoint"][0]
    return boto3.client("sqs", **kwargs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default=os.environ.get("BABELQUEUE_SQS_URL"))
    ap.add_argument("--queue", required=True)
    ap.add_argument("--phase", choices=["run", "create", "delete", "floor"], default="run")
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--size", type=int, default=370)
    ap.add_argument("--consume", type=int, default=None)
    ap.add_argument("--idle", type=float, default=5.0)
    a = ap.parse_args()
    if not a.url:
        ap.error("--url or BABELQUEUE_SQS_URL is required")
    url, queue, n = a.url, a.queue, a.messages

    if a.phase == "create":
        boto_client(url).create_queue(QueueName=queue)
        return
    if a.phase == "delete":
        c = boto_client(url)
        c.delete_queue(QueueUrl=c.get_queue_url(QueueName=queue)["QueueUrl"])
        return

    t = SqsTransport(url)
    if a.phase == "floor":
        sqs = t._sqs  # the transport's own boto3 client
        sqs.get_queue_url(QueueName=queue)  # connect (and build botocore's handlers) first
        lat = []
        t0 = time.perf_counter()
        for _ in range(n):
            s = time.perf_counter_ns()
            sqs.get_queue_url(QueueName=queue)
            lat.append(time.perf_counter_ns() - s)
        dt = time.perf_counter() - t0
        print(f"roundtrip boto3: {n} calls in {dt:.3f} s = {n / dt:.0f} calls/s; "
              f"{percentiles(lat)} (GetQueueUrl)", flush=True)
        return

    body = make_body(a.size)
    cpu = 0.0
    if n > 0:
        lat = []
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        try:
            for _ in range(n):
                s = time.perf_counter_ns()
                t.publish(queue, body)  # one SendMessage, awaited
                lat.append(time.perf_counter_ns() - s)
        except Exception as exc:  # noqa: BLE001
            print(f"python_sqs_bench: publish failed: {exc!r}", file=sys.stderr, flush=True)
            sys.exit(2)
        pub_s = time.perf_counter() - t0
        cpu += time.process_time() - cpu0
        print(f"publish: {n} msgs in {pub_s:.3f} s = {n / pub_s:.0f} msg/s; {percentiles(lat)} "
              f"(python SqsTransport.publish, one SendMessage each)", flush=True)

    n = n if a.consume is None else a.consume
    if n <= 0:
        print(f"cpu: {cpu:.3f} s in the measured phases", flush=True)
        return
    got = 0
    first = None
    lat = []
    t = SqsTransport(url)  # a consumer of its own, as the C++ bench's
    cpu0 = time.process_time()
    t1 = time.perf_counter()
    end = t1
    idle_since = t1
    while got < n:
        s = time.perf_counter_ns()
        m = t.pop(queue, timeout=1.0)  # ReceiveMessage (1 message, long poll up to 1 s)
        if m is None:
            if time.perf_counter() - idle_since > a.idle:
                break
            continue
        t.ack(m)  # DeleteMessage
        lat.append(time.perf_counter_ns() - s)
        got += 1
        end = idle_since = time.perf_counter()
        if first is None:
            first = end
    con_s = end - t1
    cpu += time.process_time() - cpu0
    print(f"consume: {got} msgs in {con_s:.3f} s = {got / con_s:.0f} msg/s; {percentiles(lat)} "
          f"(python pop + ack: ReceiveMessage of 1 + DeleteMessage)", flush=True)
    if first is not None and got > 1 and end > first:
        steady = end - first
        print(f"consume-steady: first message after {first - t1:.3f} s; then {got - 1} msgs in "
              f"{steady:.3f} s = {(got - 1) / steady:.0f} msg/s", flush=True)
    print(f"cpu: {cpu:.3f} s in the measured phases", flush=True)
    sys.exit(0 if got == n else 1)


if __name__ == "__main__":
    main()
