#!/usr/bin/env python3
"""Prints the build targets whose executables run the CTest tests carrying a label.

    ctest --test-dir build/dev --show-only=json-v1 | python3 scripts/ctest-targets.py runtime build/dev

Used by scripts/test.sh to build, in a sanitizer tree, only the test executables it runs
(babelqueue_add_test names the executable after its target). Tests whose command is not an
executable of the build tree (e.g. `cmake -P` scripts) are ignored.
"""
import json
import os
import sys


def main() -> int:
    label = sys.argv[1]
    build_dir = os.path.realpath(sys.argv[2]) + os.sep
    data = json.load(sys.stdin)
    targets = set()
    for test in data.get("tests", []):
        labels = []
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value", [])
        command = test.get("command") or []
        if label in labels and command and os.path.realpath(command[0]).startswith(build_dir):
            targets.add(os.path.basename(command[0]))
    print(" ".join(sorted(targets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
