#!/usr/bin/env python3
"""AMQP 1.0 round trip against the test broker of scripts/services.sh (Python stdlib only).

    amqp-probe.py HOST PORT USER PASSWORD [--tls CA_PEM [--server-name NAME]] [--address Q]

SASL PLAIN login, open, begin, a sender link that sends one pre-settled message (an
amqp-value string with a random marker) to address Q (default bq.probe), a receiver link on Q
with snd-settle-mode `settled` (the broker removes what it delivers: the queue ends empty),
the message back, close.
With --tls the connection is TLS, verified against CA_PEM for NAME (default localhost).
Exit 0 when the marker came back, 1 (with the reason on stderr) otherwise. It is
services.sh's readiness check for the artemis service: the broker must not only listen but log
a user in and route a message. Only what this needs of AMQP 1.0 is implemented.
"""
import os
import socket
import ssl
import struct
import sys

TIMEOUT = 5.0


# -- encoding (only the types the probe sends) ------------------------------------------
class Sym(str):
    pass


def enc(v):
    if v is None:
        return b"\x40"
    if v is True:
        return b"\x41"
    if v is False:
        return b"\x42"
    if isinstance(v, tuple) and v[0] == "ubyte":
        return b"\x50" + struct.pack(">B", v[1])
    if isinstance(v, int):  # uint
        return b"\x70" + struct.pack(">I", v)
    if isinstance(v, Sym):
        b = v.encode()
        return b"\xa3" + struct.pack(">B", len(b)) + b
    if isinstance(v, str):
        b = v.encode()
        return b"\xb1" + struct.pack(">I", len(b)) + b
    if isinstance(v, bytes):
        return b"\xb0" + struct.pack(">I", len(v)) + v
    if isinstance(v, Described):
        return b"\x00\x53" + struct.pack(">B", v.code) + enc(v.value)
    if isinstance(v, list):
        items = b"".join(enc(x) for x in v)
        return b"\xd0" + struct.pack(">II", len(items) + 4, len(v)) + items
    raise TypeError(type(v))


class Described:
    def __init__(self, code, value):
        self.code, self.value = code, value


# -- decoding (every type, enough to read performatives) --------------------------------
FIXED = {0x4: 0, 0x5: 1, 0x6: 2, 0x7: 4, 0x8: 8, 0x9: 16}
UNSIGNED = {0x50, 0x52, 0x53, 0x60, 0x70, 0x80}


def dec(b, i):
    """Returns (value, next index). Described values come back as (descriptor, value)."""
    c = b[i]
    i += 1
    if c == 0x00:
        d, i = dec(b, i)
        v, i = dec(b, i)
        return (d, v), i
    hi = c >> 4
    if hi in FIXED:
        n = FIXED[hi]
        raw = b[i:i + n]
        i += n
        if c in (0x40,):
            return None, i
        if c == 0x41:
            return True, i
        if c == 0x42:
            return False, i
        if c in (0x43, 0x44):
            return 0, i
        if c == 0x45:
            return [], i
        if c == 0x56:
            return raw[0] != 0, i
        if c in UNSIGNED:
            return int.from_bytes(raw, "big"), i
        return raw, i
    if hi in (0xa, 0xb, 0xc, 0xd, 0xe, 0xf):
        w = 1 if hi in (0xa, 0xc, 0xe) else 4
        size = int.from_bytes(b[i:i + w], "big")
        i += w
        body, end = b[i:i + size], i + size
        if hi in (0xa, 0xb):
            if c in (0xa1, 0xb1, 0xa3, 0xb3):
                return body.decode("utf-8", "replace"), end
            return bytes(body), end
        if hi in (0xc, 0xd):
            count = int.from_bytes(body[:w], "big")
            j, items = w, []
            for _ in range(count):
                v, j = dec(body, j)
                items.append(v)
            return items, end
        return None, end  # arrays: not needed
    raise ValueError("bad AMQP constructor 0x%02x" % c)


