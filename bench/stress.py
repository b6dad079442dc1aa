#!/usr/bin/env python3
"""Stress: many processes on a few sessions, random SIGKILLs, then recovery.

WORKERS threads each run git-session processes mixing append, commit-turn,
update, archive/unarchive, list and checkout over SESSIONS sessions; a
fraction of the processes is killed with SIGKILL at a random moment. Then
`recover` and `verify --all --fix` run, and the result is checked against
a model of what was acknowledged (exit 0):
  - every node whose `append` exited 0 exists exactly once, and parses
  - every commit `commit-turn` printed is reachable from a branch
  - every JSON file parses, `git fsck --strict` passes in every session,
    `verify --all` is clean
Bounded by --ops and --seconds; deterministic choices for a --seed.

Usage: bench/stress.py [--bin PATH] [--seed 1] [--workers 16] [--sessions 20]
                       [--ops 1500] [--seconds 120] [--kill-rate 0.08]
Exit status 0 when nothing was lost.
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

from common import built, isolated_env

ENV = isolated_env(fsync=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--ops", type=int, default=1500)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--kill-rate", type=float, default=0.08)
    ap.add_argument("--show-errors", action="store_true", help="print the stderr of unexpected failures")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    root = tempfile.mkdtemp(prefix="gs-stress-")
    state = os.path.join(root, "state")
    gs = [binary, "--state-dir", state, "--lock-timeout", "60"]
    sessions = [f"s{i:02d}" for i in range(args.sessions)]
    for s in sessions:
        subprocess.run(gs + ["-q", "init", s], env=ENV, check=True, stdout=subprocess.DEVNULL)

    lock = threading.Lock()
    counters = {"ops": 0, "killed": 0, "failed": 0}
    acked_nodes = []     # (session, id)
    acked_commits = []   # (session, commit)
    deadline = time.time() + args.seconds
    ids = iter(range(10**9))

    def run(rng, argv):
        """Run one process; maybe SIGKILL it. Returns (exit code or None, stdout)."""
        p = subprocess.Popen(gs + argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if rng.random() < args.kill_rate:
            time.sleep(rng.random() * 0.02)
            try:
                p.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            out = p.stdout.read().decode(errors="replace")
            with lock:
                counters["killed"] += 1
            return None, out
        out, err = p.communicate()
        code = p.returncode
        if code not in (0, 1) and args.show_errors:
            with lock:
                sys.stderr.write(f"--- {' '.join(argv[:2])} exit {code}: {err.decode(errors='replace')[-600:]}\n")
        return code, out.decode(errors="replace")

    def argv_op(op):
        return ("append" if op < 0.45 else "commit-turn" if op < 0.70 else "update" if op < 0.80
                else "archive" if op < 0.85 else "list" if op < 0.93 else "checkout")

    def worker(w):
        rng = random.Random(args.seed * 1000 + w)
        while True:
            with lock:
                if counters["ops"] >= args.ops or time.time() > deadline:
                    return
                counters["ops"] += 1
                n = next(ids)
            s = rng.choice(sessions)
            op = rng.random()
            if op < 0.45:
                role = rng.choice(["user", "assistant", "assistant", "tool"])
                nid = f"w{w}n{n}"
                argv = ["append", s, "--id", nid, "--role", role, "--text", f"message {n} " * rng.randint(1, 40)]
                if role == "tool":
                    argv += ["--name", rng.choice(["read", "grep", "edit"])]
                code, _ = run(rng, argv)
                if code == 0:
                    with lock:
                        acked_nodes.append((s, nid))
            elif op < 0.70:
                code, out = run(rng, ["commit-turn", s])
                if code == 0:
                    with lock:
                        acked_commits.extend((s, c) for c in out.split() if len(c) == 40)
            elif op < 0.80:
                code, _ = run(rng, ["update", s, "--title", f"title {n}"])
            elif op < 0.85:
                code, _ = run(rng, [rng.choice(["archive", "unarchive"]), s])
            elif op < 0.93:
                code, _ = run(rng, ["list"])
            else:
                code, _ = run(rng, ["checkout", s, rng.choice(["prev", "main", "1"])])
            if code not in (None, 0, 1):
                with lock:
                    counters["failed"] += 1
                    key = f"{argv_op(op)} exit {code}"
                    counters.setdefault("codes", {})
                    counters["codes"][key] = counters["codes"].get(key, 0) + 1

    t0 = time.time()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - t0

    subprocess.run(gs + ["-q", "recover", "--older-than", "1000d"], env=ENV, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(gs + ["-q", "verify", "--all", "--fix"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    verify = subprocess.run(gs + ["verify", "--all"], env=ENV, capture_output=True, text=True)

    lost, duplicated, corrupt, unreachable, fsck_bad = [], [], [], [], []
    dirs = {}
    for s in sessions:
        found = subprocess.run(gs + ["--json", "log", s, "-n", "1"], env=ENV, capture_output=True, text=True)
        d = os.path.join(state, "sessions", s)
        dirs[s] = d
    names = {s: os.listdir(os.path.join(dirs[s], "history")) if os.path.isdir(os.path.join(dirs[s], "history")) else [] for s in sessions}
    for s, nid in acked_nodes:
        hits = [f for f in names[s] if f.endswith(f"-{nid}.json")]
        if not hits:
            lost.append((s, nid))
        elif len(hits) > 1:
            duplicated.append((s, nid))
    for dirpath, _, files in os.walk(os.path.join(state, "sessions")):
        if "/.git" in dirpath or "/.gs-tmp" in dirpath:
            continue
        for f in files:
            if f.endswith(".json") and not f.startswith(".gs-tmp"):
                try:
                    json.load(open(os.path.join(dirpath, f)))
                except Exception:
                    corrupt.append(os.path.join(dirpath, f))
    for s in sessions:
        reachable = set(subprocess.run(["git", "-C", dirs[s], "rev-list", "--all"], env=ENV, capture_output=True, text=True).stdout.split())
        unreachable += [(s, c) for ss, c in acked_commits if ss == s and c not in reachable]
        fsck = subprocess.run(["git", "-C", dirs[s], "fsck", "--strict", "--no-progress"], env=ENV, capture_output=True)
        if fsck.returncode != 0:
            fsck_bad.append(s)

    print(f"seed {args.seed}: {counters['ops']} operations by {args.workers} workers on {args.sessions} sessions in {elapsed:.1f}s")
    print(f"  processes killed (SIGKILL):   {counters['killed']}")
    print(f"  unexpected exit codes:        {counters['failed']} {counters.get('codes', {})}")
    print(f"  acknowledged nodes:           {len(acked_nodes)}")
    print(f"  nodes lost:                   {len(lost)}")
    print(f"  nodes duplicated:             {len(duplicated)}")
    print(f"  corrupt files:                {len(corrupt)}")
    print(f"  acknowledged commits:         {len(acked_commits)}")
    print(f"  commits unreachable:          {len(unreachable)}")
    print(f"  sessions failing git fsck:    {len(fsck_bad)}")
    print(f"  verify --all after --fix:     {'clean' if verify.returncode == 0 else 'PROBLEMS'}")
    bad = lost or duplicated or corrupt or unreachable or fsck_bad or verify.returncode != 0
    checks = [not lost, not duplicated, not corrupt, not unreachable, not fsck_bad, verify.returncode == 0]
    print(f"stress: {sum(checks)} passed, {len(checks) - sum(checks)} failed")
    if bad:
        print(verify.stdout[:2000])
        print("state kept at", state)
        return 1
    subprocess.run(["rm", "-rf", root])
    return 0


if __name__ == "__main__":
    sys.exit(main())
