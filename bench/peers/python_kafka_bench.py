"""The Python SDK (PyPI `babelqueue[kafka]`, confluent-kafka) doing the job of
`babelqueue bench --broker kafka://`.

    python_kafka_bench.py --url URL --topic T [--messages N] [--size B] [--publishers P]
                          [--mode publish|settle] [--consume N] [--group G] [--level transport|app]

Phase 1: P processes (one producer each: processes avoid the GIL, as the C++ bench's threads
each own a transport) publish N envelopes of about B bytes. Phase 2 (--consume, default N; 0 =
none): one process consumes and acks that many in consumer group G (default: a fresh one per
run). Prints the lines `babelqueue bench` prints ("publish: N msgs in T s = R msg/s",
"consume: ...", "consume-steady: ..." = from the first record on), for bench/kafka_rounds.sh.

What the SDK's KafkaTransport (1.24.0) does, and so what is measured:
- `publish` (default mode): `producer.produce(...)` + `producer.poll(0)` — fire-and-forget,
  the delivery report is not awaited. The clock stops after a final `producer.flush()`, so
  every record was acknowledged by the broker when it stops (as after the C++ publish_batch).
- `settle`: `publish_settle` — produce, then `producer.flush()` and the delivery report
  checked, per record: the same guarantee as the C++ `publish()` (awaited per record).
- consume: `pop` (one `consumer.poll`) + `ack`, which commits that record's offset
  synchronously (`commit(message=..., asynchronous=False)`): one commit round trip per record.
The producer and consumer use the SDK's defaults (confluent-kafka's bundled librdkafka:
acks=all, idempotence off, linger.ms 5); the SDK has no settings for commit batching.
Level `app` goes through the runtime instead: BabelQueue.publish (make + encode per message)
and BabelQueue.consume with a no-op handler.
"""

import argparse
import multiprocessing as mp
import os
import sys
import time

from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.kafka_transport import KafkaTransport

URN = "urn:babel:bench:message"


def make_body(size):
    data = {"seq": 0, "pad": ""}
    probe = EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))
    if size > len(probe.encode("utf-8")):
        data["pad"] = "x" * (size - len(probe.encode("utf-8")))
    return data, EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))


def publisher(url, topic, count, size, mode, level, ready, go, done):
    data, body = make_body(size)
    if level == "app":
        app = BabelQueue(url, queue=topic)
        transport = app.transport
        send = lambda: app.publish(URN, data)  # noqa: E731
    else:
        transport = KafkaTransport(url)
        if mode == "settle":
            send = lambda: transport.publish_settle(topic, body)  # noqa: E731
        else:
            send = lambda: transport.publish(topic, body)  # noqa: E731
    producer = transport._producer_()
    producer.list_topics(timeout=30)  # connected before the clock starts
    ready.release()
    go.wait()
    for _ in range(count):
        send()
    left = producer.flush(60)  # every record acknowledged when the clock stops
    if left:
        print(f"python_kafka_bench: {left} records not delivered", file=sys.stderr, flush=True)
        os._exit(2)
    done.release()
    transport.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--messages", type=int, default=10000)
    ap.add_argument("--size", type=int, default=370)
    ap.add_argument("--publishers", type=int, default=1)
    ap.add_argument("--mode", choices=["publish", "settle"], default="publish")
    ap.add_argument("--consume", type=int, default=None)
    ap.add_argument("--group", default=f"bq-bench-py-{os.getpid()}")
    ap.add_argument("--level", choices=["transport", "app"], default="transport")
    a = ap.parse_args()
    url, topic, n, size, publishers = a.url, a.topic, a.messages, a.size, a.publishers
    mode, group, level = a.mode, a.group, a.level
    if n > 0:
        ready, done, go = mp.Semaphore(0), mp.Semaphore(0), mp.Event()
        procs = []
        for p in range(publishers):
            mine = n // publishers + (1 if p < n % publishers else 0)
            pr = mp.Process(target=publisher, args=(url, topic, mine, size, mode, level, ready, go, done))
            pr.start()
            procs.append(pr)
        for _ in procs:
            ready.acquire()
        t0 = time.perf_counter()
        go.set()
        for _ in procs:
            done.acquire()
        pub_s = time.perf_counter() - t0
        for pr in procs:
            pr.join()
        if any(pr.exitcode != 0 for pr in procs):
            sys.exit(2)
        print(f"publish: {n} msgs in {pub_s:.3f} s = {n / pub_s:.0f} msg/s (python {level} {mode}, "
              f"{publishers} publisher(s))", flush=True)
    n = n if a.consume is None else a.consume
    if n <= 0:
        return

    got = 0
    first = None
    t1 = time.perf_counter()
    if level == "app":
        app = BabelQueue(url, queue=topic)
        app.transport._group_id = group

        def handler(data, meta):
            nonlocal first
            if first is None:
                first = time.perf_counter()

        app.register(URN, handler)
        got = app.consume(topic, max_messages=n, timeout=5.0, handle_signals=False)
        con_s = time.perf_counter() - t1
        app.transport.close()
    else:
        t = KafkaTransport(url, group_id=group)
        idle_since = time.perf_counter()
        while got < n:
            m = t.pop(topic, timeout=0.1)
            if m is None:
                if time.perf_counter() - idle_since > 5.0:
                    break
                continue
            if first is None:
                first = time.perf_counter()
            t.ack(m)
            got += 1
            idle_since = time.perf_counter()
        con_s = time.perf_counter() - t1
        t.close()
    print(f"consume: {got} msgs in {con_s:.3f} s = {got / con_s:.0f} msg/s (python {level}, "
          f"poll + synchronous commit per record)", flush=True)
    if first is not None and got > 1:
        steady = t1 + con_s - first
        print(f"consume-steady: first record after {first - t1:.3f} s; then {got - 1} msgs in "
              f"{steady:.3f} s = {(got - 1) / steady:.0f} msg/s", flush=True)
    sys.exit(0 if got == n else 1)


if __name__ == "__main__":
    main()
