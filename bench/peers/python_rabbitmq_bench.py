"""The Python SDK (PyPI `babelqueue[amqp]`) doing the job of `babelqueue bench --broker amqp://`.

    python_rabbitmq_bench.py URL QUEUE MESSAGES SIZE PUBLISHERS [transport|app]

Phase 1: PUBLISHERS processes (one connection each: pika is not thread-safe, and processes
avoid the GIL) publish MESSAGES envelopes of about SIZE bytes. Phase 2: one process consumes
and acks them all. Prints the lines `babelqueue bench` prints ("publish: N msgs in T s =
R msg/s", "consume: ..."), for bench/rabbitmq_rounds.sh.

Level `transport` (default) is the same seam the C++ CLI measures: PikaTransport.publish of a
pre-encoded body, PikaTransport.pop + ack. Level `app` goes through the runtime:
BabelQueue.publish (make + encode per message) and BabelQueue.consume with a no-op handler.
The SDK publishes without publisher confirms and consumes by basic.get (no prefetch): it has
no settings to match the C++ confirm window or prefetch, so it runs as it is.
"""

import multiprocessing as mp
import sys
import time

from babelqueue import BabelQueue
from babelqueue.codec import EnvelopeCodec
from babelqueue.pika_transport import PikaTransport

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
        app.transport._declare(queue)  # connect before the clock starts
        send = lambda: app.publish(URN, data)  # noqa: E731
        transport = app.transport
    else:
        transport = PikaTransport(url)
        transport._declare(queue)
        send = lambda: transport.publish(queue, body)  # noqa: E731
    ready.release()
    go.wait()
    for _ in range(count):
        send()
    transport._chan().queue_declare(queue=queue, durable=True, passive=True)  # all processed
    done.release()
    transport.close()


def main():
    url, queue, n, size, publishers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    level = sys.argv[6] if len(sys.argv) > 6 else "transport"
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
    print(f"publish: {n} msgs in {pub_s:.3f} s = {n / pub_s:.0f} msg/s (python {level}, "
          f"{publishers} publisher(s))", flush=True)

    got = 0
    if level == "app":
        app = BabelQueue(url, queue=queue)
        app.transport._declare(queue)

        def handler(data, meta):
            pass

        app.register(URN, handler)
        t1 = time.perf_counter()
        got = app.consume(queue, max_messages=n, timeout=1.0, handle_signals=False)
        con_s = time.perf_counter() - t1
        app.transport.close()
    else:
        t = PikaTransport(url)
        t._declare(queue)
        t1 = time.perf_counter()
        while got < n:
            m = t.pop(queue, timeout=1.0)
            if m is None:
                break
            t.ack(m)
            got += 1
        con_s = time.perf_counter() - t1
        t.close()
    print(f"consume: {got} msgs in {con_s:.3f} s = {got / con_s:.0f} msg/s (python {level}, basic.get)",
          flush=True)
    sys.exit(0 if got == n else 1)


if __name__ == "__main__":
    main()
