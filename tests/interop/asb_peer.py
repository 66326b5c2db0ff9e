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
"""

import sys

from azure.servicebus import ServiceBusClient, ServiceBusReceiveMode

import peer_common
from babelqueue import BabelQueue
from babelqueue.asb_transport import AsbTransport
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


def receive(conn, queue, n):
    with ServiceBusClient.from_connection_string(conn) as client:
        with client.get_queue_receiver(queue_name=queue,
                                       receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = 0
            while got < int(n):
                batch = r.receive_messages(max_message_count=int(n) - got, max_wait_time=5)
                if not batch:
                    out({"error": "empty"})
                    return
                for m in batch:
                    got += 1
                    props = {}
                    for k, v in (m.application_properties or {}).items():
                        props[_text(k)] = _typed(v)
                    out({
                        "body": str(m),
                        "body_type": m.body_type.name if hasattr(m, "body_type") else None,
                        "subject": _text(m.subject),
                        "message_id": _text(m.message_id),
                        "correlation_id": _text(m.correlation_id),
                        "content_type": _text(m.content_type),
                        "properties": props,
                    })


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"publish": publish, "receive": receive}[cmd](*args)
