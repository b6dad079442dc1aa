#!/usr/bin/env bash
# Benchmark: git-session per-turn cost against the git CLI doing the same work.
# Usage: bench/commit_turn.sh [--sizes 300,3000,15000] [--turns 25] [--fsync] [--dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q
exec python3 bench/commit_turn.py "$@"
