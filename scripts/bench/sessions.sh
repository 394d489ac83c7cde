#!/usr/bin/env bash
# Whole-process benchmark of `openheim sessions ls` and `sessions search` on
# 10,000 sessions of 20 messages (what a heavy user has after a couple of
# years). Prints the one-off index build time and median wall times.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${SESSIONS:-10000}
RUNS=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -ldflags '-s -w' -o "$tmp/openheim" ./cmd/openheim
go build -o "$tmp/gensessions" ./scripts/bench/gensessions
export OPENHEIM_HOME="$tmp/home"

t0=$(date +%s%N)
"$tmp/gensessions" -home "$OPENHEIM_HOME" -sessions "$N" -messages 20
t1=$(date +%s%N)
"$tmp/openheim" sessions reindex
t2=$(date +%s%N)
printf 'generated %d sessions in %d ms; index built in %d ms\n' "$N" $(((t1 - t0) / 1000000)) $(((t2 - t1) / 1000000))

median_ms() { # CMD...: median wall ms over RUNS runs
  for _ in $(seq "$RUNS"); do
    local a b
    a=$(date +%s%N); "$@" >/dev/null; b=$(date +%s%N)
    echo $(((b - a) / 1000))
  done | sort -n | awk '{a[NR]=$1} END{printf "%.1f", a[int((NR+1)/2)]/1000}'
}
printf '%-40s %8s ms   (target < 50 ms)\n' "sessions ls (50 newest)" "$(median_ms "$tmp/openheim" sessions ls)"
printf '%-40s %8s ms\n' "sessions ls --limit 0 (all $N)" "$(median_ms "$tmp/openheim" sessions ls --limit 0)"
printf '%-40s %8s ms   (target < 50 ms)\n' "sessions search 'migration rollback'" "$(median_ms "$tmp/openheim" sessions search migration rollback)"
printf '%-40s %8s ms\n' "openheim --version (start-up floor)" "$(median_ms "$tmp/openheim" --version)"
