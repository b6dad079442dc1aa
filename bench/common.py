"""What the bench scripts share: an isolated environment, a low-overhead
process timer, and session node files as the Python store writes them."""

import json
import os
import statistics
import subprocess
import tempfile
import time


def isolated_env(fsync=False):
    """The caller's environment with git's user config shut out and a fixed
    identity, so both sides of a comparison do the same work."""
    env = dict(os.environ)
    env.update({
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "OpenProgram",
        "GIT_AUTHOR_EMAIL": "openprogram@local",
        "GIT_COMMITTER_NAME": "OpenProgram",
        "GIT_COMMITTER_EMAIL": "openprogram@local",
        "GIT_SESSION_FSYNC": "1" if fsync else "0",
    })
    return env


def built(profile="release"):
    """The binary `cargo build [--release]` makes: `target/<profile>/git-session`."""
    root = os.environ.get("CARGO_TARGET_DIR") or os.path.join(os.path.dirname(__file__), "..", "target")
    return os.path.normpath(os.path.join(root, profile, "git-session"))


ENV = isolated_env()
DEVNULL = os.open(os.devnull, os.O_RDWR)


def spawn(argv, env=ENV, stdin=None, stderr=None):
    """Run a process with minimal driver overhead (stdin: a file to read, else
    /dev/null; stderr: a file to write, else /dev/null); returns (seconds,
    exit code)."""
    t = time.perf_counter()
    first = ((os.POSIX_SPAWN_OPEN, 0, stdin, os.O_RDONLY, 0) if stdin
             else (os.POSIX_SPAWN_DUP2, DEVNULL, 0))
    last = ((os.POSIX_SPAWN_OPEN, 2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if stderr
            else (os.POSIX_SPAWN_DUP2, DEVNULL, 2))
    pid = os.posix_spawnp(argv[0], argv, env, file_actions=[
        first,
        (os.POSIX_SPAWN_DUP2, DEVNULL, 1),
        last,
    ])
    _, status = os.waitpid(pid, 0)
    return time.perf_counter() - t, os.waitstatus_to_exitcode(status)


def feed_batch(binary, state, requests, env=ENV):
    """Send `requests` (argvs) to one `git-session batch` process in
    `state`, its answers not read; stop the benchmark if any failed."""
    p = subprocess.Popen([binary, "--state-dir", state, "batch"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, env=env, text=True)
    for argv in requests:
        p.stdin.write(json.dumps({"argv": argv}) + "\n")
    p.stdin.close()
    if p.wait() != 0:
        raise SystemExit("a batch request of the benchmark's set-up failed")


def node(seq, nid, role, caller, pred, output, t):
    """One history node (reference §3.1)."""
    return {"id": nid, "created_at": t, "seq": seq, "role": role,
            "name": {"user": "", "llm": "m1", "code": "read"}[role], "input": None,
            "output": output, "caller": caller, "predecessor": pred, "reads": [],
            "metadata": {}}


def write_nodes(hist, nodes):
    """Node files named `<seq:06>-<letter>-<id>.json`, compact JSON."""
    for n in nodes:
        letter = {"user": "u", "llm": "a", "code": "t"}[n["role"]]
        with open(os.path.join(hist, f"{n['seq']:06d}-{letter}-{n['id']}.json"), "w") as f:
            f.write(json.dumps(n, separators=(",", ":")))


def create_floor_us(root, n=60):
    """The median cost of creating a small file in a new directory under
    `root`, in microseconds: on ext4 a create scans past inodes freed in the
    last minutes, so right after another run's cleanup it can cost ten
    times its usual (printed by each benchmark so a slow disk shows)."""
    d = tempfile.mkdtemp(dir=root)
    creates = []
    for i in range(n):
        t = time.perf_counter()
        with open(os.path.join(d, f"f{i}"), "w") as f:
            f.write("x")
        creates.append(time.perf_counter() - t)
    return statistics.median(creates) * 1e6
