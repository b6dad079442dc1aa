#!/usr/bin/env python3
"""Files and functions over issue 52's limits, counting the lines before a
file's `#[cfg(test)]` module: files over 800 lines, functions over 150 (from
the `fn` line to its closing brace, found by indentation).

Usage: scripts/sizes.py [--files N] [--fns N] [PATH...]   (default: src/; a directory or a file)
Exits 1 when anything is over.
"""

import argparse
import os
import re
import sys

FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")


def before_tests(lines):
    for i, line in enumerate(lines):
        if line.strip() == "#[cfg(test)]":
            return lines[:i]
    return lines


def functions(lines):
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        indent = m.group(1)
        for j in range(i + 1, len(lines)):
            if lines[j].startswith(indent + "}") and len(lines[j]) - len(lines[j].lstrip()) == len(indent):
                yield m.group(2), i + 1, j - i + 1
                break


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=800)
    ap.add_argument("--fns", type=int, default=150)
    ap.add_argument("paths", nargs="*", default=["src"])
    args = ap.parse_args()
    over = 0
    files = []
    for p in args.paths:
        if os.path.isfile(p):
            files.append(p)
        for root, _, names in sorted(os.walk(p)):
            files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".rs"))
    for path in files:
        if True:
            lines = before_tests(open(path, encoding="utf-8").read().split("\n"))
            if len(lines) > args.files:
                print(f"{path}: {len(lines)} lines")
                over += 1
            for fn, at, n in functions(lines):
                if n > args.fns:
                    print(f"{path}:{at}: fn {fn}: {n} lines")
                    over += 1
    print(f"{over} over the limits ({args.files} lines a file, {args.fns} a function)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
