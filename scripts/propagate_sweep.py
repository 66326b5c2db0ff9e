#!/usr/bin/env python3
"""Rewrites hand-written error propagation in src/ into the core/propagate.hpp macros.

Purely mechanical and conservative: only the two shapes below are touched, and only when
the rewrite cannot change meaning (the statement starts its line, is not followed by an
`else`, the expression holds no `;` and no comment). Everything else is left as written.

  if (auto r = EXPR; !r) return fail(r.error());      ->  BABELQUEUE_TRY(EXPR);
      (also `failure{r.error()}` and `fail(std::move(r).error())`, and the return alone
      in braces)
  auto r = EXPR;                                       ->  BABELQUEUE_TRY_LET(r, EXPR);
  if (!r) return fail(r.error());                          (same spellings; same indent)

Files changed get `#include "core/propagate.hpp"`. Afterwards run
`git clang-format --force -- <files>` (done by --format) so wrapped lines meet the style.

Usage: scripts/propagate_sweep.py [--format] [--count] [root]   (root defaults to src/)
--count prints the remaining hand-written sites (`fail(x.error())` / `failure{x.error()}`).
"""
import pathlib
import re
import subprocess
import sys

RETURN = r"return (?:fail\((?P=n)\.error\(\)\)|failure\{(?P=n)\.error\(\)\}|fail\(std::move\((?P=n)\)\.error\(\)\));"
# The return alone, or alone in braces.
BODY = r"\s*(?P<brace>\{\s*)?" + RETURN + r"(?(brace)\s*\})"
SINGLE = re.compile(
    r"^(?P<indent>[ \t]*)if \(auto (?P<n>\w+) = (?P<expr>[^;]*?); !(?P=n)\)" + BODY, re.M)
PAIR = re.compile(
    r"^(?P<indent>[ \t]*)auto (?P<n>\w+) = (?P<expr>[^;]*?);\n(?P=indent)if \(!(?P=n)\)" + BODY,
    re.M)
ELSE_NEXT = re.compile(r"\s*else\b")
SITES = re.compile(r"fail\((?:std::move\()?\w+\)?\.error\(\)\)|failure\{\w+\.error\(\)\}")
INCLUDE = '#include "core/propagate.hpp"'


def safe(m, text):
    expr = m.group("expr")
    if "//" in expr or "/*" in expr or re.search(r"\b%s\b" % re.escape(m.group("n")), expr):
        return False
    return not ELSE_NEXT.match(text, m.end())


def rewrite(text):
    count = 0

    def to(macro):
        def sub(m):
            nonlocal count
            if not safe(m, text):
                return m.group(0)
            count += 1
            return f"{m.group('indent')}{macro(m)};"
        return sub

    text = SINGLE.sub(to(lambda m: f"BABELQUEUE_TRY({m.group('expr')})"), text)
    text = PAIR.sub(to(lambda m: f"BABELQUEUE_TRY_LET({m.group('n')}, {m.group('expr')})"), text)
    return text, count


def add_include(path, text):
    """The include goes among the quoted includes in sorted order, after the file's own
    header (which stays first); before the first <...> include when there is none."""
    if INCLUDE in text:
        return text
    lines = text.split("\n")
    quoted = [i for i, l in enumerate(lines) if l.startswith('#include "')]
    if not quoted:
        angle = next(i for i, l in enumerate(lines) if l.startswith("#include <"))
        lines[angle:angle] = [INCLUDE, ""]
        return "\n".join(lines)
    own = lines[quoted[0]].split('"')[1].rsplit("/", 1)[-1].rsplit(".", 1)[0] == path.stem
    others = quoted[1:] if own else quoted
    if not others:
        lines[quoted[0] + 1:quoted[0] + 1] = ["", INCLUDE]
        return "\n".join(lines)
    at = next((i for i in others if lines[i] > INCLUDE), others[-1] + 1)
    lines.insert(at, INCLUDE)
    return "\n".join(lines)


def main(argv):
    fmt = "--format" in argv
    only_count = "--count" in argv
    args = [a for a in argv if not a.startswith("--")]
    root = pathlib.Path(args[0] if args else "src")
    files = sorted(p for p in root.rglob("*") if p.suffix in (".cpp", ".hpp")
                   and p.as_posix() != "src/core/propagate.hpp")
    if only_count:
        print(sum(len(SITES.findall(p.read_text())) for p in files))
        return 0
    changed, total = [], 0
    for p in files:
        text = p.read_text()
        new, n = rewrite(text)
        if n:
            p.write_text(add_include(p, new))
            changed.append(str(p))
            total += n
    print(f"{total} sites rewritten in {len(changed)} files")
    if fmt and changed:
        subprocess.run(["git", "clang-format", "--force", "--"] + changed, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
