"""The Python side of the live Azure Service Bus interop tests (tests/interop/asb_python_test.cpp),
on the Service Bus STAND-IN of scripts/services.sh (Artemis + a CBS responder; not a namespace).

Runs the real Python SDK from PyPI (`babelqueue[azureservicebus]`: its AsbTransport over the
official `azure-servicebus` client). Every command prints one JSON object per line on stdout.

    asb_peer.py publish CONN QUEUE CASES_JSON  the Python runtime over AsbTransport(connection_string=CONN)
                                               publishes each case; prints {"id": ...}
    asb_peer.py receive CONN QUEUE N           N messages with the azure-servicebus client itself, in
                                               RECEIVE_AND_DELETE mode (the stand-in has no PeekLock lock
                                               tokens, so the SDK cannot complete a peek-locked message
                                               there); prints body and native properties with their types
    asb_peer.py receive-timed CONN QUEUE N     the same, waiting up to 30 s; prints {"polling_ms"} (Unix ms of
                                               its first receive), then per message also {"received_ms"} and
                                               the SDK's scheduled_enqueue_time_utc as {"scheduled_ms"}
    asb_peer.py send-scheduled CONN QUEUE MS   one envelope sent by the azure-servicebus client itself with
                                               ServiceBusMessage(scheduled_enqueue_time_utc = now + MS);
                                               prints the body, {"due_ms"} and {"sent_ms"} (the Python SDK's
                                               AsbTransport has no delayed publish: this is the SDK it uses)
"""

import datetime
import sys
import time

from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode

import peer_common
from babelqueue import BabelQueue
from babelqueue.asb_transport import AsbTransport
from babelqueue.codec import EnvelopeCodec
from peer_common import out


def _typed(value):
    kind = type(value).__name__
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    return {"type": kind, "value": value}


def _text(value):
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def publish(conn, queue, cases_json):
    peer_common.make_app = lambda url, q, **o: BabelQueue(
        transport=AsbTransport(connection_string=conn), queue=q, **o)
    peer_common.publish(conn, queue, cases_json)


def _now_ms():
    return int(time.time() * 1000)


def _record(m, timed):
    props = {}
    for k, v in (m.application_properties or {}).items():
        props[_text(k)] = _typed(v)
    record = {
        "body": str(m),
        "body_type": m.body_type.name if hasattr(m, "body_type") else None,
        "subject": _text(m.subject),
        "message_id": _text(m.message_id),
        "correlation_id": _text(m.correlation_id),
        "content_type": _text(m.content_type),
        "properties": props,
    }
    if timed:
        record["received_ms"] = _now_ms()
        at = m.scheduled_enqueue_time_utc
        record["scheduled_ms"] = round(at.timestamp() * 1000) if at is not None else None
    return record


def receive(conn, queue, n, timed=False):
    deadline = time.time() + (30 if timed else 0)
    with ServiceBusClient.from_connection_string(conn) as client:
        with client.get_queue_receiver(queue_name=queue,
                                       receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = 0
            if timed:
                out({"polling_ms": _now_ms()})
            while got < int(n):
                batch = r.receive_messages(max_message_count=int(n) - got, max_wait_time=5)
                if not batch and time.time() >= deadline:
                    out({"error": "empty"})
                    return
                for m in batch:
                    got += 1
                    out(_record(m, timed))


def receive_timed(conn, queue, n):
    receive(conn, queue, n, timed=True)


def send_scheduled(conn, queue, ms):
    body = EnvelopeCodec.encode(EnvelopeCodec.make("urn:babel:interop:unicode", {"n": 1},
                                                   queue=queue, trace_id="trace-py-scheduled"))
    due = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(milliseconds=int(ms))
    with ServiceBusClient.from_connection_string(conn) as client:
        with client.get_queue_sender(queue_name=queue) as sender:
            sender.send_messages(ServiceBusMessage(body, scheduled_enqueue_time_utc=due))
            out({"body": body, "due_ms": round(due.timestamp() * 1000), "sent_ms": _now_ms()})


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "receive": receive, "receive-timed": receive_timed,
     "send-scheduled": send_scheduled}[cmd](*args)
