#!/usr/bin/env python3
"""Signs one fixed request with botocore's SigV4Auth and prints what it produced.

Used by tests/sqs/botocore_test.cpp (sqs_botocore_tests) to compare this project's SigV4
signer with botocore's for the same SQS request. Usage:

    botocore_sign.py '<spec JSON>'

spec: {"method": "POST", "url": "http://127.0.0.1:9324/", "headers": [["Content-Type", ...], ...],
       "body": "<text, sent as UTF-8>", "access_key": ..., "secret_key": ..., "token": "" or ...,
       "region": "us-east-1", "service": "sqs", "time": "YYYYMMDDTHHMMSSZ"}

botocore derives the Host header from the URL (port dropped when it is the scheme's
default), and signs every header the request carries (except its blacklist, e.g.
User-Agent), plus X-Amz-Date and, with a session token, X-Amz-Security-Token, which it adds.

Prints one JSON object: the headers botocore added ("X-Amz-Date", "X-Amz-Security-Token" when
a token is set, "Authorization"), its canonical request and string to sign, and its version.
Exit status 3 (with {"error": ...}) when botocore cannot be imported.
"""

import datetime
import json
import sys
import types


def main() -> int:
    spec = json.loads(sys.argv[1])
    try:
        import botocore
        import botocore.auth as auth_mod
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
    except ImportError as exc:  # the peer venv without the sqs extra
        print(json.dumps({"error": f"botocore not importable: {exc}"}))
        return 3

    fixed = datetime.datetime.strptime(spec["time"], "%Y%m%dT%H%M%SZ")
    # Freeze botocore's clock. Current botocore (1.3x+) reads the signing time through
    # botocore.auth.get_current_datetime(); older releases called
    # datetime.datetime.utcnow() on the module's `datetime` import.
    if hasattr(auth_mod, "get_current_datetime"):
        auth_mod.get_current_datetime = lambda *args, **kwargs: fixed
    else:

        class _Frozen(datetime.datetime):
            @classmethod
            def utcnow(cls):  # noqa: D102
                return fixed

        auth_mod.datetime = types.SimpleNamespace(datetime=_Frozen)

    captured = {}

    class Recording(auth_mod.SigV4Auth):
        """botocore's SigV4Auth, recording its intermediate strings."""

        def string_to_sign(self, request, canonical_request):
            captured["canonical_request"] = canonical_request
            sts = super().string_to_sign(request, canonical_request)
            captured["string_to_sign"] = sts
            return sts

    creds = Credentials(spec["access_key"], spec["secret_key"], spec.get("token") or None)
    request = AWSRequest(
        method=spec["method"],
        url=spec["url"],
        data=spec["body"].encode("utf-8"),
        headers=dict(spec["headers"]),
    )
    Recording(creds, spec["service"], spec["region"]).add_auth(request)

    if request.context.get("timestamp") != spec["time"]:
        print(json.dumps({"error": "could not freeze botocore's clock",
                          "timestamp": request.context.get("timestamp")}))
        return 4

    out = {"botocore_version": botocore.__version__}
    for name in ("X-Amz-Date", "X-Amz-Security-Token", "Authorization"):
        if name in request.headers:
            out[name] = request.headers[name]
    out.update(captured)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
