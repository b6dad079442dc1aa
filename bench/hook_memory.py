#!/usr/bin/env python3
"""Peak memory of a hook call on a big transcript grown by one turn.

Builds a Claude Code transcript of about MB megabytes in the shape of
bench/import.py's (a typed message, a reply with a tool call, the tool
result, a final reply, a turn_duration record), its tool results of about
RESULT_KB kilobytes each (a real transcript's bulk: files read, command
output), imports it once, then grows it by one turn and runs the Stop hook
on it, RUNS times, and prints the hook's peak resident memory (the
kernel's maxrss of the process) against the target: 64 MiB plus the
largest record of the transcript (issue 51). The first import's peak is
printed too, for reference (it maps every turn: no target).

Usage: bench/hook_memory.py [--bin PATH] [--mb 200] [--result-kb 100] [--runs 3] [--dir DIR]
"""

import argparse
import json
import os
import sys
import tempfile
import time

from common import ENV, built

SID = "77777777-2222-3333-4444-555555555555"


def turn(k, result_kb):
    """The records of turn `k` (its first record's parent: turn k-1's last)."""
    out = []
    t = 1_793_527_200 + k * 10
    prev = f"s{k - 1}" if k else None

    def rec(kind, uuid, parent, **kw):
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t + len(out))) + ".000Z"
        d = {"type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": ts,
             "sessionId": SID, "cwd": "/home/me/proj", "version": "2.0.1", "isSidechain": False}
        d.update(kw)
        out.append(d)

    model = {"model": "claude-sonnet-4", "usage": {"input_tokens": 1000 + k, "output_tokens": 50}}
    rec("user", f"u{k}", prev, message={"role": "user", "content": f"question {k}: read the log"})
    rec("assistant", f"a{k}a", f"u{k}", message={"id": f"msg_{k}a", "role": "assistant", **model,
        "content": [{"type": "tool_use", "id": f"toolu_{k}", "name": "Bash",
                     "input": {"command": f"cat build-{k}.log"}}]})
    line = f"turn {k}: compiling crate with a line of build output\n"
    body = line * max(1, result_kb * 1024 // len(line))
    rec("user", f"r{k}", f"a{k}a", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": body}]})
    rec("assistant", f"a{k}b", f"r{k}", message={"id": f"msg_{k}b", "role": "assistant", **model,
        "content": [{"type": "text", "text": "The build is fine."}]})
    rec("system", f"s{k}", f"a{k}b", subtype="turn_duration", durationMs=4000)
    return [json.dumps(r) + "\n" for r in out]


def run(argv, stdin=None):
    """Run a process; returns (seconds, exit code, peak RSS in MiB)."""
    t = time.perf_counter()
    fin = open(stdin, "rb") if stdin else open(os.devnull, "rb")
    pid = os.posix_spawnp(argv[0], argv, ENV, file_actions=[
        (os.POSIX_SPAWN_DUP2, fin.fileno(), 0),
    ])
    _, status, usage = os.wait4(pid, 0)
    fin.close()
    return time.perf_counter() - t, os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--result-kb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    with tempfile.TemporaryDirectory(prefix="gs-hookmem-", dir=args.dir) as root:
        path = os.path.join(root, f"{SID}.jsonl")
        largest = 0
        turns = 0
        with open(path, "w") as f:
            while f.tell() < args.mb * 1e6:
                for line in turn(turns, args.result_kb):
                    largest = max(largest, len(line))
                    f.write(line)
                turns += 1
        size = os.path.getsize(path)
        state = os.path.join(root, "state")
        dt, rc, first = run([binary, "--state-dir", state, "import", "claude-code", path])
        assert rc == 0, "the first import failed"
        print(f"transcript: {size / 1e6:.1f} MB, {turns} turns, largest record {largest / 1024:.0f} KiB; "
              f"first import {dt:.1f} s, peak {first:.0f} MiB")
        event = os.path.join(root, "event.json")
        with open(event, "w") as f:
            json.dump({"session_id": SID, "transcript_path": path, "cwd": "/home/me/proj",
                       "hook_event_name": "Stop", "stop_hook_active": False}, f)
        peaks = []
        for i in range(args.runs):
            with open(path, "a") as f:
                f.writelines(turn(turns + i, args.result_kb))
            dt, rc, peak = run([binary, "--state-dir", state, "hook", "claude-code"], stdin=event)
            assert rc == 0, "the hook failed"
            peaks.append(peak)
            print(f"hook {i + 1}: {dt * 1000:.0f} ms, peak {peak:.1f} MiB")
        log = os.path.join(state, "git-session-hooks.log")
        assert not os.path.exists(log), open(log).read()
        target = 64 + largest / 2**20
        worst = max(peaks)
        print(f"hook peak {worst:.1f} MiB (worst of {args.runs}); target <= {target:.1f} MiB "
              f"(64 MiB + the largest record): {'met' if worst <= target else 'MISSED'}")
        return 0 if worst <= target else 1


if __name__ == "__main__":
    sys.exit(main())
