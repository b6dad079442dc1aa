#!/usr/bin/env python3
"""Per-turn cost of git-session against the git CLI, in one run.

For each session size (nodes already in the session), alternates:
  (a) `git-session append` x3 (user, assistant, tool) + `git-session commit-turn`
  (b) writing the same 3 node files + `git add -A && git commit -q`
      (what OpenProgram's Python store runs per turn)
and prints medians of whole-process wall times and the ratio b/a.

With --compare-writer index, after each size's turns the session's index
is written by the tool's index encoder and by gix's index writer, alternating,
40 times each (examples/index_writer.rs, built with `cargo build --release
--example index_writer`), and both medians are printed with their ratio: the
measured reason for that hand-written piece (src/git/index.rs), kept only
while gix's writer is 1.5x slower or more.

Usage: bench/commit_turn.py [--bin PATH] [--sizes 300,3000,15000] [--turns 25] [--fsync] [--dir DIR]
                            [--compare-writer index]
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

from common import built, create_floor_us, ENV, isolated_env, node, spawn, write_nodes


def run(argv, cwd=None, env=ENV):
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def text(rng, lo=1000, hi=4000):
    words = ["agent", "tool", "read", "file", "the", "session", "commit", "turn", "git", "node"]
    n = rng.randint(lo, hi)
    out = []
    size = 0
    while size < n:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n]


def turn_nodes(rng, first_seq, k, pred):
    t = 1796017556.0 + first_seq
    u = node(first_seq, f"u{k}", "user", "", pred, text(rng), t)
    a = node(first_seq + 1, f"a{k}", "llm", "", f"u{k}", text(rng), t + 1)
    c = node(first_seq + 2, f"t{k}", "code", f"a{k}", None, text(rng), t + 2)
    return [u, a, c]


def make_fixture(binary, root, size, rng):
    """A git-session session and a plain git repo holding the same `size` nodes."""
    state = os.path.join(root, "state")
    sid = f"s{size}"
    run([binary, "--state-dir", state, "init", sid, "-q"])
    sdir = os.path.join(state, "sessions", sid)
    hist = os.path.join(sdir, "history")
    os.makedirs(hist, exist_ok=True)
    nodes = []
    pred = "ROOT"
    for k in range(size // 3):
        ts = turn_nodes(rng, len(nodes) + 1, k, pred)
        pred = ts[1]["id"]
        nodes.extend(ts)
    write_nodes(hist, nodes)
    meta_path = os.path.join(sdir, "meta.json")
    meta = json.load(open(meta_path))
    meta["head_id"] = pred
    meta["title"] = "bench"
    json.dump(meta, open(meta_path, "w"), separators=(",", ":"))
    # One commit holding every node, with the trailers a backfill writes,
    # packed as background packing leaves a session. Its loose objects are
    # written to a scratch directory on tmpfs and packed from there: written
    # and deleted here, thousands of them would slow every file create on
    # this VM's ext4 for minutes (`recently_deleted`), on both sides.
    turns = size // 3
    scratch = tempfile.mkdtemp(dir="/dev/shm") if os.path.isdir("/dev/shm") else None
    objects = os.path.join(sdir, ".git", "objects")
    env = dict(ENV)
    if scratch:
        env.update(GIT_OBJECT_DIRECTORY=scratch, GIT_ALTERNATE_OBJECT_DIRECTORIES=objects)
    run(["git", "-C", sdir, "add", "-A"], env=env)
    run(["git", "-C", sdir, "-c", "gc.auto=0", "commit", "-q", "-m",
         f"turn {turns}: fixture\n\nSession: {sid}\nTurn: {turns}\nNodes: 1..{len(nodes)}"],
        env=env)
    if scratch:
        run(["git", "-C", sdir, "repack", "-a", "-d", "-q"],
            env=dict(ENV, GIT_ALTERNATE_OBJECT_DIRECTORIES=scratch))
        shutil.rmtree(scratch)
    head = subprocess.run(["git", "-C", sdir, "rev-parse", "HEAD"], env=ENV, check=True,
                          capture_output=True, text=True).stdout.strip()
    with open(os.path.join(sdir, ".git", "git-session", "snapshot"), "w") as f:
        f.write(head + "\n")
    # The plain repo: same files, default git config.
    plain = os.path.join(root, f"plain{size}")
    shutil.copytree(sdir, plain, ignore=shutil.ignore_patterns(".git"))
    run(["git", "init", "-q", "-b", "main", plain])
    # No auto-gc in the measured repo: a detached gc would slow both sides
    # at random (the Python store's users get one now and then, too).
    run(["git", "-C", plain, "config", "gc.auto", "0"])
    run(["git", "-C", plain, "add", "-A"])
    run(["git", "-C", plain, "commit", "-q", "-m", "fixture"])
    # Not packed: right after `git gc` deleted thousands of loose objects,
    # this VM's ext4 allocates inodes slowly for a minute (`recently_deleted`)
    # and would slow both sides at random.
    return state, sid, sdir, plain, len(nodes), pred


def git_turn(plain, sid, ts, k):
    """(b) the Python store's way: write the turn's files, `git add -A`,
    `git commit`; returns the seconds it took."""
    t0 = time.perf_counter()
    write_nodes(os.path.join(plain, "history"), ts)
    with open(os.path.join(plain, "meta.json"), "w") as f:
        f.write(json.dumps({"id": sid, "updated_at": time.time(), "head_id": ts[1]["id"]}))
    w = time.perf_counter() - t0
    a, rc1 = spawn(["git", "-C", plain, "add", "-A"])
    c, rc2 = spawn(["git", "-C", plain, "commit", "-q", "-m", f"turn: t{k}"])
    assert rc1 == 0 and rc2 == 0
    return w + a + c


def bench_size(binary, root, size, turns, rng, fsync):
    state, sid, sdir, plain, n, pred = make_fixture(binary, root, size, rng)
    # Write the fixture out first: its writeback would otherwise compete
    # with the measured turns on a disk.
    os.sync()
    env = isolated_env(fsync)
    gs = [binary, "--state-dir", state]
    appends, commits, gs_turns, git_turns = [], [], [], []
    seq = n + 1
    for k in range(turns):
        ts = turn_nodes(rng, seq, 100000 + k, pred)
        seq += 3
        # (a) git-session
        t_turn = 0.0
        for nd, role in zip(ts, ["user", "assistant", "tool"]):
            argv = gs + ["append", sid, "--role", role, "--id", nd["id"], "--text", nd["output"]]
            if role == "tool":
                argv += ["--name", "read"]
            dt, rc = spawn(argv, env=env)
            assert rc == 0, f"append failed ({rc})"
            appends.append(dt)
            t_turn += dt
        dt, rc = spawn(gs + ["commit-turn", sid], env=env)
        assert rc == 0, f"commit-turn failed ({rc})"
        commits.append(dt)
        gs_turns.append(t_turn + dt)
        git_turns.append(git_turn(plain, sid, ts, k))
        pred = ts[1]["id"]
    # Sanity: everything committed, status clean, history intact.
    st = subprocess.run(["git", "-C", sdir, "status", "--porcelain"], env=ENV,
                        capture_output=True, text=True, check=True).stdout
    assert st == "", f"git status not clean:\n{st[:500]}"
    count = int(subprocess.run(["git", "-C", sdir, "rev-list", "--count", "HEAD"], env=ENV,
                               capture_output=True, text=True, check=True).stdout)
    assert count == 2 + turns, count
    return appends, commits, gs_turns, git_turns, os.path.join(sdir, ".git", "index")


def compare_index_writers(index):
    """The index encoder and gix's index writer on `index`, in one run."""
    here = os.path.dirname(os.path.abspath(__file__))
    example = os.path.join(here, "..", "target", "release", "examples", "index_writer")
    subprocess.run(["cargo", "build", "-q", "--release", "--locked", "--example", "index_writer"],
                   cwd=os.path.join(here, ".."), check=True)
    out = subprocess.run([example, index, "40"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ms(xs):
    return statistics.median(xs) * 1000


def floors(binary, root, n=60):
    """What this machine charges before any work: starting a process, and
    creating a file where the benchmark runs (on some filesystems a create
    scans past recently deleted inodes, so it varies from minute to minute)."""
    true = [spawn(["true"])[0] for _ in range(n)]
    version = [spawn([binary, "--version"])[0] for _ in range(n)]
    return ms(true), ms(version), create_floor_us(root, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sizes", default="300,3000,15000")
    ap.add_argument("--turns", type=int, default=25)
    ap.add_argument("--fsync", action="store_true", help="git-session with fsync on (git CLI makes none by default)")
    ap.add_argument("--dir", default=None, help="where to create the sessions [default: $TMPDIR]")
    ap.add_argument("--compare-writer", choices=["index"],
                    help="time the index encoder against gix's index writer on each size's index")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    rng = random.Random(42)
    print(f"git-session {'with' if args.fsync else 'without'} fsync vs git CLI (no fsync, its default); "
          f"{args.turns} turns per size, medians of whole-process wall time")
    with tempfile.TemporaryDirectory(prefix="gs-bench-", dir=args.dir) as root:
        t, v, c = floors(binary, root)
        print(f"floors: a process (`true`) {t:.2f}ms, `git-session --version` {v:.2f}ms; "
              f"creating a file here {c:.0f}us")
        print(f"{'nodes':>7} {'append':>8} {'commit-turn':>12} {'gs turn':>9} {'git turn':>9} {'commit ratio':>13} {'turn ratio':>11}")
        for size in [int(s) for s in args.sizes.split(",")]:
            ap_, co, gt, git, index = bench_size(binary, root, size, args.turns, rng, args.fsync)
            # (b)'s git part against commit-turn alone, and whole turns against whole turns.
            extra = ""
            if args.compare_writer:
                c = compare_index_writers(index)
                extra = (f"   writing the index ({c['entries']} entries): {c['ours_ms']:.2f}ms ours, "
                         f"{c['gix_ms']:.2f}ms gix's ({c['gix_over_ours']:.1f}x)")
            print(f"{size:>7} {ms(ap_):>6.2f}ms {ms(co):>10.2f}ms {ms(gt):>7.2f}ms {ms(git):>7.2f}ms "
                  f"{ms(git) / ms(co):>12.1f}x {ms(git) / ms(gt):>10.1f}x{extra}", flush=True)
    print("commit ratio = git turn / commit-turn; turn ratio = git turn / (3 appends + commit-turn)")


if __name__ == "__main__":
    sys.exit(main())
