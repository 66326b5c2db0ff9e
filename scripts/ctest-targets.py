#!/usr/bin/env python3
"""Prints the build targets whose executables run the CTest tests carrying a label that
matches a regular expression (CTest's own `-L` semantics: a search, not a full match).

    ctest --test-dir build/dev --show-only=json-v1 | python3 scripts/ctest-targets.py '^(runtime|sqlite|redis|rabbitmq)$' build/dev [--exclude REGEX]

Used by scripts/test.sh to build, in a sanitizer tree, only the test executables it runs
(babelqueue_add_test names the executable after its target). Tests whose command is not an
executable of the build tree (e.g. `cmake -P` scripts) are ignored. A test without labels
counts as having the empty label, so '.*' selects every test (the asan phase: all tests
minus --exclude).
"""
import json
import os
import re
import sys


def main() -> int:
    label = re.compile(sys.argv[1])
    build_dir = os.path.realpath(sys.argv[2]) + os.sep
    # --exclude REGEX: drop tests with a matching label (CTest's -LE), as the preset does.
    excluded = re.compile(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--exclude" else None
    data = json.load(sys.stdin)
    targets = set()
    for test in data.get("tests", []):
        labels = []
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value", [])
        command = test.get("command") or []
        if excluded and any(excluded.search(name) for name in labels):
            continue
        in_tree = command and os.path.realpath(command[0]).startswith(build_dir)
        if in_tree and any(label.search(name) for name in labels or [""]):
            targets.add(os.path.basename(command[0]))
    print(" ".join(sorted(targets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
