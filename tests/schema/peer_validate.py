"""The Python SDK's payload validator (PyPI `babelqueue`: babelqueue.schema.validate_schema) over
the same inputs the C++ test validates. Input (argv[1], JSON): {"manifest": path to the
conformance manifest, "registry": [{"name", "schema_file", "envelope_file"}]}. Python reads and
decodes every file itself, so its own number types (1 vs 1.0) are what it validates.
Output (stdout, JSON): {"version": "...", "results": {name: {"valid": bool, "violation": str|null}}}.
Conformance cases are named "payload_schema/<case>"."""
import json
import sys
from importlib.metadata import version

from babelqueue.schema import validate_schema

with open(sys.argv[1], encoding="utf-8") as fh:
    request = json.load(fh)

results = {}


def record(name, schema, data):
    violation = validate_schema(schema, data)
    results[name] = {"valid": violation is None, "violation": violation}


with open(request["manifest"], encoding="utf-8") as fh:
    block = json.load(fh)["payload_schema"]
for case in block["cases"]:
    record("payload_schema/" + case["name"], block["schema"], case.get("data"))

for case in request["registry"]:
    with open(case["schema_file"], encoding="utf-8") as fh:
        schema = json.load(fh)
    with open(case["envelope_file"], encoding="utf-8") as fh:
        envelope = json.load(fh)
    record(case["name"], schema, envelope.get("data"))

json.dump({"version": version("babelqueue"), "results": results}, sys.stdout)
