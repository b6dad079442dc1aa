#!/usr/bin/env python3
"""A turn through one `git-session batch` process against the git CLI, in one run.

For each session size, alternates:
  (a) one long-lived `git-session batch`: `append` x3 (user, assistant, tool)
      + `commit-turn`, each request answered (read to its `exit` record)
      before the next is sent, as a harness waits on each;
  (b) writing the same 3 node files + `git add -A && git commit -q`
      (what OpenProgram's Python store runs per turn);
and prints medians and the ratio b/a. Then the rate of `append` through
batch against one-shot `append` processes, on the same session, in
alternating chunks once the background packing the turns started has
ended (run beside one side only, it would time that instead). Then the
CPU a turn costs when many are sent at once (`--cpu-turns`, at the first
size): in the batch process, and in the background packing it starts
(git, detached), from the machine's busy time in /proc/stat (Linux; keep
the machine otherwise idle). fsync is off on both sides (git makes none by
default).

Usage: bench/batch.py [--bin PATH] [--sizes 300,3000,15000] [--turns 25]
                      [--appends 300] [--cpu-turns 300] [--dir DIR]
"""

import argparse
import fcntl
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from common import built, create_floor_us, isolated_env, spawn
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


def settle(state, sid):
    """Wait for the session's background packing, if one is running, to end."""
    lock = os.path.join(state, "sessions", sid, ".git", "git-session", "maintenance.lock")
    if os.path.exists(lock):
        with open(lock, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)


def append_rates(binary, state, sid, n, rng, chunks=6):
    """Appends per second: through one batch process, and one process each,
    in alternating chunks once the session's background packing (started by
    the turns before) has ended, so that neither side runs beside it."""
    env = isolated_env(False)
    gs = [binary, "--state-dir", state]
    settle(state, sid)
    batch = Batch(gs, env)
    per = max(1, n // chunks)
    in_batch = one_shot = 0.0
    for c in range(chunks):
        t0 = time.perf_counter()
        for i in range(per):
            assert batch.ask(["append", sid, "--role", "tool", "--name", "read", "--text", f"b{c}-{i}"]) == 0
        in_batch += time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(per):
            _, rc = spawn(gs + ["append", sid, "--role", "tool", "--name", "read", "--text", f"o{c}-{i}"], env=env)
            assert rc == 0
        one_shot += time.perf_counter() - t0
    assert batch.close() == 0
    return per * chunks / in_batch, per * chunks / one_shot


def busy_seconds():
    """Busy CPU time of the whole machine (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return sum(int(fields[i]) for i in (1, 2, 3, 6, 7)) / os.sysconf("SC_CLK_TCK")


def turn_cpu(binary, root, size, turns, rng):
    """CPU per turn, `turns` turns piped into one batch process at once: the
    batch process's own (its rusage), and what else the machine was busy
    with until background packing ended (its `maintenance.lock` free)."""
    state, sid, sdir, _plain, n, pred = make_fixture(binary, os.path.join(root, "cpu"), size, rng)
    requests = []
    seq = n + 1
    for k in range(turns):
        ts = turn_nodes(rng, seq, 200000 + k, pred)
        seq += 3
        for nd, role in zip(ts, ["user", "assistant", "tool"]):
            argv = ["append", sid, "--role", role, "--id", nd["id"], "--text", nd["output"]]
            if role == "tool":
                argv += ["--name", "read"]
            requests.append(json.dumps({"argv": argv}))
        requests.append(json.dumps({"argv": ["commit-turn", sid]}))
        pred = ts[1]["id"]
    path = os.path.join(root, "cpu-requests.jsonl")
    with open(path, "w") as f:
        f.write("\n".join(requests) + "\n")
    os.sync()
    time.sleep(1)
    before = busy_seconds()
    with open(path) as stdin:
        p = subprocess.Popen([binary, "--state-dir", state, "batch"], stdin=stdin,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=isolated_env(False))
        _, status, usage = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "batch failed"
    lock = os.path.join(sdir, ".git", "git-session", "maintenance.lock")
    if os.path.exists(lock):
        with open(lock, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
    total = busy_seconds() - before
    own = usage.ru_utime + usage.ru_stime
    return own / turns, max(total - own, 0.0) / turns


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sizes", default="300,3000,15000")
    ap.add_argument("--turns", type=int, default=25)
    ap.add_argument("--appends", type=int, default=300)
    ap.add_argument("--cpu-turns", type=int, default=300,
                    help="turns of the CPU figure (0: skip it)")
    ap.add_argument("--dir", default=None, help="where to create the sessions [default: $TMPDIR]")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    rng = random.Random(42)
    print(f"one `git-session batch` process vs git CLI, fsync off on both; {args.turns} turns per size, medians")
    last = None
    with tempfile.TemporaryDirectory(prefix="gs-bench-", dir=args.dir) as root:
        print(f"creating a file here {create_floor_us(root):.0f}us")
        print(f"{'nodes':>7} {'batch turn':>11} {'git turn':>9} {'ratio':>7}")
        for size in [int(s) for s in args.sizes.split(",")]:
            state, sid, gt, git = bench_size(binary, root, size, args.turns, rng)
            last = (state, sid)
            print(f"{size:>7} {ms(gt):>9.2f}ms {ms(git):>7.2f}ms {ms(git) / ms(gt):>6.1f}x", flush=True)
        b, o = append_rates(binary, last[0], last[1], args.appends, rng)
        print(f"append: {b:.0f}/s through batch, {o:.0f}/s one process each: {b / o:.1f}x")
        if args.cpu_turns and os.path.exists("/proc/stat"):
            size = int(args.sizes.split(",")[0])
            own, rest = turn_cpu(binary, root, size, args.cpu_turns, rng)
            print(f"CPU per turn at {size} nodes, {args.cpu_turns} turns sent at once: "
                  f"{own * 1000:.2f} ms in batch, {rest * 1000:.2f} ms elsewhere "
                  f"(background packing, and anything else running)")
    print("ratio = git turn (write + git add -A + git commit) / batch turn (3 appends + commit-turn)")


if __name__ == "__main__":
    sys.exit(main())