# -- framing ----------------------------------------------------------------------------
class Conn:
    def __init__(self, sock):
        self.s, self.buf = sock, b""

    def read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("the broker closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send_frame(self, ftype, perf, payload=b"", channel=0):
        body = enc(perf) + payload
        self.s.sendall(struct.pack(">IBBH", len(body) + 8, 2, ftype, channel) + body)

    def frame(self):
        """Returns (performative code, fields, payload); empty frames are skipped."""
        while True:
            size, doff, _ftype, _channel = struct.unpack(">IBBH", self.read(8))
            body = self.read(size - 8)[doff * 4 - 8:]
            if not body:
                continue  # heartbeat
            (desc, fields), i = dec(body, 0)
            return desc, fields or [], body[i:]

    def expect(self, *codes):
        """The next frame whose code is in codes; a close/end/detach with an error fails."""
        while True:
            code, fields, payload = self.frame()
            if code in (0x18, 0x17, 0x16) and code not in codes:  # close, end, detach
                err = fields[-1] if fields else None
                raise RuntimeError("the broker sent %s: %r" % (
                    {0x18: "close", 0x17: "end", 0x16: "detach"}[code], err))
            if code in codes:
                return code, fields, payload


def main(argv):
    args, opts = [], {"--tls": None, "--server-name": "localhost", "--address": "bq.probe"}
    it = iter(argv)
    for a in it:
        if a in opts:
            opts[a] = next(it)
        else:
            args.append(a)
    host, port, user, password = args[0], int(args[1]), args[2], args[3]
    address = opts["--address"]
    marker = "bq-probe " + os.urandom(8).hex()

    sock = socket.create_connection((host, port), timeout=TIMEOUT)
    sock.settimeout(TIMEOUT)
    if opts["--tls"]:
        ctx = ssl.create_default_context(cafile=opts["--tls"])
        sock = ctx.wrap_socket(sock, server_hostname=opts["--server-name"])
    c = Conn(sock)

    # SASL PLAIN
    c.s.sendall(b"AMQP\x03\x01\x00\x00")
    if c.read(8) != b"AMQP\x03\x01\x00\x00":
        raise RuntimeError("no SASL protocol header from the broker")
    c.expect(0x40)  # sasl-mechanisms
    c.send_frame(1, Described(0x41, [Sym("PLAIN"),
                                     b"\0" + user.encode() + b"\0" + password.encode()]))
    _, fields, _ = c.expect(0x44)  # sasl-outcome
    if fields[0] != 0:
        raise RuntimeError("SASL PLAIN login failed (sasl-outcome code %r)" % fields[0])

    # open, begin
    c.s.sendall(b"AMQP\x00\x01\x00\x00")
    if c.read(8) != b"AMQP\x00\x01\x00\x00":
        raise RuntimeError("no AMQP protocol header from the broker")
    c.send_frame(0, Described(0x10, ["bq-probe-" + os.urandom(4).hex(), opts["--server-name"]]))
    c.expect(0x10)
    c.send_frame(0, Described(0x11, [None, 0, 2048, 2048]))
    _, begin, _ = c.expect(0x11)
    peer_next_outgoing = begin[1]

    # sender link (handle 0): wait for credit, send one pre-settled message
    c.send_frame(0, Described(0x12, ["bq-probe-sender", 0, False, None, None,
                                     Described(0x28, []), Described(0x29, [address]),
                                     None, False, 0]))  # initial-delivery-count 0
    c.expect(0x12)
    while True:
        _, flow, _ = c.expect(0x13)
        if len(flow) > 6 and flow[4] == 0 and (flow[6] or 0) > 0:
            break
    message = b"\x00\x53\x77" + enc(marker)  # amqp-value section
    c.send_frame(0, Described(0x14, [0, 0, b"\x00", 0, True]), message)

    # receiver link (handle 1), settled by the broker on delivery; the credit lets the probe
    # drain what an earlier, interrupted probe left in the queue before its own message
    c.send_frame(0, Described(0x12, ["bq-probe-receiver", 1, True, ("ubyte", 1), None,
                                     Described(0x28, [address]), Described(0x29, [])]))
    c.expect(0x12)
    c.send_frame(0, Described(0x13, [peer_next_outgoing, 2048, 1, 2048, 1, 0, 100]))
    while True:
        _, transfer, payload = c.expect(0x14)
        if transfer[0] == 1 and marker.encode() in payload:
            break
    c.send_frame(0, Described(0x18, []))
    try:
        c.expect(0x18)
    except (EOFError, OSError):
        pass
    sock.close()


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    try:
        main(sys.argv[1:])
    except Exception as e:  # noqa: BLE001 - any failure is "not ready", with its reason
        print("amqp-probe: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
