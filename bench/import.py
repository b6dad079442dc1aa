#!/usr/bin/env python3
"""Importing a Claude Code transcript against reading it, and a hook call
on a big transcript against a one-shot append, in one run.

Builds transcripts in the shapes of ../shared/reference/agent-transcripts.md
(a typed message, a reply of several records with a tool call, progress,
the tool result, a final reply, a turn_duration record: 8 records a turn),
then measures, medians:
  floor:  `python3 -c` reading a RECORDS-record file and json.loads-ing every line
  import: `git-session import claude-code FILE` of it into a fresh state dir
  hook:   `git-session hook claude-code` (a Stop event on stdin) after a
          transcript of about HOOK_MB megabytes, imported before, grew by one turn
  append: one-shot `git-session append` to a second session of the same size
          (the same transcript under another id; the reference for a hook call).
          Not to the hook's own session: a node appended there becomes its
          head, and every later hook call would fork a retry branch from it,
          which is not a transcript that grew by one turn.
  by hand: the same turn through one-shot commands (four `append`s and a
          `commit-turn`) to a third session of the same size: what the hook
          replaces.
and prints the ratios (targets: import within 10x the floor, hook within 3x append).

A hook creates about twenty files (its nodes, the turn's objects, the
index), an append two. On ext4 without a journal (this project's CI VM) a
new inode skips every inode freed in the last 60 s, or 360 s while their
inode table is not written back (the kernel's RECENTCY_MIN + RECENTCY_DIRTY,
fs/ext4/ialloc.c): for six minutes after thousands of files were removed
(the last run's own cleanup, a test suite's) a create costs ten to thirty
times its usual, and the hook's ratio measures that removal, not the tool.
So a run that finds a create dearer than SETTLE_US waits those 360 s out
before it measures the hooks (`--no-settle`: measure at once), and prints
what a create cost at the start, right before the hooks and at the end.

Usage: bench/import.py [--bin PATH] [--records 2000] [--hook-mb 3] [--runs 5] [--dir DIR] [--no-settle]
"""

import argparse
import fcntl
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import built, create_floor_us, isolated_env, spawn

SID = "11111111-2222-3333-4444-555555555555"
# The session the reference appends go to.
OTHER_SID = "99999999-2222-3333-4444-555555555555"
# The session the same turn goes to through one-shot commands.
BY_HAND_SID = "88888888-2222-3333-4444-555555555555"
# A turn of the transcript as an agent harness records it one command at a
# time: its four nodes, then its commit.
BY_HAND = (["append", "{s}", "--text", "question"],
           ["append", "{s}", "--role", "assistant", "--text", "Let me read the file first."],
           ["append", "{s}", "--role", "tool", "--name", "Read", "--input", "{{}}", "--text", "fn main() {{}}"],
           ["append", "{s}", "--role", "assistant", "--text", "Fixed."],
           ["commit-turn", "{s}"])


# A create dearer than this: the disk is still in the six minutes after a
# mass removal (see above). Its usual here is 15-50us; 60-1300us in those
# minutes.
SETTLE_US = 60
# RECENTCY_MIN + RECENTCY_DIRTY, and a margin.
SETTLE_S = 370


