#!/usr/bin/env python3
"""`git-session clone` of many sessions bound to one project, in one run.

Makes SESSIONS sessions of one turn, each bound to one project, through one
`batch` process; pushes them to a bare repository; then clones that into a
fresh state dir RUNS times and prints the median, per session too (a
clone's cost should follow the sessions it brings in: each session's
registry entries once, not the whole registry once per session).

Usage: bench/clone.py [--bin PATH] [--sessions 1000] [--runs 3] [--dir DIR]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile

from common import ENV, built, feed_batch, spawn


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", help="where to work (default: a temp dir; /dev/shm for tmpfs)")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin or built())
    root = tempfile.mkdtemp(prefix="gs-bench-clone-", dir=a.dir)
    try:
        state = os.path.join(root, "A")
        proj = os.path.join(root, "proj")
        os.makedirs(proj)
        subprocess.run(["git", "init", "-q", proj], check=True, env=ENV)
        pid = subprocess.run([binary, "--state-dir", state, "project", "add", proj], env=ENV,
                             check=True, capture_output=True, text=True).stdout.strip()
        def requests():
            for i in range(a.sessions):
                s = f"s{i:05d}"
                yield ["init", s, "-q", "--project", pid]
                yield ["append", s, "--text", "question"]
                yield ["append", s, "--role", "assistant", "--text", "answer"]
                yield ["commit-turn", s]
        feed_batch(binary, state, requests())
        remote = os.path.join(root, "remote.git")
        subprocess.run(["git", "init", "-q", "--bare", remote], check=True, env=ENV)
        subprocess.run([binary, "--state-dir", state, "remote", "add", "origin", remote], check=True,
                       env=ENV, stdout=subprocess.DEVNULL)
        _, rc = spawn([binary, "--state-dir", state, "push"])
        assert rc == 0, "push failed"
        times = []
        for r in range(a.runs):
            b = os.path.join(root, f"B{r}")
            dt, rc = spawn([binary, "clone", remote, "--state-dir", b])
            assert rc == 0, "clone failed"
            times.append(dt)
        t = statistics.median(times)
        print(f"clone of {a.sessions} bound sessions: {t * 1000:.0f} ms, "
              f"{t * 1e6 / a.sessions:.0f} us a session (median of {a.runs})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
