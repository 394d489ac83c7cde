#!/usr/bin/env bash
# Load benchmark of `openheim serve`: 100, then 1,000 WebSocket connections,
# each running one ACP session whose prompt streams 200 chunks from a
# zero-latency fake provider. Prints provider deltas delivered per second
# (the server may merge several into one update for a client that is
# behind), delivery latency, the delay to each session's first update, and
# the server's idle, connected and peak RSS (scripts/bench/wsload does the
# work; a fresh server per run, with a fresh token it passes in
# OPENHEIM_TOKEN). Each load also runs against the floor,
# scripts/bench/wsfloor (a bare gorilla/websocket server relaying the same
# fake stream as the same frames), and the ratios to it are printed: the
# machine is shared, so compare ratios, not bare figures. Loopback only;
# each run has a deadline, the whole script takes about 2 minutes.
#   CONNS=100,1000 CHUNKS=200 scripts/bench/serve.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CONNS=${CONNS:-100,1000}
CHUNKS=${CHUNKS:-200}
tmp=$(mktemp -d)
llm=
trap '[ -n "$llm" ] && kill "$llm" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# Each connection is a socket in the driver and one in the server, and each
# running turn one more to the provider. Go raises its own soft limit to the
# hard one; this covers shells where the hard limit is the one that is low.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4096 ]; then
  echo "serve.sh: open-file limit $(ulimit -n) is too low for 1,000 connections" >&2
  exit 1
fi

go build -trimpath ${BUILDTAGS:+-tags "$BUILDTAGS"} -ldflags '-s -w' -o "$tmp/openheim" ./cmd/openheim
go build -o "$tmp/streamllm" ./scripts/bench/streamllm
go build -o "$tmp/wsload" ./scripts/bench/wsload
go build -o "$tmp/wsfloor" ./scripts/bench/wsfloor

"$tmp/streamllm" -chunks "$CHUNKS" >"$tmp/url" &
llm=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
[ -s "$tmp/url" ] || { echo "serve.sh: the fake provider did not start" >&2; exit 1; }

mkdir -p "$tmp/work"
cat >"$tmp/config.toml" <<TOML
default_provider = "bench"
work_dir = "$tmp/work"
max_iterations = 2
[providers.bench]
kind = "openai_compatible"
api_base = "$(cat "$tmp/url")"
default_model = "bench"
TOML

"$tmp/wsload" -openheim "$tmp/openheim" -config "$tmp/config.toml" -home "$tmp" \
  -cwd "$tmp/work" -conns "$CONNS" -chunks "$CHUNKS" -llm-pid "$llm" -floor "$tmp/wsfloor" "$@"
