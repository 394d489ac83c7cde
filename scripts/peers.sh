#!/usr/bin/env bash
# Installs the real peers the tests drive openheim with, when they are
# missing or older than their lockfiles: the ACP TypeScript SDK and agents
# (testdata/acp), the reference MCP servers, inspector and conformance suite
# (testdata/mcp), and the browser driver of the web client test
# (testdata/web), each pinned by its package-lock.json; and Chromium, the
# browser that test drives. `make test` runs this first.
#
# OPENHEIM_SKIP_PEERS=1 skips what cannot be installed here (no npm, no
# way to install Chromium) instead of failing; the tests that need it are
# then skipped, and the test summary says so.
set -euo pipefail
cd "$(dirname "$0")/.."

missing() {
  echo "peers: $1" >&2
  if [ "${OPENHEIM_SKIP_PEERS:-}" = 1 ]; then
    echo "peers: OPENHEIM_SKIP_PEERS=1: the tests that need it will be skipped" >&2
    return 0
  fi
  echo "peers: or run OPENHEIM_SKIP_PEERS=1 make test to skip the tests that need it" >&2
  exit 1
}

for dir in testdata/acp testdata/mcp testdata/web; do
  # Installed, and (when npm can tell) matching package.json: nothing to do.
  if [ -e "$dir/node_modules/.package-lock.json" ]; then
    if ! command -v npm >/dev/null || npm ls --prefix "$dir" --depth=0 >/dev/null 2>&1; then
      continue
    fi
  fi
  if ! command -v npm >/dev/null; then
    missing "npm is needed to install the test peers of $dir: install Node.js 20 or later"
    continue
  fi
  echo "peers: npm ci --prefix $dir"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
done

# System packages: Chromium, the browser the web client test drives, and
# bubblewrap, which Codex's workspace-write sandbox needs on Linux (openheim
# starts codex-acp in that sandbox; the real Codex turns run in it).
pkgs=""
if [ ! -x /usr/bin/chromium ]; then pkgs="$pkgs chromium"; fi
if ! command -v bwrap >/dev/null; then pkgs="$pkgs bubblewrap"; fi
if [ -n "$pkgs" ]; then
  # Installed here when that needs no password (root, or CI with
  # passwordless sudo), else the command is named.
  SUDO=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; fi
  if command -v apt-get >/dev/null && { [ "$(id -u)" = 0 ] || [ -n "$SUDO" ]; }; then
    echo "peers: apt-get install$pkgs"
    # Two commands, not an && list, so that set -e stops at a failed update.
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs
  else
    missing "the web client test drives Chromium at /usr/bin/chromium and Codex's sandbox needs bwrap: sudo apt-get install$pkgs"
  fi
fi
