#!/usr/bin/env python3
"""`git-session push` of many sessions against a plain `git push` of the
same refs from one repository, and a push with nothing new against
`git ls-remote`, in one run.

Makes SESSIONS sessions of TURNS turns each (one `batch` process), then,
alternating, RUNS times each, medians:
  push:      `git-session push` into a fresh bare remote, from a cold
             transfer repository (sync/repo removed first: every object is
             copied, as on the first push from a machine)
  warm push: the same into another fresh remote, the transfer repository
             holding every object already (a push after the first copies
             only new turns)
  git push:  `git push` of the same refs (refs/sessions/*) from one bare
             repository holding the same objects, into a fresh bare remote
  no-op:     `git-session push` again, nothing new
  ls-remote: `git ls-remote` of the remote (every session ref)
and prints the ratios (targets: push within 2x git push, no-op within 3x
ls-remote). fsync is off on both sides.

Usage: bench/push.py [--bin PATH] [--sessions 1000] [--turns 3] [--runs 5] [--dir DIR]
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from common import ENV, built, create_floor_us, feed_batch, spawn


def make_sessions(binary, state, sessions, turns):
    def requests():
        for i in range(sessions):
            s = f"bench{i:05d}"
            for t in range(turns):
                create = ["--create"] if t == 0 else []
                yield ["append", s, *create, "--text", f"question {t} of session {i}"]
                yield ["append", s, "--role", "assistant", "--text", "an answer " * 20]
                yield ["append", s, "--role", "tool", "--name", "read", "--text", "fn main() {}\n" * 10]
                yield ["commit-turn", s]
    feed_batch(binary, state, requests())


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout


def set_aside(root, path):
    """Move `path` out of the way, deleted only at the end: deleting the
    thousands of files a push makes just before the next push is timed
    would time the file system instead (ext4 scans its inode tables for a
    while after many deletions: each file or directory created next costs
    more, on whichever side runs then)."""
    if os.path.exists(path):
        aside = os.path.join(root, "set-aside")
        os.makedirs(aside, exist_ok=True)
        os.rename(path, os.path.join(aside, str(len(os.listdir(aside)))))


def fresh_remote(root, name):
    path = os.path.join(root, name)
    set_aside(root, path)
    git("init", "-q", "--bare", path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", help="where to work (default: a temp dir; /dev/shm for tmpfs)")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin or built())
    root = tempfile.mkdtemp(prefix="gs-bench-push-", dir=a.dir)
    try:
        state = os.path.join(root, "state")
        t = time.perf_counter()
        make_sessions(binary, state, a.sessions, a.turns)
        print(f"{a.sessions} sessions of {a.turns} turns made in {time.perf_counter() - t:.1f} s")
        gs = [binary, "--state-dir", state]
        remote = fresh_remote(root, "remote.git")
        subprocess.run([*gs, "remote", "add", "origin", "file://" + remote], env=ENV, check=True,
                       stdout=subprocess.DEVNULL)
        # The plain repository: the same objects (the transfer repository's
        # packs after one push) and the same refs, as one repository has them.
        _, rc = spawn([*gs, "push"])
        assert rc == 0, "git-session push failed"
        plain = os.path.join(root, "plain.git")
        git("init", "-q", "--bare", plain)
        for f in glob.glob(os.path.join(state, "sync/repo/.git/objects/pack/*")):
            shutil.copy(f, os.path.join(plain, "objects/pack"))
        refs = git("for-each-ref", "--format=%(objectname) %(refname)", "refs/sessions", "refs/projects",
                   cwd=remote)
        subprocess.run(["git", "update-ref", "--stdin"], cwd=plain, env=ENV, check=True,
                       input="".join(f"create {r.split()[1]} {r.split()[0]}\n" for r in refs.splitlines()),
                       text=True)
        nrefs = len(refs.splitlines())
        print(f"{nrefs} refs; creating a file here {create_floor_us(root):.0f}us")
        ours, warm, theirs, noop, ls = [], [], [], [], []
        for _ in range(a.runs):
            remote = fresh_remote(root, "remote.git")
            set_aside(root, os.path.join(state, "sync/repo"))
            dt, rc = spawn([*gs, "push"])
            assert rc == 0, "git-session push failed"
            ours.append(dt)
            dt, rc = spawn([*gs, "push"])
            assert rc == 0
            noop.append(dt)
            second = fresh_remote(root, "second.git")
            subprocess.run([*gs, "remote", "add", "second", "file://" + second], env=ENV, check=True,
                           stdout=subprocess.DEVNULL)
            dt, rc = spawn([*gs, "push", "second"])
            assert rc == 0
            warm.append(dt)
            subprocess.run([*gs, "remote", "remove", "second"], env=ENV, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            dt, rc = spawn(["git", "-C", state, "ls-remote", "file://" + remote])
            assert rc == 0
            ls.append(dt)
            other = fresh_remote(root, "plain-remote.git")
            dt, rc = spawn(["git", "-C", plain, "push", "-q", "file://" + other,
                            "refs/sessions/*:refs/sessions/*", "refs/projects/*:refs/projects/*"])
            assert rc == 0, "git push failed"
            theirs.append(dt)
        med = lambda xs: statistics.median(xs) * 1000
        print(f"push {a.sessions} sessions:  git-session {med(ours):8.1f} ms   git push {med(theirs):8.1f} ms"
              f"   ratio {med(ours) / med(theirs):.2f}x (target <= 2x)")
        print(f"warm push:            git-session {med(warm):8.1f} ms   git push {med(theirs):8.1f} ms"
              f"   ratio {med(warm) / med(theirs):.2f}x")
        print(f"push, nothing new:    git-session {med(noop):8.1f} ms   ls-remote {med(ls):8.1f} ms"
              f"   ratio {med(noop) / med(ls):.2f}x (target <= 3x)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
