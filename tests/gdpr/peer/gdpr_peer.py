"""The Python reference SDK's protect/unprotect, driven by the C++ interop test.

Usage: gdpr_peer.py protect|unprotect SCHEMA.json DATA.json KEY_HEX
       gdpr_peer.py paths SCHEMA.json
Prints the resulting data (or the schema's sensitive paths as [[path, category], ...]) as
JSON on stdout; exit 3 with the error on stderr when the SDK raises (e.g. DecryptError).

The SDK ships only the Cipher protocol; the reference cipher below is the one its docstring
documents (cryptography's AESGCM, base64(nonce(12) || ciphertext || tag(16)), std padded
base64, no associated data) — decision D8's layout.
"""
import base64
import json
import os
import sys

from babelqueue.gdpr import protect, unprotect
from babelqueue.schema import sensitive_paths
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


class AesGcmCipher:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def encrypt(self, plaintext: bytes) -> str:
        nonce = os.urandom(12)
        return base64.b64encode(nonce + self._aead.encrypt(nonce, plaintext, None)).decode("ascii")

    def decrypt(self, ciphertext: str) -> bytes:
        raw = base64.b64decode(ciphertext)
        return self._aead.decrypt(raw[:12], raw[12:], None)


def main() -> int:
    mode, schema_file = sys.argv[1:3]
    with open(schema_file, encoding="utf-8") as f:
        schema = json.load(f)
    if mode == "paths":
        json.dump([[p.path, p.category] for p in sensitive_paths(schema)], sys.stdout)
        return 0
    data_file, key_hex = sys.argv[3:5]
    with open(data_file, encoding="utf-8") as f:
        data = json.load(f)
    cipher = AesGcmCipher(bytes.fromhex(key_hex))
    try:
        (protect if mode == "protect" else unprotect)(data, schema, cipher)
    except Exception as exc:  # noqa: BLE001 - report any SDK failure to the C++ side
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    json.dump(data, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
