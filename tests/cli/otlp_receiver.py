#!/usr/bin/env python3
"""A tiny OTLP/HTTP trace receiver for the CLI tests (tests/cli/otel_cli_test.sh).

usage: otlp_receiver.py SPANS_FILE [PORT]

Listens on 127.0.0.1 on PORT (default 0: a free port) and prints the port on its first stdout
line; fails when the port is taken. Every POST
(any path: /v1/traces, or whatever OTEL_EXPORTER_OTLP_TRACES_ENDPOINT names) is decoded as an
`ExportTraceServiceRequest` (application/x-protobuf, optionally gzip) with the
`opentelemetry-proto` package; each span is appended to SPANS_FILE as one JSON line:

    {"path", "resource": {service.name...}, "scope", "name", "kind" (proto enum: 4 = PRODUCER,
     5 = CONSUMER), "trace_id", "span_id", "parent_span_id" (lower hex, "" for none),
     "attributes": {key: typed value}, "status": {"code", "message"},
     "events": [{"name", "attributes"}]}

The lines are written and flushed BEFORE the 200 reply, so once an exporting process has
exited (it waits for the reply), everything it sent is in the file. Runs until killed.
"""
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

lock = threading.Lock()


def any_value(v):
    """An AnyValue as the JSON value of its type (int stays int, bool stays bool)."""
    which = v.WhichOneof("value")
    if which == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return attributes(v.kvlist_value.values)
    if which == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, which) if which else None


def attributes(kvs):
    return {kv.key: any_value(kv.value) for kv in kvs}


def span_lines(request, path):
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield json.dumps({
                    "path": path,
                    "resource": resource,
                    "scope": ss.scope.name,
                    "name": s.name,
                    "kind": s.kind,
                    "trace_id": s.trace_id.hex(),
                    "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(),
                    "attributes": attributes(s.attributes),
                    "status": {"code": s.status.code, "message": s.status.message},
                    "events": [{"name": e.name, "attributes": attributes(e.attributes)}
                               for e in s.events],
                })


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the exporter expects

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            body = gzip.decompress(body)
        if "protobuf" not in self.headers.get("Content-Type", ""):
            self.reply(415, b"only application/x-protobuf", "text/plain")
            return
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception as e:  # a broken body is the test's failure, not the receiver's
            self.reply(400, str(e).encode(), "text/plain")
            return
        with lock, open(sys.argv[1], "a", encoding="utf-8") as out:
            for line in span_lines(request, self.path):
                out.write(line + "\n")
            out.flush()
        self.reply(200, ExportTraceServiceResponse().SerializeToString(),
                   "application/x-protobuf")

    def reply(self, code, body, content_type):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # keep the test's output to its own lines
        pass


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: otlp_receiver.py SPANS_FILE [PORT]")
    open(sys.argv[1], "a").close()
    port = int(sys.argv[2]) if len(sys.argv) == 3 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
