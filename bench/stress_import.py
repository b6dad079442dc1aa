#!/usr/bin/env python3
"""Stress for `import` and `hook`: transcripts that grow while many processes
import them, random SIGKILLs, then the result against one import.

A writer appends, record by record, to TRANSCRIPTS Claude Code transcripts and
as many Codex rollouts (the shapes of bench/import.py and of the reference:
tool loops, multi-record replies, duplicated Codex text). Meanwhile WORKERS
threads run, on a random transcript, `hook claude-code` with a mid-turn event
(the ended turns) or `hook codex` with a mid-turn or a `Stop` event (a Codex
reply waits for its turn's end), the final one `import` (everything),
killing a fraction of them with SIGKILL at a random moment. Then each
transcript gets its final `Stop` hook / import, `recover` and `verify --all`
run, and every session is checked against a fresh import of its final
transcript in another state dir:
  - the same nodes (id, role, links, name, text), each line of the transcript
    kept exactly once (the transcript rebuilt from the session equals it)
  - `git fsck --strict` passes, `verify --all` is clean, the hook log is empty
Deterministic choices for a --seed (not the interleaving).

Usage: bench/stress_import.py [--bin PATH] [--seed 1] [--workers 8]
                              [--transcripts 3] [--turns 12] [--kill-rate 0.15]
Exit status 0 when every session is the one a single import gives.
"""

import argparse
import importlib
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

ENV = isolated_env(fsync=False)
claude = importlib.import_module("import")


def codex_rollout(rid, turns):
    """A Codex rollout: each turn a task with a call, text recorded twice."""
    out = []
    t = [0]

    def rec(kind, payload):
        t[0] += 1
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_793_527_200 + t[0])) + ".000Z"
        out.append({"timestamp": ts, "type": kind, "payload": payload})

    rec("session_meta", {"id": rid, "cwd": "/home/me/proj", "originator": "codex_cli_rs"})
    for k in range(turns):
        tid = f"turn-{k}"
        text = f"task {k}: make the tests pass"
        reply = f"done with {k}"
        rec("event_msg", {"type": "task_started", "turn_id": tid})
        rec("turn_context", {"turn_id": tid, "cwd": "/home/me/proj", "model": "gpt-5-codex"})
        rec("response_item", {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": text}]})
        rec("event_msg", {"type": "user_message", "message": text})
        rec("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"})
        rec("response_item", {"type": "function_call", "name": "shell",
                              "arguments": json.dumps({"command": ["ls", str(k)]}), "call_id": f"call_{k}"})
        rec("response_item", {"type": "function_call_output", "call_id": f"call_{k}", "output": "a.rs\n" * 5})
        rec("event_msg", {"type": "token_count", "info": {"total_token_usage": {"output_tokens": k}}})
        rec("response_item", {"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": reply}]})
        rec("event_msg", {"type": "agent_message", "message": reply})
        rec("event_msg", {"type": "task_complete", "turn_id": tid, "last_agent_message": reply})
    return out


