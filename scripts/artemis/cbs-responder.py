#!/usr/bin/env python3
"""The CBS node of the Azure Service Bus stand-in of scripts/services.sh (python-qpid-proton).

    cbs-responder.py --url amqp://127.0.0.1:PORT --key-name NAME --key KEY --log FILE

Connects to the test Artemis broker with SASL ANONYMOUS (reconnect off: when the broker goes
away it exits, and services.sh starts it again with the broker), attaches a receiver and a
sender to the MULTICAST address `$cbs`, and answers every CBS put-token request it receives
there: a message with application property operation = "put-token", `name` (the audience),
`type`, and an amqp-value string body (the token). The answer goes to `$cbs` (where a
client's response link, source `$cbs`, listens: the azure-servicebus SDKs send no reply-to,
and a client that follows the CBS draft attaches its response link with source `$cbs` and
target = its reply-to; a reply-to naming another address is copied into the answer's `to`
only, no message is sent there), with correlation-id = the request's message-id and the
application properties status-code (AMQP int) and status-description:

  202 "Accepted"      the token is a SAS token that Azure Service Bus would take:
                        `SharedAccessSignature sr=<url-encoded URI>&sig=<url-encoded base64
                        HMAC-SHA256(key as UTF-8, <sr as written in the token> + "\\n" + <se>)>
                        &se=<expiry, epoch seconds>&skn=<key name>` (any order) with
                        skn = --key-name, sig verified with --key, se not in the past, and the
                        URL-decoded sr covering the audience `name` (equal, or a parent of it:
                        sb://host/ covers sb://host/queue; compared without scheme, case and a
                        trailing slash, as ASB takes an http:// sr for an amqp:// audience)
                        and the type servicebus.windows.net:sastoken or jwt (the
                        azure-servicebus Python SDK puts SAS tokens as "jwt")
  401 "Unauthorized"  anything else about the token (wrong key or key name, expired,
                        audience not covered, malformed, another type, not a SAS token)
  400 "Bad Request"   a request without `name`, or whose body is not an amqp-value string

Every request is logged to --log as one JSON object a line: time, message_id, reply_to,
audience, type, expiration (the application property, if sent), key_name (skn), sr (decoded),
expiry (se), expires_in (se - now, seconds), token, status, verdict (accepted | refused),
reasons (why refused; empty when accepted). Messages on `$cbs` that are not put-token requests
(answers, its own included) are ignored.

Ready: once attached, it sends itself one put-token request (a valid token; not logged) and
prints "cbs-responder: ready" when its answer came back through the broker, i.e. ANONYMOUS
login, `$cbs` routing and the answer path work. Exit status 1 when the connection fails or
drops.
"""
import argparse
import base64
import datetime
import hashlib
import hmac
import json
import sys
import time
import uuid
from urllib.parse import quote_plus, unquote_plus

from proton import Message, int32
from proton.handlers import MessagingHandler
from proton.reactor import Container

SAS_TYPE = "servicebus.windows.net:sastoken"
# The token types taken: the azure-servicebus Python SDK (7.15.0, pyamqp transport) puts its SAS
# tokens with type "jwt" (JWTTokenAuth's default), and Service Bus takes them.
TOKEN_TYPES = (SAS_TYPE, "jwt")
CBS = "$cbs"


def say(text):
    print("cbs-responder: " + text, flush=True)


def sas_token(uri, key_name, key, expiry):
    """A SAS token as the azure-servicebus SDK makes one (its _pyamqp/utils.py)."""
    sr = quote_plus(uri)
    sig = base64.b64encode(hmac.new(key.encode(), ("%s\n%d" % (sr, expiry)).encode(),
                                    hashlib.sha256).digest()).decode()
    return "SharedAccessSignature sr=%s&sig=%s&se=%d&skn=%s" % (
        sr, quote_plus(sig), expiry, quote_plus(key_name))


def _norm(uri):
    uri = uri.strip().lower()
    if "://" in uri:
        uri = uri.split("://", 1)[1]
    return uri.rstrip("/")


