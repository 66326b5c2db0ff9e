#!/usr/bin/env python3
"""Prints the build targets whose executables run the CTest tests carrying a label that
matches a regular expression (CTest's own `-L` semantics: a search, not a full match).

    ctest --test-dir build/dev --show-only=json-v1 | python3 scripts/ctest-targets.py '^(runtime|sqlite|redis|rabbitmq)$' build/dev [--exclude REGEX] [--exclude-name REGEX]

Used by scripts/test.sh to build, in a sanitizer tree, only the test executables it runs
(babelqueue_add_test names the executable after its target). Tests whose command is not an
executable of the build tree (e.g. `cmake -P` scripts) are ignored. A test without labels
counts as having the empty label, so '.*' selects every test (the asan phase: all tests
minus --exclude). --exclude drops tests with a matching label (CTest's -LE), --exclude-name
tests whose name matches (-E), as the test presets' filters do; an empty REGEX drops nothing.
"""
import argparse
import json
import os
import re
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("build_dir")
    parser.add_argument("--exclude", default="")
    parser.add_argument("--exclude-name", default="")
    args = parser.parse_args()
    label = re.compile(args.label)
    build_dir = os.path.realpath(args.build_dir) + os.sep
    excluded = re.compile(args.exclude) if args.exclude else None
    excluded_name = re.compile(args.exclude_name) if args.exclude_name else None
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
        if excluded_name and excluded_name.search(test.get("name", "")):
            continue
        in_tree = command and os.path.realpath(command[0]).startswith(build_dir)
        if in_tree and any(label.search(name) for name in labels or [""]):
            targets.add(os.path.basename(command[0]))
    print(" ".join(sorted(targets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
