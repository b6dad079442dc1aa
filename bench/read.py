#!/usr/bin/env python3
"""The read layer against its yardsticks, in one run.

1. `git-session grep` over S sessions x N nodes against `rg` over the same
   `history/` files (rg searches the raw JSON; grep decodes each node, keeps
   to its text fields, and names session, node, seq, role and turn).
2. `git-session feed --cursor` after one session changed among M against
   `git-session nodes` on that one session: the feed must not open the
   other sessions (it reads their index rows and the cursor only).
3. `git-session nodes` over a whole session of T turns, each node with the
   commit that added it, against git finding the same commits (`git log
   --all --diff-filter=A --name-only -- history`): once for a session this
   tool committed (trailers name each commit's nodes) and once for one
   committed as the Python store does (`git add -A && git commit`, no
   trailers: by the trees alone).

Prints medians of R runs and the ratios.

Usage: bench/read.py [--bin PATH] [--sessions 2000] [--nodes 50]
                     [--feed-sessions 10000] [--turns 1000] [--runs 5] [--dir DIR]
                     [--only grep,feed,nodes]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import built, feed_batch, isolated_env, node, write_nodes

WORDS = ["agent", "tool", "read", "file", "the", "session", "commit", "turn",
         "git", "node", "build", "test", "error", "fix", "change", "line"]


def text(rng, n=600):
    return " ".join(rng.choice(WORDS) for _ in range(n // 5))


def make_state(binary, root, sessions, nodes, rng, needle_rate, env):
    """A state dir of `sessions` sessions of `nodes` nodes each: one made by
    the binary, the rest copies of its repository with their own files."""
    state = os.path.join(root, "state")
    subprocess.run([binary, "--state-dir", state, "init", "template", "-q"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    tdir = os.path.join(state, "sessions", "template")
    meta_t = json.load(open(os.path.join(tdir, "meta.json")))
    t0 = 1796017556.0
    for s in range(sessions):
        sid = f"s{s:05d}"
        sdir = os.path.join(state, "sessions", sid)
        shutil.copytree(os.path.join(tdir, ".git"), os.path.join(sdir, ".git"))
        hist = os.path.join(sdir, "history")
        os.makedirs(hist)
        ns, pred = [], "ROOT"
        for k in range(nodes // 3):
            seq = len(ns) + 1
            t = t0 + s * 100 + seq
            out = text(rng)
            if rng.random() < needle_rate:
                out += " zebra crossing"
            u = node(seq, f"u{k}", "user", "", pred, out, t)
            a = node(seq + 1, f"a{k}", "llm", "", f"u{k}", text(rng), t + 0.5)
            c = node(seq + 2, f"t{k}", "code", f"a{k}", None, text(rng), t + 0.7)
            ns += [u, a, c]
            pred = f"a{k}"
        write_nodes(hist, ns)
        meta = dict(meta_t, id=sid, head_id=pred, created_at=t0 + s * 100,
                    updated_at=t0 + s * 100 + len(ns))
        json.dump(meta, open(os.path.join(sdir, "meta.json"), "w"))
    shutil.rmtree(tdir)
    # The list registry, from the sessions' meta.json.
    subprocess.run([binary, "--state-dir", state, "recover", "-q"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return state


def median_run(argv, env, runs, ok=(0,)):
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        ts.append(time.perf_counter() - t)
        assert p.returncode in ok, f"{argv}: {p.returncode} {p.stderr[-500:]}"
    return statistics.median(ts)


def bench_grep(binary, root, args, rng, env):
    state = make_state(binary, os.path.join(root, "grep"), args.sessions, args.nodes, rng, 0.01, env)
    sessions = os.path.join(state, "sessions")
    # Both warm: the files are in the page cache for both.
    median_run(["rg", "-c", "zebra", sessions], env, 1, ok=(0, 1))
    ours = median_run([binary, "--state-dir", state, "grep", "zebra", "--json"], env, args.runs)
    rg = median_run(["rg", "--json", "zebra", sessions], env, args.runs)
    hits = subprocess.run([binary, "--state-dir", state, "grep", "zebra", "--json"], env=env,
                          capture_output=True, text=True).stdout.count("\n")
    rg_hits = subprocess.run(["rg", "-l", "zebra", sessions], capture_output=True,
                             text=True).stdout.count("\n")
    print(f"grep over {args.sessions} sessions x {args.nodes} nodes ({hits} hits; rg: {rg_hits} files):")
    print(f"  git-session grep {ours * 1e3:8.1f} ms   rg {rg * 1e3:8.1f} ms   ratio {ours / rg:.2f}x (target <= 3x)")


def bench_feed(binary, root, args, rng, env):
    state = make_state(binary, os.path.join(root, "feed"), args.feed_sessions, 3, rng, 0, env)
    cursor = os.path.join(root, "cursor.json")
    subprocess.run([binary, "--state-dir", state, "feed", "--cursor", cursor, "--json"], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sid = "s00042"
    feed_t, nodes_t = [], []
    for i in range(args.runs):
        subprocess.run([binary, "--state-dir", state, "append", sid, "--text", f"new {i}", "-q"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        seq = json.loads(subprocess.run([binary, "--state-dir", state, "--json", "nodes", sid], env=env,
                                        capture_output=True, text=True, check=True).stdout.splitlines()[-1])["data"]["seq"]
        nodes_t.append(median_run([binary, "--state-dir", state, "--json", "nodes", sid,
                                   "--after-seq", str(seq - 1)], env, 1))
        t = time.perf_counter()
        out = subprocess.run([binary, "--state-dir", state, "--json", "feed", "--cursor", cursor], env=env,
                             capture_output=True, text=True, check=True).stdout
        feed_t.append(time.perf_counter() - t)
        assert out.count("\n") == 1, out
    f, n = statistics.median(feed_t), statistics.median(nodes_t)
    print(f"feed after one session changed among {args.feed_sessions}:")
    print(f"  feed {f * 1e3:8.2f} ms   nodes on that session {n * 1e3:8.2f} ms   ratio {f / n:.2f}x (target <= 5x)")


def bench_nodes(binary, root, args, rng, env):
    state = os.path.join(root, "nodes")
    run = lambda argv: subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    # With trailers: the turns through one batch process.
    run([binary, "--state-dir", state, "init", "ours", "-q"])
    reqs = []
    for k in range(args.turns):
        reqs.append(["append", "ours", "--role", "user", "--text", text(rng, 200)])
        reqs.append(["append", "ours", "--role", "assistant", "--text", text(rng, 400)])
        reqs.append(["commit-turn", "ours", "-q"])
    feed_batch(binary, state, reqs, env)
    # Without: node files and one `git add -A && git commit` a turn.
    run([binary, "--state-dir", state, "init", "python", "-q"])
    sdir = os.path.join(state, "sessions", "python")
    hist = os.path.join(sdir, "history")
    os.makedirs(hist, exist_ok=True)
    pred = None
    for k in range(args.turns):
        t = 1796017556.0 + 2 * k
        u = node(2 * k + 1, f"u{k}", "user", None, pred, text(rng, 200), t)
        a = node(2 * k + 2, f"a{k}", "llm", f"u{k}", None, text(rng, 400), t + 1)
        a["predecessor"] = f"u{k}"
        write_nodes(hist, [u, a])
        pred = f"a{k}"
        run(["git", "-C", sdir, "add", "-A"])
        run(["git", "-C", sdir, "commit", "-q", "-m", f"turn: {k}"])
    # Packed as background maintenance leaves a session.
    for sid in ("ours", "python"):
        run(["git", "-C", os.path.join(state, "sessions", sid), "gc", "-q"])
    print(f"nodes over a whole session of {args.turns} turns ({2 * args.turns} nodes), each with its commit:")
    for sid, how in (("ours", "with trailers"), ("python", "no trailers")):
        argv = [binary, "--state-dir", state, "--json", "nodes", sid]
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
        recs = [json.loads(l)["data"] for l in out.splitlines()]
        assert len(recs) == 2 * args.turns and all(r["commit"] for r in recs), sid
        ours = median_run(argv, env, args.runs)
        git = median_run(["git", "-C", os.path.join(state, "sessions", sid), "log", "--all",
                          "--diff-filter=A", "--format=%H", "--name-only", "--", "history"], env, args.runs)
        print(f"  {how:13} git-session nodes {ours * 1e3:8.1f} ms   git log --diff-filter=A {git * 1e3:8.1f} ms"
              f"   ratio {ours / git:.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--feed-sessions", type=int, default=10000)
    ap.add_argument("--turns", type=int, default=1000, help="turns of the session `nodes` reads whole")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="grep,feed,nodes", help="which parts to run")
    ap.add_argument("--dir", default=None, help="where to build the state dirs [default: $TMPDIR]")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if "grep" in only and shutil.which("rg") is None:
        sys.exit("bench/read.py needs ripgrep (`rg`) on PATH: `cargo install ripgrep`")
    binary = os.path.abspath(args.bin or built())
    env = isolated_env(False)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="gs-read-", dir=args.dir) as root:
        for name, part in (("grep", bench_grep), ("feed", bench_feed), ("nodes", bench_nodes)):
            if name in only:
                part(binary, root, args, rng, env)


if __name__ == "__main__":
    sys.exit(main())
