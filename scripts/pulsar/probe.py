#!/usr/bin/env python3
"""Pulsar binary-protocol round trip against the test broker of scripts/services.sh (stdlib only).

    probe.py HOST PORT [--tls CA_PEM [--server-name NAME]] [--topic TOPIC]

CONNECT, a LOOKUP of TOPIC (default persistent://public/default/bq-probe; the broker takes
ownership of its namespace bundle), a PRODUCER on it, one SEND (a small payload, no
subscription keeps it), the SEND_RECEIPT, CLOSE_PRODUCER. The receipt proves that the
broker serves the topic and that the bookie stored the entry.
With --tls the connection is TLS, verified against CA_PEM for NAME (default localhost).
Exit 0 with one summary line on stdout (server version, max message size, message id), 1 (with
the reason on stderr) otherwise. It is services.sh's readiness check for the pulsar service.
Only what this needs of the protocol (PulsarApi.proto) is implemented: frames without the
optional checksum, protobuf fields of the varint and length-delimited wire types.
"""
import argparse
import socket
import ssl
import struct
import sys
import time

TIMEOUT = 5.0

# BaseCommand.Type values (= the field number of the command inside BaseCommand)
CONNECT, CONNECTED, PRODUCER, SEND, SEND_RECEIPT, SEND_ERROR = 2, 3, 5, 6, 7, 8
SUCCESS, ERROR, CLOSE_PRODUCER, PRODUCER_SUCCESS, PING, PONG = 13, 14, 15, 17, 18, 19
LOOKUP, LOOKUP_RESPONSE = 23, 24
LOOKUP_TYPES = {0: "Redirect", 1: "Connect", 2: "Failed"}


class ProbeError(Exception):
    pass


# -- protobuf (varint and length-delimited fields only) -----------------------------------
def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, value):
    """One field: an int (varint, bools as 0/1), a str or bytes (length-delimited)."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def message(*fields):
    return b"".join(field(n, v) for n, v in fields)


def parse(buf):
    """{field number: [values]}: ints for varints, bytes for length-delimited fields."""
    out, i = {}, 0

    def read_varint():
        nonlocal i
        shift = result = 0
        while True:
            if i >= len(buf):
                raise ProbeError("truncated protobuf")
            b = buf[i]
            i += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    while i < len(buf):
        key = read_varint()
        num, wire = key >> 3, key & 7
        if wire == 0:
            val = read_varint()
        elif wire == 2:
            n = read_varint()
            val = bytes(buf[i:i + n])
            i += n
        elif wire == 1:
            val = bytes(buf[i:i + 8])
            i += 8
        elif wire == 5:
            val = bytes(buf[i:i + 4])
            i += 4
        else:
            raise ProbeError(f"unsupported wire type {wire}")
        out.setdefault(num, []).append(val)
    return out


def first(fields, num, default=None):
    return fields.get(num, [default])[0]


# -- framing ------------------------------------------------------------------------------
class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def send(self, ctype, body, metadata=None, payload=b""):
        cmd = message((1, ctype)) + field(ctype, body)
        frame = struct.pack(">I", len(cmd)) + cmd
        if metadata is not None:  # a SEND: metadata and payload follow (no checksum)
            frame += struct.pack(">I", len(metadata)) + metadata + payload
        self.sock.sendall(struct.pack(">I", len(frame)) + frame)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ProbeError("the broker closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def recv(self, want, request_id=None, id_field=1):
        """The next command of type `want` (whose field id_field is request_id, when given);
        answers PINGs, fails on ERROR/SEND_ERROR and skips anything else."""
        while True:
            (total,) = struct.unpack(">I", self._read(4))
            frame = self._read(total)
            (size,) = struct.unpack(">I", frame[:4])
            base = parse(frame[4:4 + size])
            ctype = first(base, 1)
            body = parse(first(base, ctype, b""))
            if ctype == PING:
                self.send(PONG, b"")
                continue
            if ctype in (ERROR, SEND_ERROR):
                msg = first(body, 3 if ctype == ERROR else 4, b"").decode(errors="replace")
                raise ProbeError(f"broker error (command {ctype}): {msg}")
            if ctype != want:
                continue
            if request_id is not None and first(body, id_field) != request_id:
                continue
            return body


def probe(host, port, ca, server_name, topic):
    sock = socket.create_connection((host, port), timeout=TIMEOUT)
    sock.settimeout(TIMEOUT)
    if ca:
        ctx = ssl.create_default_context(cafile=ca)  # verifies the chain and the host name
        sock = ctx.wrap_socket(sock, server_hostname=server_name)
    c = Conn(sock)
    try:
        c.send(CONNECT, message((1, "babelqueue-services-probe"), (4, 19)))
        connected = c.recv(CONNECTED)
        version = first(connected, 1, b"?").decode(errors="replace")
        max_size = first(connected, 3, "?")

        c.send(LOOKUP, message((1, topic), (2, 1), (3, False)))
        lookup = c.recv(LOOKUP_RESPONSE, 1, id_field=4)
        kind = first(lookup, 3, 0)
        if kind != 1:
            msg = first(lookup, 7, b"").decode(errors="replace")
            raise ProbeError(f"lookup of {topic}: {LOOKUP_TYPES.get(kind, kind)} {msg}".strip())

        c.send(PRODUCER, message((1, topic), (2, 1), (3, 2)))
        name = first(c.recv(PRODUCER_SUCCESS, 2), 2, b"").decode()
        now = int(time.time() * 1000)
        c.send(SEND, message((1, 1), (2, 0), (3, 1)),
               metadata=message((1, name), (2, 0), (3, now)), payload=b"babelqueue probe")
        receipt = c.recv(SEND_RECEIPT)
        msg_id = parse(first(receipt, 3, b""))
        c.send(CLOSE_PRODUCER, message((1, 1), (2, 3)))
        c.recv(SUCCESS, 3)
        return (f"{version}, max_message_size={max_size}, "
                f"sent {first(msg_id, 1)}:{first(msg_id, 2)} to {topic}")
    finally:
        sock.close()


def main(argv):
    ap = argparse.ArgumentParser(description="Pulsar round trip (scripts/services.sh pulsar)")
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--tls", metavar="CA_PEM", help="TLS, verified against this CA")
    ap.add_argument("--server-name", default="localhost", help="the name the certificate must have")
    ap.add_argument("--topic", default="persistent://public/default/bq-probe")
    a = ap.parse_args(argv)
    try:
        print(probe(a.host, a.port, a.tls, a.server_name, a.topic))
        return 0
    except (OSError, ProbeError, ssl.SSLError) as e:
        print(f"pulsar probe {a.host}:{a.port}{' (tls)' if a.tls else ''}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
