#!/usr/bin/env python3
"""What the secrets scanner costs a turn, in one run.

For each session size, turns of 3 nodes (user, assistant, tool: 1-4 KB of
code-like text each, with the words the rules wake on: key, token, secret,
password, api, auth) are appended and committed, and measured:

  - `commit-turn`, whole process, and within it the scan of the turn's
    nodes (the `GIT_SESSION_TRACE` phases "commit-turn: committed" to
    "commit-turn: secrets scanned");
  - the turn itself: its three `append`s and its `commit-turn`;
  - `append` with the state dir's `redact = on-write` (every other turn)
    against `append` without.

The scan must not double a turn's cost (issue 54), and its cost follows
the turn, not the session: compare the sizes.

Usage: bench/secrets.py [--bin PATH] [--sizes 300,3000] [--turns 20]
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile

from common import built, isolated_env, spawn
from commit_turn import make_fixture, phase_seconds

WORDS = ["fn", "let", "token", "key", "self", "return", "api", "auth", "secret", "password",
         "config", "value", "=", "\"x\"", "session", "if", "else", "{", "}", "read", "file"]


def text(rng, lo=1000, hi=4000):
    n = rng.randint(lo, hi)
    out, size = [], 0
    while size < n:
        w = rng.choice(WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n]


def ms(xs):
    return statistics.median(xs) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=built())
    ap.add_argument("--sizes", default="300,3000")
    ap.add_argument("--turns", type=int, default=20)
    a = ap.parse_args()
    rng = random.Random(54)
    env = dict(isolated_env(), GIT_SESSION_TRACE="1")
    print(f"{'nodes':>6} {'turn ms':>8} {'commit ms':>10} {'scan ms':>8} {'scan/turn':>10} "
          f"{'append ms':>10} {'on-write ms':>12}")
    for size in [int(s) for s in a.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as root:
            state, sid, sdir, _plain, _n, _pred = make_fixture(a.bin, root, size, rng)
            settings = os.path.join(state, "git-session.json")
            trace = os.path.join(root, "trace.txt")
            gs = [a.bin, "--state-dir", state]
            turns, commits, scans, appends, on_write = [], [], [], [], []
            for k in range(a.turns):
                redact = k % 2 == 1
                with open(settings, "w") as f:
                    json.dump({"redact": "on-write"} if redact else {}, f)
                t_turn = 0.0
                for role in ["user", "assistant", "tool"]:
                    argv = gs + ["append", sid, "--role", role, "--text", text(rng)]
                    if role == "tool":
                        argv += ["--name", "read"]
                    dt, rc = spawn(argv, env=env)
                    assert rc == 0, "append failed"
                    (on_write if redact else appends).append(dt)
                    t_turn += dt
                dt, rc = spawn(gs + ["commit-turn", sid], env=env, stderr=trace)
                assert rc == 0, "commit-turn failed"
                commits.append(dt)
                scans.append(phase_seconds(trace, "commit-turn: committed",
                                           "commit-turn: secrets scanned"))
                turns.append(t_turn + dt)
            print(f"{size:>6} {ms(turns):>8.2f} {ms(commits):>10.2f} {ms(scans):>8.3f} "
                  f"{ms(scans) / ms(turns):>10.3f} {ms(appends):>10.2f} {ms(on_write):>12.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