def check_token(token, token_type, audience, key_name, key, now):
    """(reasons, fields): why the token is refused (empty list: accepted), and what it said."""
    fields, reasons = {}, []
    if token_type not in TOKEN_TYPES:
        reasons.append("token type %r is neither of %s" % (token_type, " ".join(TOKEN_TYPES)))
    prefix = "SharedAccessSignature "
    if not token.startswith(prefix):
        return reasons + ["not a SharedAccessSignature token (the stand-in verifies SAS "
                          "tokens only; it cannot verify a JWT)"], fields
    raw = {}
    for part in token[len(prefix):].split("&"):
        k, sep, v = part.partition("=")
        if not sep or k in raw:
            return reasons + ["malformed SharedAccessSignature (field %r)" % part], fields
        raw[k] = v
    missing = [k for k in ("sr", "sig", "se", "skn") if k not in raw]
    if missing:
        return reasons + ["SharedAccessSignature without %s" % ", ".join(missing)], fields
    fields["sr"] = unquote_plus(raw["sr"])
    fields["key_name"] = unquote_plus(raw["skn"])
    try:
        se = int(raw["se"])
        fields["expiry"] = se
        fields["expires_in"] = se - int(now)
    except ValueError:
        return reasons + ["se %r is not an integer" % raw["se"]], fields
    if fields["key_name"] != key_name:
        reasons.append("key name %r is not %r" % (fields["key_name"], key_name))
    want = base64.b64encode(hmac.new(key.encode(), ("%s\n%s" % (raw["sr"], raw["se"])).encode(),
                                     hashlib.sha256).digest()).decode()
    if not hmac.compare_digest(unquote_plus(raw["sig"]).encode(), want.encode()):
        reasons.append("the signature does not verify with the key of %r" % key_name)
    if se <= now:
        reasons.append("expired %d s ago (se %d)" % (int(now) - se, se))
    sr, aud = _norm(fields["sr"]), _norm(audience)
    if not sr or not (aud == sr or aud.startswith(sr + "/")):
        reasons.append("sr %r does not cover the audience %r" % (fields["sr"], audience))
    return reasons, fields


def _text(value):
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


class Responder(MessagingHandler):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.log = open(args.log, "a", encoding="utf-8", buffering=1)
        self.opened = set()
        self.selftest_id = "cbs-responder-selftest-" + uuid.uuid4().hex
        self.ready = False
        self.sender = None

    def on_start(self, event):
        conn = event.container.connect(self.args.url, allowed_mechs="ANONYMOUS",
                                       reconnect=False)
        event.container.create_receiver(conn, CBS, name="cbs-responder-requests")
        self.sender = event.container.create_sender(conn, CBS, name="cbs-responder-replies")

    def on_link_opened(self, event):
        self.opened.add(event.link.name)
        if len(self.opened) == 2:
            say("attached to %s on %s; self-test" % (CBS, self.args.url))
            audience = "sb://cbs-responder/selftest"
            token = sas_token(audience, self.args.key_name, self.args.key, int(time.time()) + 600)
            self.sender.send(Message(id=self.selftest_id, body=token, properties={
                "operation": "put-token", "type": SAS_TYPE, "name": audience}))

    def on_message(self, event):
        m = event.message
        props = m.properties or {}
        if m.correlation_id is not None:
            if m.correlation_id == self.selftest_id and not self.ready:
                if props.get("status-code") != 202:
                    say("self-test refused: %r" % props)
                    sys.exit(1)
                self.ready = True
                say("ready")
            return
        if props.get("operation") != "put-token":
            return
        self.answer(m, props)

    def answer(self, m, props):
        now = time.time()
        audience, token_type, token = props.get("name"), props.get("type"), m.body
        entry = {
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
            "message_id": _text(m.id), "reply_to": m.reply_to, "audience": _text(audience),
            "type": _text(token_type), "expiration": _text(props.get("expiration")),
            "key_name": None, "sr": None, "expiry": None, "expires_in": None,
            "token": _text(token),
        }
        if not isinstance(audience, str) or not audience:
            status, reasons = 400, ["no name (audience) application property"]
        elif not isinstance(token, str):
            kind = ("binary" if isinstance(token, (bytes, memoryview))
                    else type(token).__name__)
            status, reasons = 400, ["the body is %s, not an amqp-value string" % kind]
        else:
            reasons, fields = check_token(token, token_type, audience, self.args.key_name,
                                          self.args.key, now)
            entry.update(fields)
            status = 401 if reasons else 202
        description = {202: "Accepted", 400: "Bad Request", 401: "Unauthorized"}[status]
        entry.update(status=status, verdict="accepted" if status == 202 else "refused",
                     reasons=reasons)
        if m.id != self.selftest_id:
            self.log.write(json.dumps(entry, sort_keys=True) + "\n")
        reply = Message(correlation_id=m.id, properties={
            "status-code": int32(status), "status-description": description})
        if m.reply_to:
            reply.address = m.reply_to
        self.sender.send(reply)

    def on_transport_error(self, event):
        cond = event.transport.condition
        say("connection failed: %s" % (cond.description if cond else "transport error"))
        sys.exit(1)

    def on_connection_error(self, event):
        say("connection closed by the broker: %s" % event.connection.remote_condition)
        sys.exit(1)

    def on_link_error(self, event):
        say("link %s refused: %s" % (event.link.name, event.link.remote_condition))
        sys.exit(1)

    def on_disconnected(self, event):
        say("disconnected from %s" % self.args.url)
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--key-name", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--log", required=True)
    args = p.parse_args()
    say("connecting to %s (SASL ANONYMOUS), key name %s, log %s"
        % (args.url, args.key_name, args.log))
    Container(Responder(args)).run()
    sys.exit(1)  # the container ends only when the connection is gone


if __name__ == "__main__":
    main()
