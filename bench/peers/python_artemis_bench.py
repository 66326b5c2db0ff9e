"""The Python SDK (PyPI `babelqueue[artemis]`, python-qpid-proton) doing the job of
`babelqueue bench --broker artemis://`.

    python_artemis_bench.py --url URL --queue Q [--messages N] [--size B] [--publishers P]
                            [--credit C] [--consume N] [--level transport|app]

Phase 1: P processes (one connection each: processes avoid the GIL, as the C++ bench's
threads each own a transport) publish N envelopes of about B bytes. Phase 2 (--consume,
default N; 0 = none): one process receives and accepts that many. Prints the lines
`babelqueue bench` prints ("publish: N msgs in T s = R msg/s", "consume: ...",
"consume-steady: ..." = from the first message on), for bench/artemis_rounds.sh.

What the SDK's ArtemisTransport (1.24.0) does, and so what is measured:
- `publish`: builds a proton Message (the body as an amqp-value string; the envelope parsed
  four times for the x-opt-jms-type annotation, correlation-id, creation-time and the bq_*
  properties; not durable) and `BlockingSender.send` — sent unsettled and waited for until
  the broker settles it, one message at a time: the job of the C++ `publish()` (awaited).
  The SDK has no batch or pipelined publish.
- `pop` + `ack`: `BlockingReceiver.receive` then `accept` (settles the delivery; the
  disposition goes out at the next wait). The receiver's credit is the transport's `credit`
  argument (default 1, which is what `BabelQueue("artemis://...")` uses); python-qpid-proton
  tops the credit up as messages arrive (a credit window) rather than per settlement.
The transport connects in its constructor, before the clock starts; the sender and receiver
are attached at the first publish / pop, inside the clock (as the C++ transport's are).
Level `app` goes through the runtime instead: BabelQueue.publish (make + encode per message)
and BabelQueue.consume with a no-op handler (credit 1).
"""

import argparse
import multiprocessing as mp
import os
import sys
import time

from babelqueue import BabelQueue
from babelqueue.artemis_transport import ArtemisTransport
from babelqueue.codec import EnvelopeCodec

URN = "urn:babel:bench:message"


def make_body(size):
    data = {"seq": 0, "pad": ""}
    probe = EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))
    if size > len(probe.encode("utf-8")):
        data["pad"] = "x" * (size - len(probe.encode("utf-8")))
    return data, EnvelopeCodec.encode(EnvelopeCodec.make(URN, data))


def publisher(url, queue, count, size, level, ready, go, done):
    data, body = make_body(size)
    if level == "app":
        app = BabelQueue(url, queue=queue)
        transport = app.transport
        send = lambda: app.publish(URN, data)  # noqa: E731
    else:
        transport = ArtemisTransport(url)
        send = lambda: transport.publish(queue, body)  # noqa: E731
    ready.release()
    go.wait()
    try:
        for _ in range(count):
            send()  # returns once the broker settled the message (BlockingSender.send)
    except Exception as exc:  # noqa: BLE001
        print(f"python_artemis_bench: publish failed: {exc!r}", file=sys.stderr, flush=True)
        os._exit(2)
    done.release()
    transport.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--queue", required=True)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--size", type=int, default=370)
    ap.add_argument("--publishers", type=int, default=1)
    ap.add_argument("--credit", type=int, default=1)
    ap.add_argument("--consume", type=int, default=None)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--level", choices=["transport", "app"], default="transport")
    a = ap.parse_args()
    url, queue, n, size, publishers, level = a.url, a.queue, a.messages, a.size, a.publishers, a.level
    if n > 0:
        ready, done, go = mp.Semaphore(0), mp.Semaphore(0), mp.Event()
        procs = []
        for p in range(publishers):
            mine = n // publishers + (1 if p < n % publishers else 0)
            pr = mp.Process(target=publisher, args=(url, queue, mine, size, level, ready, go, done))
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
        print(f"publish: {n} msgs in {pub_s:.3f} s = {n / pub_s:.0f} msg/s (python {level}, "
              f"awaited, {publishers} publisher(s))", flush=True)
    n = n if a.consume is None else a.consume
    if n <= 0:
        return

    got = 0
    first = None
    if level == "app":
        app = BabelQueue(url, queue=queue)

        def handler(data, meta):
            nonlocal first
            if first is None:
                first = time.perf_counter()

        app.register(URN, handler)
        t1 = time.perf_counter()
        got = app.consume(queue, max_messages=n, timeout=a.idle, handle_signals=False)
        end = time.perf_counter()
        app.transport.close()
    else:
        t = ArtemisTransport(url, credit=a.credit)
        t1 = time.perf_counter()
        end = t1
        while got < n:
            m = t.pop(queue, timeout=a.idle)
            if m is None:
                break
            t.ack(m)
            got += 1
            end = time.perf_counter()
            if first is None:
                first = end
        t.close()
    con_s = end - t1
    print(f"consume: {got} msgs in {con_s:.3f} s = {got / con_s:.0f} msg/s (python {level}, "
          f"credit {a.credit if level == 'transport' else 1})", flush=True)
    if first is not None and got > 1 and end > first:
        steady = end - first
        print(f"consume-steady: first message after {first - t1:.3f} s; then {got - 1} msgs in "
              f"{steady:.3f} s = {(got - 1) / steady:.0f} msg/s", flush=True)
    sys.exit(0 if got == n else 1)


if __name__ == "__main__":
    main()
