#!/usr/bin/env python3
"""What keeping index.json current at every turn's end costs (SPEC §3: the
Python store reads index.json alone, so `commit-turn` folds the journal
into it before it exits).

Builds two state dirs, one with a single session and one with SESSIONS
sessions (one `batch` run each), then times one-shot `commit-turn`s of a
turn (two `append`s before each, not timed) on a session in each, medians,
and prints the ratio: the fold rewrites a file as large as the state dir's
session count, copying the rows the journal does not name.

Usage: bench/index_fold.py [--bin PATH] [--sessions 2000] [--turns 15] [--dir DIR]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def make(bin_, state, n):
    reqs = "".join(
        json.dumps({"argv": ["append", f"s{i}", "--create", "--text", f"hello {i} " + "x" * 60]}) + "\n"
        for i in range(n)
    )
    subprocess.run([bin_, "--state-dir", state, "batch"], input=reqs.encode(),
                   stdout=subprocess.DEVNULL, check=True)


def turns(bin_, state, n):
    times = []
    for k in range(n):
        for role, text in (("user", f"q{k}"), ("llm", f"a{k}")):
            subprocess.run([bin_, "--state-dir", state, "append", "s0", "--role", role, "--text", text],
                           stdout=subprocess.DEVNULL, check=True)
        t = time.perf_counter()
        subprocess.run([bin_, "--state-dir", state, "commit-turn", "s0"],
                       stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/git-session")
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--turns", type=int, default=15)
    ap.add_argument("--dir")
    a = ap.parse_args()
    root = a.dir or tempfile.mkdtemp(prefix="gs-index-fold-")
    one, many = os.path.join(root, "one"), os.path.join(root, "many")
    make(a.bin, one, 1)
    make(a.bin, many, a.sessions)
    t1 = turns(a.bin, one, a.turns)
    tn = turns(a.bin, many, a.turns)
    size = os.path.getsize(os.path.join(many, "sessions", "index.json"))
    print(f"commit-turn, 1 session:           {t1:6.1f} ms")
    print(f"commit-turn, {a.sessions} sessions ({size // 1024} KiB index.json): {tn:6.1f} ms   {tn / t1:.2f}x")


if __name__ == "__main__":
    main()
