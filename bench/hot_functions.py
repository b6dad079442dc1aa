#!/usr/bin/env python3
"""Regenerate link/hot-functions.txt: the functions hooks run, in the order
the linker should place them.

Hooks start git-session on every message, and on a virtual machine each
page fault costs microseconds. A process faults in the binary's code 64 KiB
at a time; left to the linker, the code one `append` runs is spread over
most of the binary's 5 MB, so the process takes one fault per 64 KiB window
it touches (about 60). Listed first and together, it takes about 20 fewer.
build.rs hands the list to the linker (`--symbol-ordering-file`, LLD) when
the linker accepts it; names that no longer exist are skipped, so a stale
list costs speed, never correctness.

The list is traced, not sampled: valgrind's callgrind runs the hooks'
commands on a fixture session and names every function of the binary that
ran, however briefly (sampling missed the small ones, each another fault).
Order: the functions `append` runs, then those `commit-turn` adds, then
those of `list`, `log` and `show`; by name within each. Symbol names carry
hashes that change with the compiler and with dependency versions:
regenerate after either changes.

Usage: bench/hot_functions.py [--bin BINARY]
                              [--out link/hot-functions.txt] [--turns 12]
Needs `valgrind` and `nm`.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from commit_turn import make_fixture  # noqa: E402
from common import built, ENV  # noqa: E402


def function_sizes(binary):
    """Size of every function in `binary`, by mangled name (the largest, for
    a name defined more than once)."""
    out = subprocess.run(["nm", "--defined-only", "-S", binary], check=True,
                         capture_output=True, text=True).stdout
    size = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            size[parts[3]] = max(size.get(parts[3], 0), int(parts[1], 16))
    return size


def executed(commands, tmp):
    """The names of the functions that ran while running `commands`, each
    under callgrind (a few seconds apiece)."""
    names = set()
    out = os.path.join(tmp, "callgrind.out")
    for argv in commands:
        subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
                        f"--callgrind-out-file={out}", *argv],
                       check=True, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            for line in f:
                if line.startswith(("fn=", "cfn=")):
                    names.add(line.split("=", 1)[1].strip())
        os.remove(out)
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--out", default="link/hot-functions.txt")
    ap.add_argument("--turns", type=int, default=12,
                    help="turns traced; every 10th starts background packing")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    size = function_sizes(binary)

    tmp = tempfile.mkdtemp(prefix="gs-hot-")
    try:
        state, sid, _, _, _, _ = make_fixture(binary, tmp, 300, random.Random(1))
        gs = [binary, "--state-dir", state]
        appends, turns = [], []
        for k in range(args.turns):
            for role in ["user", "assistant", "tool"]:
                argv = gs + ["append", sid, "--role", role, "--text", f"{role} {k} " * 40]
                (appends if k == 0 else turns).append(
                    argv + (["--name", "read"] if role == "tool" else []))
            turns.append(gs + ["commit-turn", sid])
        readers = [gs + ["list"], gs + ["list", "--json"], gs + ["log", sid],
                   gs + ["show", sid], gs + ["--json", "log", sid]]
        # The first turn's appends, then the rest of the turns: what
        # commit-turn adds to what append runs.
        phases = [("append", appends), ("commit-turn", turns), ("readers", readers)]
        order, seen = [], set()
        for name, commands in phases:
            names = {n for n in executed(commands, tmp) if n in size}
            # By name within a phase: a sorted list changes little when
            # regenerated.
            new = sorted(names - seen)
            seen.update(new)
            order.extend(new)
            kib = sum(size[n] for n in new) // 1024
            print(f"{name}: {len(new)} functions, {kib} KiB", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"wrote {len(order)} functions to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
