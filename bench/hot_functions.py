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

The list is sampled, not traced: `perf record` runs the hooks' commands on
a fixture session many times, and every function of the binary with at
least one sample is kept. Order: the functions `append` runs, then those
`commit-turn` adds, then those of `list`, `log` and `show`. Symbol names carry hashes that change with the compiler and with
dependency versions: regenerate after either changes.

Usage: bench/hot_functions.py [--bin BINARY]
                              [--out link/hot-functions.txt] [--turns 150]
Needs `perf` (with permission to sample user code) and `nm`.
"""

import argparse
import bisect
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from commit_turn import make_fixture  # noqa: E402
from common import built, ENV  # noqa: E402


def symbols(binary):
    """(start, size, mangled name) of every function in `binary`, by address."""
    out = subprocess.run(["nm", "--defined-only", "-S", binary], check=True,
                         capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    syms.sort()
    return syms


def sample(binary, commands, tmp):
    """The binary's code addresses sampled while running `commands`."""
    script = os.path.join(tmp, "run.sh")
    with open(script, "w") as f:
        for argv in commands:
            f.write(shlex.join(argv) + " >/dev/null\n")
    data = os.path.join(tmp, "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", "49999", "-o", data, "--", "sh", script],
                   check=True, env=ENV, stdout=subprocess.DEVNULL)
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,dso"], check=True,
                         capture_output=True, text=True).stdout
    os.remove(data)
    real = os.path.realpath(binary)
    ips = set()
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[1].strip("() ") == real:
            ips.add(int(parts[0], 16))
    return ips


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--out", default="link/hot-functions.txt")
    ap.add_argument("--turns", type=int, default=150)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    syms = symbols(binary)
    starts = [s[0] for s in syms]

    def functions(ips):
        names = set()
        for ip in ips:
            i = bisect.bisect_right(starts, ip) - 1
            if i >= 0 and ip < syms[i][0] + max(syms[i][1], 1):
                names.add(syms[i][2])
        return names

    tmp = tempfile.mkdtemp(prefix="gs-hot-")
    try:
        state, sid, _, _, _, _ = make_fixture(binary, tmp, 300, random.Random(1))
        gs = [binary, "--state-dir", state]
        half = args.turns // 2
        appends, turns = [], []
        for k in range(args.turns):
            batch = []
            for role in ["user", "assistant", "tool"]:
                argv = gs + ["append", sid, "--role", role, "--text", f"{role} {k} " * 40]
                batch.append(argv + (["--name", "read"] if role == "tool" else []))
            # The first half only appends; the second half also commits,
            # and adds what commit-turn runs beyond append.
            if k < half:
                appends.extend(batch)
            else:
                turns.extend(batch + [gs + ["commit-turn", sid]])
        readers = [gs + ["list"], gs + ["list", "--json"], gs + ["log", sid],
                   gs + ["show", sid], gs + ["--json", "log", sid]]
        phases = [("append", appends), ("commit-turn", turns), ("readers", readers * 40)]
        order, seen = [], set()
        for name, commands in phases:
            names = functions(sample(binary, commands, tmp))
            # By name within a phase: every run of the phase touches them
            # all, and a sorted list changes little when regenerated.
            new = sorted(names - seen)
            new_set = set(new)
            seen.update(new)
            order.extend(new)
            size = sum(s[1] for s in syms if s[2] in new_set)
            print(f"{name}: {len(new)} functions, {size // 1024} KiB", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"wrote {len(order)} functions to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
