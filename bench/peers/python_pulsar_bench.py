"""The Python SDK (PyPI `babelqueue[pulsar]`, pulsar-client) doing the job of
`babelqueue bench --broker pulsar://`.

    python_pulsar_bench.py --url URL --queue Q [--messages N] [--size B] [--consume N]
                           [--level transport|app] [--idle S]

Phase 1: one process publishes N envelopes of about B bytes. Phase 2 (--consume, default N;
0 = none): a second transport (its own client, as the C++ bench's consumer) receives and acks
that many. Prints the lines `babelqueue bench` prints ("publish: N msgs in T s = R msg/s;
latency p50 ..", "consume: ..", "consume-steady: .." = from the first message on), for
bench/pulsar_rounds.sh, and a last line "cpu: S s" = this process's CPU time (user + system,
the client's C++ threads included) over the two measured phases, without the interpreter's
start-up and imports.

What the SDK's PulsarTransport (1.24.0) does, and so what is measured:
- `publish`: parses the envelope for the bq-* property projection (a dict per message), then
  `producer.send(payload, properties=...)` — pulsar-client's synchronous send, which returns
  with the broker's receipt: one message at a time, awaited, the job of the C++ `publish()`.
  The producer is `client.create_producer(topic)` with pulsar-client's defaults (batching
  OFF, send timeout 30 s, 1000 pending messages), created at the first publish (inside the
  clock, as the C++ transport's). The SDK has no batch or asynchronous publish (no
  `send_async` path in PulsarTransport or BabelQueue), so this is also the reference of the
  C++ `publish_batch` rows, as with SQS.
- `pop` + `ack`: `consumer.receive(timeout_millis)` on a Shared subscription `babelqueue`
  (pulsar-client's default receiver queue of 1000), the properties copied into a dict, the
  envelope parsed for the bq-attempts / bq-job reconciliation, then `consumer.acknowledge`
  (pulsar-client groups acks: no round trip per ack). The consumer subscribes at the first
  pop, inside the clock (as the C++ transport's).
Level `app` goes through the runtime instead: BabelQueue.publish (make + encode per message)
and BabelQueue.consume with a no-op handler.
The topic and the subscription must exist before (bench/pulsar_rounds.sh makes them with
pulsar_ceiling --phase create): the SDK makes no subscription at publish, and Pulsar keeps
nothing published to a topic without one.
"""

import argparse
import sys
import time

from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.pulsar_transport import PulsarTransport

URN = "urn:babel:bench:message"


def make_body(size):
    data = {"seq": 0, "pad": ""}
    probe = EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))
    if size > len(probe.encode("utf-8")):
        data["pad"] = "x" * (size - len(probe.encode("utf-8")))
    return data, EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))


def percentiles(ns):
    if not ns:
        return "latency n/a"
    ns = sorted(ns)
    at = lambda q: ns[int(q * (len(ns) - 1))] / 1000.0  # noqa: E731
    return f"latency p50 {at(0.50):.1f} us, p99 {at(0.99):.1f} us"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--queue", required=True)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--size", type=int, default=370)
    ap.add_argument("--consume", type=int, default=None)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--level", choices=["transport", "app"], default="transport")
    a = ap.parse_args()
    url, queue, n, level = a.url, a.queue, a.messages, a.level
    data, body = make_body(a.size)
    cpu = 0.0

    if n > 0:
        if level == "app":
            app = BabelQueue(url, queue=queue)
            transport = app.transport
            send = lambda: app.publish(URN, data)  # noqa: E731
        else:
            transport = PulsarTransport(url)
            send = lambda: transport.publish(queue, body)  # noqa: E731
        lat = []
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        try:
            for _ in range(n):
                s = time.perf_counter_ns()
                send()  # returns with the broker's receipt (Producer.send)
                lat.append(time.perf_counter_ns() - s)
        except Exception as exc:  # noqa: BLE001
            print(f"python_pulsar_bench: publish failed: {exc!r}", file=sys.stderr, flush=True)
            sys.exit(2)
        pub_s = time.perf_counter() - t0
        cpu += time.process_time() - cpu0
        print(f"publish: {n} msgs in {pub_s:.3f} s = {n / pub_s:.0f} msg/s; {percentiles(lat)} "
              f"(python {level} publish, synchronous send each)", flush=True)
        transport.close()

    n = n if a.consume is None else a.consume
    if n <= 0:
        print(f"cpu: {cpu:.3f} s in the measured phases", flush=True)
        return
    got = 0
    first = None
    lat = []
    if level == "app":
        app = BabelQueue(url, queue=queue)

        def handler(data, meta):
            nonlocal first, got
            got += 1
            if first is None:
                first = time.perf_counter()

        app.register(URN, handler)
        cpu0 = time.process_time()
        t1 = time.perf_counter()
        app.consume(queue, max_messages=n, timeout=a.idle, handle_signals=False)
        end = time.perf_counter()
        cpu += time.process_time() - cpu0
        con_s = end - t1
        # consume() returns only after `timeout` of silence or max_messages: with all N handled
        # it stops at once, so `end` is the N-th message's settlement.
    else:
        t = PulsarTransport(url)
        cpu0 = time.process_time()
        t1 = time.perf_counter()
        end = t1
        idle_since = t1
        while got < n:
            s = time.perf_counter_ns()
            m = t.pop(queue, timeout=0.1)  # the C++ bench's receive slice
            if m is None:
                if time.perf_counter() - idle_since > a.idle:
                    break
                continue
            t.ack(m)
            lat.append(time.perf_counter_ns() - s)
            end = idle_since = time.perf_counter()
            if first is None:
                first = end
            got += 1
        cpu += time.process_time() - cpu0
        con_s = end - t1
        t.close()
    print(f"consume: {got} msgs in {con_s:.3f} s = {got / con_s:.0f} msg/s; {percentiles(lat)} "
          f"(python {level}, receive + acknowledge)", flush=True)
    if first is not None and got > 1:
        steady = t1 + con_s - first
        print(f"consume-steady: first message after {first - t1:.3f} s; then {got - 1} msgs in "
              f"{steady:.3f} s = {(got - 1) / steady:.0f} msg/s", flush=True)
    print(f"cpu: {cpu:.3f} s in the measured phases", flush=True)
    sys.exit(0 if got == n else 1)


if __name__ == "__main__":
    main()