def shape(gs, state, session):
    """The session's nodes without the records they carry, and its records
    in line order (per transcript)."""
    hist = os.path.join(state, "sessions", session, "history")
    nodes, kept = [], []
    for f in sorted(os.listdir(hist)):
        if f.startswith(".gs-tmp"):
            continue
        n = json.load(open(os.path.join(hist, f)))
        nodes.append((f, n["role"], n.get("predecessor"), n.get("caller"), n.get("name"), n.get("output")))
        for r in n["metadata"].get("source_records", []):
            kept.append((r.get("transcript"), r["line"], json.dumps(r.get("record", r.get("raw")), sort_keys=True)))
    kept.sort()
    return nodes, kept


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--transcripts", type=int, default=3)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--kill-rate", type=float, default=0.15)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin or built())
    rng = random.Random(args.seed)
    root = tempfile.mkdtemp(prefix="gs-stress-import-")
    state = os.path.join(root, "state")
    gs = [binary, "--state-dir", state, "--lock-timeout", "60"]

    # The transcripts, each to be written record by record.
    files = []  # (agent, path, records, session)
    for i in range(args.transcripts):
        sid = f"00000000-0000-4000-8000-{i:012d}"
        recs = claude.transcript(args.turns)
        for r in recs:
            r["sessionId"] = sid
        d = os.path.join(root, "claude", "-home-me-proj")
        os.makedirs(d, exist_ok=True)
        files.append(("claude-code", os.path.join(d, f"{sid}.jsonl"), recs, f"claude-{sid}"))
        rid = f"0199aaaa-0000-7000-8000-{i:012d}"
        d = os.path.join(root, "codex", "sessions", "2026", "11", "01")
        os.makedirs(d, exist_ok=True)
        files.append(("codex", os.path.join(d, f"rollout-2026-11-01T10-00-00-{rid}.jsonl"),
                      codex_rollout(rid, args.turns), f"codex-{rid}"))
    for _, path, _, _ in files:
        open(path, "w").close()

    done = threading.Event()
    counters = {"runs": 0, "killed": 0, "failed": 0}
    lock = threading.Lock()

    def writer():
        order = [(i, j) for i, (_, _, recs, _) in enumerate(files) for j in range(len(recs))]
        # Interleave the transcripts, each in its own order.
        pos = [0] * len(files)
        while any(pos[i] < len(files[i][2]) for i in range(len(files))):
            i = rng.randrange(len(files))
            if pos[i] >= len(files[i][2]):
                continue
            with open(files[i][1], "a") as f:
                line = json.dumps(files[i][2][pos[i]]) + "\n"
                # Now and then a record lands in two writes (a torn line for a while).
                if rng.random() < 0.2:
                    cut = rng.randrange(1, len(line))
                    f.write(line[:cut])
                    f.flush()
                    time.sleep(0.002)
                    f.write(line[cut:])
                else:
                    f.write(line)
            pos[i] += 1
            time.sleep(0.001)
        del order
        done.set()

    def run(wrng, argv, stdin=None):
        p = subprocess.Popen(gs + argv, env=ENV, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if stdin:
            try:
                p.stdin.write(stdin.encode())
                p.stdin.close()
            except BrokenPipeError:
                pass
        killed = False
        if wrng.random() < args.kill_rate:
            time.sleep(wrng.random() * 0.03)
            try:
                p.send_signal(signal.SIGKILL)
                killed = True
            except ProcessLookupError:
                pass
        err = p.stderr.read()
        p.wait()
        with lock:
            counters["runs"] += 1
            if killed and p.returncode == -signal.SIGKILL:
                counters["killed"] += 1
            elif p.returncode != 0:
                counters["failed"] += 1
                sys.stderr.write(f"--- {' '.join(argv[:3])} exit {p.returncode}: {err.decode(errors='replace')[-400:]}\n")

    def worker(w):
        wrng = random.Random(args.seed * 1000 + w)
        while not done.is_set():
            agent, path, _, _ = wrng.choice(files)
            if agent == "claude-code":
                event = json.dumps({"session_id": "x", "transcript_path": path,
                                    "hook_event_name": wrng.choice(["UserPromptSubmit", "PostToolUse"])})
                run(wrng, ["hook", "claude-code"], stdin=event)
            else:
                # Codex's hooks (the end of a turn) or an `import` run by
                # hand (everything so far).
                event = json.dumps({"session_id": "x", "transcript_path": path,
                                    "hook_event_name": wrng.choice(["Stop", "UserPromptSubmit"])})
                run(wrng, ["hook", "codex"], stdin=event)

    t0 = time.time()
    threads = [threading.Thread(target=writer)] + [threading.Thread(target=worker, args=(w,)) for w in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - t0

    # The end of every conversation, no kill.
    for agent, path, _, _ in files:
        if agent == "claude-code":
            event = json.dumps({"transcript_path": path, "hook_event_name": "Stop"})
            subprocess.run(gs + ["hook", "claude-code"], input=event.encode(), env=ENV, check=True)
        else:
            subprocess.run(gs + ["-q", "import", "codex", path], env=ENV, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(gs + ["-q", "recover", "--older-than", "1000d"], env=ENV, check=True, stdout=subprocess.DEVNULL)
    # Killed runs leave temporary files: `verify --fix` removes them.
    subprocess.run(gs + ["-q", "verify", "--all", "--fix"], env=ENV, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    verify = subprocess.run(gs + ["verify", "--all"], env=ENV, capture_output=True, text=True)

    one_state = os.path.join(root, "one")
    differ, lines_bad, fsck_bad = [], [], []
    for agent, path, recs, session in files:
        subprocess.run([binary, "--state-dir", one_state, "-q", "import", agent, path],
                       env=ENV, check=True, stdout=subprocess.DEVNULL)
        got, kept = shape(gs, state, session)
        want, _ = shape(gs, one_state, session)
        if got != want:
            differ.append(session)
        records = [json.dumps(r, sort_keys=True) for r in recs]
        if [k[2] for k in kept] != records or [k[1] for k in kept] != list(range(len(recs))):
            lines_bad.append(session)
        d = os.path.join(state, "sessions", session)
        if subprocess.run(["git", "-C", d, "fsck", "--strict", "--no-progress"], env=ENV,
                          capture_output=True).returncode != 0:
            fsck_bad.append(session)
    log = os.path.join(state, "git-session-hooks.log")
    hook_failures = open(log).read().count("\n") if os.path.exists(log) else 0

    print(f"seed {args.seed}: {counters['runs']} import/hook runs by {args.workers} workers on "
          f"{len(files)} growing transcripts in {elapsed:.1f}s")
    print(f"  processes killed (SIGKILL):   {counters['killed']}")
    print(f"  unexpected exit codes:        {counters['failed']}")
    print(f"  hook failures logged:         {hook_failures}")
    print(f"  sessions unlike one import:   {len(differ)} {differ}")
    print(f"  transcripts not kept exactly: {len(lines_bad)} {lines_bad}")
    print(f"  sessions failing git fsck:    {len(fsck_bad)}")
    print(f"  verify --all:                 {'clean' if verify.returncode == 0 else 'PROBLEMS'}")
    checks = [counters["failed"] == 0, hook_failures == 0, not differ, not lines_bad, not fsck_bad,
              verify.returncode == 0]
    print(f"stress-import: {sum(checks)} passed, {len(checks) - sum(checks)} failed")
    if not all(checks):
        print(verify.stdout[:2000])
        print("state kept at", root)
        return 1
    subprocess.run(["rm", "-rf", root])
    return 0


if __name__ == "__main__":
    sys.exit(main())
