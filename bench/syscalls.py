#!/usr/bin/env python3
"""The flushes one `commit-turn` makes, counted by `strace -c -f`: with fsync
on (the default), a turn's git objects are made durable with one flush
(`sync_file_range` write-out of each, then one `fsync`), as git's
`core.fsyncMethod=batch` does; node files, meta.json, the registry, the
index and the refs keep their own rules (git-session-layout(5)).

For each size, a session of that many nodes (bench/commit_turn.py's
fixture), then 3 appended nodes committed under strace; prints the count of
each sync call, and the loose objects the turn wrote.

Usage: bench/syscalls.py [--bin PATH] [--sizes 300,3000] [--dir DIR]
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

from common import built, isolated_env
from commit_turn import make_fixture, turn_nodes

CALLS = ["fsync", "fdatasync", "sync_file_range", "syncfs", "sync"]


def count(binary, root, size, rng):
    state, sid, sdir, plain, n, pred = make_fixture(binary, root, size, rng)
    env = isolated_env(fsync=True)
    gs = [binary, "--state-dir", state]
    for nd, role in zip(turn_nodes(rng, n + 1, 900000, pred), ["user", "assistant", "tool"]):
        argv = gs + ["append", sid, "--role", role, "--id", nd["id"], "--text", nd["output"]]
        if role == "tool":
            argv += ["--name", "read"]
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    objects = os.path.join(sdir, ".git", "objects")
    loose = lambda: sum(len(fs) for d, _, fs in os.walk(objects) if re.fullmatch(r"[0-9a-f]{2}", os.path.basename(d)))
    before = loose()
    out = os.path.join(root, f"strace{size}.txt")
    subprocess.run(["strace", "-f", "-c", "-o", out, "-e", "trace=" + ",".join(CALLS)]
                   + gs + ["commit-turn", sid], env=env, check=True, stdout=subprocess.DEVNULL)
    calls = {c: 0 for c in CALLS}
    for line in open(out):
        parts = line.split()
        # % time, seconds, usecs/call, calls, [errors,] syscall
        if len(parts) >= 5 and parts[-1] in calls:
            calls[parts[-1]] = int(parts[3])
    return calls, loose() - before


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sizes", default="300,3000")
    ap.add_argument("--dir", default=None, help="where to create the sessions [default: $TMPDIR]")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    rng = random.Random(42)
    print(f"{'nodes':>7} {'objects':>8} " + " ".join(f"{c:>16}" for c in CALLS))
    with tempfile.TemporaryDirectory(prefix="gs-syscalls-", dir=args.dir) as root:
        for size in [int(s) for s in args.sizes.split(",")]:
            calls, objects = count(binary, root, size, rng)
            print(f"{size:>7} {objects:>8} " + " ".join(f"{calls[c]:>16}" for c in CALLS), flush=True)


if __name__ == "__main__":
    sys.exit(main())
