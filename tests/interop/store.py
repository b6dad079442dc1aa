"""Drive OpenProgram's Python SessionStore for git-session's interop tests.

Usage: python store.py STATE_DIR OP [ARGS_JSON]

Each run is a fresh process (a fresh store, as another program would be):
it constructs `SessionStore(STATE_DIR/sessions)` with `$HOME` and
`OPENPROGRAM_HOME` pointing at the test's dirs, performs one operation and
prints its result as one JSON value on stdout. Exit 3: the package is
missing.
"""

import json
import os
import sys


def main() -> int:
    state, op = sys.argv[1], sys.argv[2]
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    os.environ["OPENPROGRAM_HOME"] = state
    try:
        from openprogram.store.session.session_store import SessionStore
    except ImportError as e:  # the test says what is missing
        print(json.dumps({"missing": str(e)}))
        return 3
    store = SessionStore(os.path.join(state, "sessions"))
    sid = args.get("id")
    if op == "probe":
        import openprogram

        out = {"version": getattr(openprogram, "__version__", None)}
    elif op == "list":
        rows = store.list_sessions(limit=10000)
        out = [
            {k: r.get(k) for k in ("id", "title", "updated_at", "archived", "project_id")}
            for r in rows
        ]
    elif op == "messages":
        out = [
            {"id": m.get("id"), "role": m.get("role"), "content": m.get("content")}
            for m in store.get_messages(sid)
        ]
    elif op == "branch":
        out = [m.get("id") for m in store.get_branch(sid)]
    elif op == "branches":
        out = sorted(b.get("head_msg_id") for b in store.list_branches(sid))
    elif op == "latest_user_text":
        out = store.latest_user_text(sid)
    elif op == "create":
        store.create_session(sid, args.get("agent", "main"), title=args.get("title", ""),
                             **args.get("fields", {}))
        out = None
    elif op == "append":
        store.append_message(sid, args["msg"])
        out = None
    elif op == "commit":
        out = store.commit_turn(sid, args.get("message", "turn: python"))
    elif op == "turn":
        # One store for the turn, as a harness has: appends, then the commit.
        for m in args["msgs"]:
            store.append_message(sid, m)
        out = store.commit_turn(sid, args.get("message", "turn: python"))
    elif op == "update":
        store.update_session(sid, **args["fields"])
        out = None
    elif op == "archive":
        store.update_session(sid, archived=args.get("flag", True))
        out = None
    elif op == "merge_node_metadata":
        # As the newer store's merge_node_metadata does: the node as stored
        # (every key kept), its metadata merged, the file rewritten under
        # the name the store computes from seq, role and id (the released
        # store's Call would drop `predecessor`, a key it does not know).
        # Returns the history files holding that id.
        git, _ = store._open(sid)
        path = next(p for p in git.list_history() if p.name.endswith(f"-{args['node']}.json"))
        node = json.loads(path.read_text(encoding="utf-8"))
        node["metadata"] = {**(node.get("metadata") or {}), **args["metadata"]}
        git.write_history(node["seq"], node["role"], node["id"], node)
        out = sorted(p.name for p in git.list_history() if p.name.endswith(f"-{node['id']}.json"))
    elif op == "rebuilt_preview":
        # The preview the newer store rebuilds a lost index row with: the
        # latest user node's text, the history read in file-name order.
        git, _ = store._open(sid)
        text = None
        for p in git.list_history():
            n = json.loads(p.read_text(encoding="utf-8"))
            if n.get("role") == "user" and not (n.get("called_by") or n.get("caller")):
                text = n.get("output")
        if isinstance(text, str):
            text = " ".join(text.strip().split("\n"))
            text = text if len(text) <= 80 else text[:77] + "…"
        out = text
    elif op == "session_dir":
        s = store.get_session(sid)
        out = None if s is None else True
    else:
        print(json.dumps({"error": f"unknown op {op}"}))
        return 2
    store.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
