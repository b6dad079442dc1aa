#!/usr/bin/env python3
"""Backfill and verify throughput against the git CLI, in one run.

Builds SESSIONS sessions of TURNS turns each (user, assistant, tool nodes)
with no git repository, as an old state dir would hold them, then:
  backfill: `git-session backfill --all` (one process, parallel inside)
     vs git: per session `git init` + per turn (files of that turn +
             `git add -A` + `git commit`), on a sample of the sessions
  verify:   `git-session verify --all`
     vs git: per session `git fsck` + `git status --porcelain`, on the sample
Prints turns/s and sessions/s for both, their ratios, and the peak RSS of
the git-session processes.

Usage: bench/backfill_verify.py [--bin PATH] [--sessions 1000] [--turns 10] [--sample 40]
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from common import built, ENV, node, write_nodes


def turn_nodes(k, seq, pred, t0):
    u = node(seq, f"u{k}", "user", "", pred, f"question {k} " + "lorem ipsum " * 40, t0 + 10 * k)
    a = node(seq + 1, f"a{k}", "llm", "", f"u{k}", f"answer {k} " + "dolor sit " * 60, t0 + 10 * k + 3)
    c = node(seq + 2, f"t{k}", "code", f"a{k}", None, "tool output " * 30, t0 + 10 * k + 5)
    return [u, a, c]


def make_state(root, sessions, turns):
    sdir = os.path.join(root, "state", "sessions")
    os.makedirs(sdir)
    index = {}
    for i in range(sessions):
        sid = f"s{i:05d}"
        d = os.path.join(sdir, sid)
        hist = os.path.join(d, "history")
        os.makedirs(hist)
        t0 = 1796000000.0 + i
        meta = {"id": sid, "agent_id": "main", "title": f"session {i}", "source": "cli",
                "created_at": t0, "updated_at": t0 + 10 * turns, "project_id": "default"}
        nodes, pred = [], "ROOT"
        for k in range(turns):
            ts = turn_nodes(k, len(nodes) + 1, pred, t0)
            pred = ts[1]["id"]
            nodes.extend(ts)
        meta["head_id"] = pred
        write_nodes(hist, nodes)
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write(json.dumps(meta, separators=(",", ":")))
        index[sid] = {"id": sid, "status": "idle", "pinned": False, "archived": False, "unread": False,
                      "agent_id": "main", "title": meta["title"], "source": "cli",
                      "created_at": t0, "updated_at": meta["updated_at"], "channel": None,
                      "peer_display": None, "peer_id": None, "preview": f"question {turns - 1}"}
    with open(os.path.join(sdir, "index.json"), "w") as f:
        json.dump(index, f, indent=2)
    return os.path.join(root, "state")


def run_measured(argv):
    """Run one process; returns (seconds, exit code, its peak RSS in MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    p = subprocess.run(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr.decode())
    return dt, p.returncode, max(peak, before) / 1024


def git(args, cwd):
    subprocess.run(["git"] + args, cwd=cwd, env=ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def git_backfill_sample(root, turns, sample):
    """The git CLI doing backfill's work: init, then one add+commit per turn."""
    src = os.path.join(root, "state", "sessions")
    dst = os.path.join(root, "gitcopy")
    os.makedirs(dst)
    ids = sorted(s for s in os.listdir(src) if s.startswith("s0"))[:sample]
    t = time.perf_counter()
    for sid in ids:
        d = os.path.join(dst, sid)
        hist = os.path.join(d, "history")
        os.makedirs(hist)
        git(["init", "-q", "-b", "main"], d)
        git(["config", "gc.auto", "0"], d)
        git(["commit", "-q", "--allow-empty", "-m", "session init"], d)
        files = sorted(os.listdir(os.path.join(src, sid, "history")))
        for k in range(turns):
            for f in files[3 * k:3 * k + 3]:
                shutil.copyfile(os.path.join(src, sid, "history", f), os.path.join(hist, f))
            if k == turns - 1:
                shutil.copyfile(os.path.join(src, sid, "meta.json"), os.path.join(d, "meta.json"))
            git(["add", "-A"], d)
            git(["commit", "-q", "-m", f"turn {k + 1}"], d)
    return time.perf_counter() - t, [os.path.join(dst, s) for s in ids]


def git_verify_sample(repos):
    t = time.perf_counter()
    for d in repos:
        git(["fsck", "--strict", "--no-progress"], d)
        git(["status", "--porcelain"], d)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--sample", type=int, default=40, help="sessions the git CLI does (it is slow)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    with tempfile.TemporaryDirectory(prefix="gs-bench-bv-") as root:
        t = time.perf_counter()
        state = make_state(root, args.sessions, args.turns)
        print(f"built {args.sessions} sessions x {args.turns} turns in {time.perf_counter() - t:.1f}s", flush=True)
        total_turns = args.sessions * args.turns

        bf, rc, bf_rss = run_measured([binary, "--state-dir", state, "-q", "backfill", "--all"])
        assert rc == 0, f"backfill exit {rc}"
        vf, rc, vf_rss = run_measured([binary, "--state-dir", state, "-q", "verify", "--all"])
        assert rc == 0, f"verify found problems (exit {rc})"
        gbf, repos = git_backfill_sample(root, args.turns, args.sample)
        gvf = git_verify_sample(repos)

        gs_tps, git_tps = total_turns / bf, args.sample * args.turns / gbf
        gs_sps, git_sps = args.sessions / vf, args.sample / gvf
        print(f"backfill: git-session {gs_tps:8.0f} turns/s  ({bf:.2f}s for {total_turns} turns, peak RSS {bf_rss:.0f} MiB)")
        print(f"          git CLI     {git_tps:8.0f} turns/s  (sample of {args.sample} sessions)   ratio {gs_tps / git_tps:.1f}x")
        print(f"verify:   git-session {gs_sps:8.0f} sessions/s ({vf:.2f}s, peak RSS {vf_rss:.0f} MiB)")
        print(f"          git CLI     {git_sps:8.0f} sessions/s (fsck --strict + status, sample)   ratio {gs_sps / git_sps:.1f}x")


if __name__ == "__main__":
    sys.exit(main())
