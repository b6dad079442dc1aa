#!/usr/bin/env python3
"""`list` and `append` with a large registry, in one run.

Builds a state dir with SESSIONS sessions (meta.json + index.json rows, as the
Python store leaves them) plus one real session, then times (medians of whole
processes, alternating):
  list:    `git-session list` (and --json)      vs  python3 loading index.json
                                                     (the Python store's list)
  append:  `git-session append` to the real session, with SESSIONS rows in the index
  floor:   `git-session --version` (process start)

Usage: bench/list.py [--bin PATH] [--sessions 10000] [--runs 21] [--dir DIR]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

from common import built, spawn as spawn_timed


def spawn(argv):
    dt, rc = spawn_timed(argv)
    assert rc == 0, argv
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the binary (default: the release build)")
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--dir", default=None, help="where to create the state dir [default: $TMPDIR]")
    args = ap.parse_args()
    b = os.path.abspath(args.bin or built())
    with tempfile.TemporaryDirectory(prefix="gs-bench-list-", dir=args.dir) as root:
        state = os.path.join(root, "state")
        sdir = os.path.join(state, "sessions")
        os.makedirs(sdir)
        index = {}
        for i in range(args.sessions):
            sid = f"s{i:05d}"
            d = os.path.join(sdir, sid)
            os.makedirs(os.path.join(d, "history"))
            t = 1796000000.0 + i
            meta = {"id": sid, "agent_id": "main", "title": f"Session number {i}", "source": "web",
                    "created_at": t, "updated_at": t + 60, "project_id": "default", "status": "idle"}
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump(meta, f)
            index[sid] = {"id": sid, "status": "idle", "pinned": False, "archived": i % 10 == 0,
                          "unread": False, "agent_id": "main", "title": meta["title"], "source": "web",
                          "created_at": t, "updated_at": t + 60, "channel": None, "account_id": None,
                          "peer_display": None, "peer_id": None, "group": None,
                          "preview": f"what about item {i}? " * 3}
        with open(os.path.join(sdir, "index.json"), "w") as f:
            json.dump(index, f, indent=2)
        spawn([b, "--state-dir", state, "-q", "init", "real"])
        spawn([b, "--state-dir", state, "list"])  # warm the page cache
        # Write the fixture out first: its writeback would otherwise compete
        # with the measured runs on a disk.
        os.sync()
        lists, jsons, pys, appends, floors = [], [], [], [], []
        py = [sys.executable, "-c", f"import json; json.load(open({os.path.join(sdir, 'index.json')!r}))"]
        for k in range(args.runs):
            lists.append(spawn([b, "--state-dir", state, "list"]))
            jsons.append(spawn([b, "--state-dir", state, "list", "--json"]))
            pys.append(spawn(py))
            appends.append(spawn([b, "--state-dir", state, "append", "real", "--text", f"message {k}"]))
            floors.append(spawn([b, "--version"]))
        ms = lambda xs: statistics.median(xs) * 1000
        print(f"{args.sessions} sessions in the index; medians of {args.runs} whole-process runs")
        print(f"  list          {ms(lists):7.2f} ms")
        print(f"  list --json   {ms(jsons):7.2f} ms")
        print(f"  python3 json.load(index.json) {ms(pys):7.2f} ms   (ratio to list: {ms(pys) / ms(lists):.1f}x)")
        print(f"  append        {ms(appends):7.2f} ms")
        print(f"  process floor {ms(floors):7.2f} ms  (git-session --version)")


if __name__ == "__main__":
    sys.exit(main())
