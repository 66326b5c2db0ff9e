"""The Python peer's make+encode and decode+accepts on the same payloads as codec_bench.

Prints one JSON object: {"make_encode_small": ns, "decode_accept_small": ns, ...}.
Run with the peer venv's interpreter (scripts/setup-python-peer.sh).
"""
import json
import sys
import time
import timeit

from babelqueue import EnvelopeCodec

SMALL = {"order_id": 1042, "amount": 99.9, "currency": "EUR",
         "customer": {"id": 7, "email": "a@b.c"},
         "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 1}]}


def large():
    items = []
    for i in range(120):
        items.append({"sku": "SKU-%d" % (100000 + i), "qty": i % 7 + 1, "price": 19.99 + i,
                      "title": "Item number %d — naïve café" % i, "tags": ["a", "b"]})
    return {"order_id": 1042, "customer": {"id": 7, "email": "a@b.c"}, "items": items}


def per_call_ns(fn, budget=0.5):
    number = 1
    while True:
        t = timeit.Timer(fn, timer=time.process_time).timeit(number=number)  # CPU time, as codec_bench
        if t >= budget:
            return t / number * 1e9
        number *= 2


def main():
    out = {}
    for name, data in (("small", SMALL), ("large_16k", large())):
        body = EnvelopeCodec.encode(EnvelopeCodec.make("urn:babel:orders:created", data, queue="orders"))

        def make_encode(d=data):
            EnvelopeCodec.encode(EnvelopeCodec.make("urn:babel:orders:created", d, queue="orders"))

        def decode_accept(b=body):
            EnvelopeCodec.accepts(EnvelopeCodec.decode(b))

        out["make_encode/" + name] = per_call_ns(make_encode)
        out["decode_accept/" + name] = per_call_ns(decode_accept)
        out["bytes/" + name] = len(body.encode("utf-8"))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