def transcript(turns, start_turn=0):
    out = []
    prev = f"s{start_turn - 1}" if start_turn else None
    t = 1_793_527_200
    for k in range(start_turn, start_turn + turns):
        def rec(kind, uuid, parent, **kw):
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t + k * 10 + len(out) % 8)) + ".000Z"
            d = {"type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": ts,
                 "sessionId": SID, "cwd": "/home/me/proj", "version": "2.0.1", "isSidechain": False}
            d.update(kw)
            out.append(d)
        text = f"question {k}: " + "please look at the file and fix it " * 4
        rec("user", f"u{k}", prev, message={"role": "user", "content": text})
        model = {"model": "claude-sonnet-4", "usage": {"input_tokens": 1000 + k, "output_tokens": 50}}
        rec("assistant", f"a{k}a", f"u{k}", message={"id": f"msg_{k}a", "role": "assistant", **model,
            "content": [{"type": "thinking", "thinking": "thinking " * 20, "signature": "sig"}]})
        rec("assistant", f"a{k}b", f"a{k}a", message={"id": f"msg_{k}a", "role": "assistant", **model,
            "content": [{"type": "text", "text": "Let me read the file first."}]})
        rec("assistant", f"a{k}c", f"a{k}b", message={"id": f"msg_{k}a", "role": "assistant", **model,
            "content": [{"type": "tool_use", "id": f"toolu_{k}", "name": "Read", "input": {"file_path": f"src/f{k}.rs"}}]})
        rec("progress", f"p{k}", f"a{k}c", data={"type": "hook_progress"}, toolUseID=f"toolu_{k}")
        rec("user", f"r{k}", f"a{k}c", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": "fn main() {}\n" * 40}]})
        rec("assistant", f"a{k}d", f"r{k}", message={"id": f"msg_{k}b", "role": "assistant", **model,
            "content": [{"type": "text", "text": "Fixed: " + "the change is small. " * 10}]})
        rec("system", f"s{k}", f"a{k}d", subtype="turn_duration", durationMs=4000)
        prev = f"s{k}"
    return out


def write(path, records):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def median_ms(xs):
    return statistics.median(xs) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--hook-mb", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--no-settle", action="store_true",
                    help=f"measure at once, even when a create costs over {SETTLE_US}us")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    turns = max(1, args.records // 8)
    with tempfile.TemporaryDirectory(prefix="gs-import-", dir=args.dir) as root:
        create = create_floor_us(root)
        path = os.path.join(root, f"{SID}.jsonl")
        records = transcript(turns)
        write(path, records)
        size = os.path.getsize(path)
        floor = [spawn([sys.executable, "-c",
                        "import json,sys\n[json.loads(l) for l in open(sys.argv[1])]", path])[0]
                 for _ in range(args.runs)]
        # The hook: a big transcript imported once, then each run it grows
        # by one turn and the Stop hook records it.
        big_turns = max(1, int(args.hook_mb * 1e6 / (size / turns)))
        big = transcript(big_turns)
        big_path = os.path.join(root, "big", f"{SID}.jsonl")
        os.makedirs(os.path.dirname(big_path))
        write(big_path, big)
        big_size = os.path.getsize(big_path)
        copies = []
        for sid in (OTHER_SID, BY_HAND_SID):
            copies.append(os.path.join(root, sid, f"{sid}.jsonl"))
            os.makedirs(os.path.dirname(copies[-1]))
            write(copies[-1], [dict(r, sessionId=sid) for r in big])
        state = os.path.join(root, "state-hook")
        for p in [big_path] + copies:
            dt, rc = spawn([binary, "--state-dir", state, "import", "claude-code", p])
            assert rc == 0, f"import of {p} failed"
        settle(state)
        event = os.path.join(root, "event.json")
        with open(event, "w") as f:
            json.dump({"session_id": SID, "transcript_path": big_path, "cwd": "/home/me/proj",
                       "hook_event_name": "Stop", "stop_hook_active": False}, f)
        # What a create costs, again, right before the hooks (and at the
        # end): a fresh directory can land where few inodes were freed, so
        # the figure at the start alone may miss a removal's aftermath.
        create_hooks = create_floor_us(root)
        settled = ""
        if max(create, create_hooks) > SETTLE_US and not args.no_settle:
            print(f"creating a file here costs {max(create, create_hooks):.0f}us, over {SETTLE_US}us: "
                  f"files were removed in the last minutes; waiting {SETTLE_S}s for them to age out "
                  f"(--no-settle: don't)", file=sys.stderr, flush=True)
            time.sleep(SETTLE_S)
            settled = f" (then {SETTLE_S}s waited: {create_floor_us(root):.0f}us)"
        hooks, appends, by_hand = [], [], []
        for i in range(args.runs):
            with open(big_path, "a") as f:
                for r in transcript(1, big_turns + i):
                    f.write(json.dumps(r) + "\n")
            dt, rc = spawn([binary, "--state-dir", state, "hook", "claude-code"], stdin=event)
            assert rc == 0, "hook failed"
            hooks.append(dt)
            settle(state)
            dt, rc = spawn([binary, "--state-dir", state, "append", f"claude-{OTHER_SID}", "--text", "x"])
            assert rc == 0, "append failed"
            appends.append(dt)
            t = 0.0
            for argv in BY_HAND:
                dt, rc = spawn([binary, "--state-dir", state] + [a.format(s=f"claude-{BY_HAND_SID}") for a in argv])
                assert rc == 0, f"{argv[0]} failed"
                t += dt
            by_hand.append(t)
            settle(state)
        # The imports after the hook, and their state dirs removed only at
        # the end: on a disk whose file creates slow down for minutes after
        # many files were deleted (this VM's ext4), removing them between
        # runs would time that instead of the tool.
        imports = []
        for i in range(args.runs):
            state_i = os.path.join(root, f"state{i}")
            dt, rc = spawn([binary, "--state-dir", state_i, "import", "claude-code", path])
            assert rc == 0, "import failed"
            imports.append(dt)
            settle(state_i)
        # Every hook call added a turn to the one chain: no retry branch.
        branches = subprocess.run(["git", "-C", os.path.join(state, "sessions", f"claude-{SID}"),
                                   "for-each-ref", "--format=%(refname)", "refs/heads"],
                                  env=isolated_env(), capture_output=True, text=True, check=True).stdout.split()
        assert branches == ["refs/heads/main"], f"the hook's session forked: {branches}"
        log = os.path.join(state, "git-session-hooks.log")
        assert not os.path.exists(log), open(log).read()
        f, im, hk, apd, bh = (median_ms(x) for x in (floor, imports, hooks, appends, by_hand))
        print(f"transcript: {len(records)} records, {turns} turns, {size / 1e6:.1f} MB; medians of {args.runs}; "
              f"creating a file here {create:.0f}us, {create_hooks:.0f}us before the hooks{settled}, "
              f"{create_floor_us(root):.0f}us at the end")
        print(f"floor (python3 reads + json.loads):   {f:8.1f} ms")
        print(f"import (fresh session, {turns} commits): {im:8.1f} ms   {im / f:5.1f}x the floor (target <= 10x)")
        print(f"hook on a {big_size / 1e6:.1f} MB transcript grown by 1 turn: {hk:6.1f} ms   "
              f"{hk / apd:5.1f}x a one-shot append ({apd:.1f} ms; target <= 3x)")
        print(f"the same turn by one-shot commands (4 appends, commit-turn): {bh:6.1f} ms   "
              f"the hook {hk / bh:4.2f}x that")


def settle(state):
    """Wait for background packing (due after so many turns) to end."""
    for lock in glob.glob(os.path.join(state, "sessions", "*", ".git", "git-session", "maintenance.lock")):
        with open(lock, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)


if __name__ == "__main__":
    sys.exit(main())
