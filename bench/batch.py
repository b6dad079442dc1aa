#!/usr/bin/env python3
"""A turn through one `git-session batch` process against the git CLI, in one run.

For each session size, alternates:
  (a) one long-lived `git-session batch`: `append` x3 (user, assistant, tool)
      + `commit-turn`, each request answered (read to its `exit` record)
      before the next is sent, as a harness waits on each;
  (b) writing the same 3 node files + `git add -A && git commit -q`
      (what OpenProgram's Python store runs per turn);
and prints medians and the ratio b/a. Then the rate of `append` through
batch against one-shot `append` processes, on the same session.
fsync is off on both sides (git makes none by default).

Usage: bench/batch.py [--bin PATH] [--sizes 300,3000,15000] [--turns 25] [--dir DIR]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from common import built, isolated_env, spawn
from commit_turn import git_turn, make_fixture, ms, turn_nodes


class Batch:
    """One `git-session batch` process: send a request, read its answer."""

    def __init__(self, gs, env):
        self.p = subprocess.Popen(gs + ["batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)

    def ask(self, argv):
        self.p.stdin.write(json.dumps({"argv": argv}) + "\n")
        self.p.stdin.flush()
        while True:
            rec = json.loads(self.p.stdout.readline())
            if rec["type"] == "exit":
                return rec["data"]["code"]

    def close(self):
        self.p.stdin.close()
        return self.p.wait()


def bench_size(binary, root, size, turns, rng):
    state, sid, sdir, plain, n, pred = make_fixture(binary, root, size, rng)
    os.sync()
    env = isolated_env(False)
    gs = [binary, "--state-dir", state]
    batch = Batch(gs, env)
    gs_turns, git_turns = [], []
    seq = n + 1
    for k in range(turns):
        ts = turn_nodes(rng, seq, 100000 + k, pred)
        seq += 3
        t0 = time.perf_counter()
        for nd, role in zip(ts, ["user", "assistant", "tool"]):
            argv = ["append", sid, "--role", role, "--id", nd["id"], "--text", nd["output"]]
            if role == "tool":
                argv += ["--name", "read"]
            assert batch.ask(argv) == 0, "append failed"
        assert batch.ask(["commit-turn", sid]) == 0, "commit-turn failed"
        gs_turns.append(time.perf_counter() - t0)
        git_turns.append(git_turn(plain, sid, ts, k))
        pred = ts[1]["id"]
    assert batch.close() == 0
    st = subprocess.run(["git", "-C", sdir, "status", "--porcelain"], env=env,
                        capture_output=True, text=True, check=True).stdout
    assert st == "", f"git status not clean:\n{st[:500]}"
    return state, sid, gs_turns, git_turns


def append_rates(binary, state, sid, n, rng):
    """Appends per second: through one batch process, and one process each."""
    env = isolated_env(False)
    gs = [binary, "--state-dir", state]
    batch = Batch(gs, env)
    t0 = time.perf_counter()
    for i in range(n):
        assert batch.ask(["append", sid, "--role", "tool", "--name", "read", "--text", f"b{i}"]) == 0
    batch_rate = n / (time.perf_counter() - t0)
    assert batch.close() == 0
    t0 = time.perf_counter()
    for i in range(n):
        _, rc = spawn(gs + ["append", sid, "--role", "tool", "--name", "read", "--text", f"o{i}"], env=env)
        assert rc == 0
    oneshot_rate = n / (time.perf_counter() - t0)
    return batch_rate, oneshot_rate


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sizes", default="300,3000,15000")
    ap.add_argument("--turns", type=int, default=25)
    ap.add_argument("--appends", type=int, default=300)
    ap.add_argument("--dir", default=None, help="where to create the sessions [default: $TMPDIR]")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    rng = random.Random(42)
    print(f"one `git-session batch` process vs git CLI, fsync off on both; {args.turns} turns per size, medians")
    print(f"{'nodes':>7} {'batch turn':>11} {'git turn':>9} {'ratio':>7}")
    last = None
    with tempfile.TemporaryDirectory(prefix="gs-bench-", dir=args.dir) as root:
        for size in [int(s) for s in args.sizes.split(",")]:
            state, sid, gt, git = bench_size(binary, root, size, args.turns, rng)
            last = (state, sid)
            print(f"{size:>7} {ms(gt):>9.2f}ms {ms(git):>7.2f}ms {ms(git) / ms(gt):>6.1f}x", flush=True)
        b, o = append_rates(binary, last[0], last[1], args.appends, rng)
        print(f"append: {b:.0f}/s through batch, {o:.0f}/s one process each: {b / o:.1f}x")
    print("ratio = git turn (write + git add -A + git commit) / batch turn (3 appends + commit-turn)")


if __name__ == "__main__":
    sys.exit(main())
