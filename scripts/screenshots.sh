#!/usr/bin/env bash
# Render the pages `export --all --format html` makes of the demo's sessions
# in headless Chromium, as PNG files: the index, a session page on a retry
# branch (`refactor`), a bound session's page with its agent commit and
# relocation (`feature`), and the project's page.
#
# Usage: scripts/screenshots.sh [OUT_DIR]   (default: target/screenshots)
# Needs: chromium (Debian: `apt-get install chromium`); builds the binary
# with cargo unless GIT_SESSION names one.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-target/screenshots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "${GIT_SESSION:-}" ]; then
    cargo build --quiet --offline 2>/dev/null || cargo build --quiet
    GIT_SESSION=$PWD/target/debug/git-session
fi
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "screenshots.sh: no chromium on PATH (apt-get install chromium)" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$GIT_SESSION" demo "$tmp/demo" >/dev/null
state=$tmp/demo/state
site=$out/site
rm -rf "$site"
"$GIT_SESSION" --state-dir "$state" export --all --format html -o "$site"

# The page of `refactor` that shows a retry branch: its current page when
# the session is on one (the demo leaves it there), else the retry's own.
retry=$(ls "$site"/sessions/refactor/branch-retry-*.html 2>/dev/null | head -n 1 || true)
if grep -q 'class="branch current" aria-current="page">retry-' "$site/sessions/refactor/index.html"; then
    retry=$site/sessions/refactor/index.html
fi
project=$(ls "$site"/projects/*.html | head -n 1)

shot() { # name page width height
    "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --force-device-scale-factor=1 --window-size="$3,$4" \
        --screenshot="$out/$1.png" "file://$2" >/dev/null 2>&1
    echo "$out/$1.png  ($2)"
}
shot index "$site/index.html" 1280 900
shot session-retry "$retry" 1280 1600
shot session-feature "$site/sessions/feature/index.html" 1280 1400
shot project "$project" 1280 1100
