#!/usr/bin/env bash
# Whole-process benchmark of `openheim sessions ls` and `sessions search` on
# 10,000 sessions of 20 messages (what a heavy user has after a couple of
# years), each against a floor measured in the same run: `ls -f` of the
# history directory and `cat` of its 10,000 meta files (what listing from
# the files alone would read), and `openheim --version` (start-up). Then
# the bulk case of issue 23: 1,900 sessions copied into a history the index
# knows nothing of, and the first `sessions ls` and `sessions search`.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${SESSIONS:-10000}
BULK=${BULK:-1900}
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

median_us() { # CMD...: median wall µs over RUNS runs
  for _ in $(seq "$RUNS"); do
    local a b
    a=$(date +%s%N); "$@" >/dev/null 2>&1; b=$(date +%s%N)
    echo $(((b - a) / 1000))
  done | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'
}
hist="$OPENHEIM_HOME/history"
catmeta() { find "$hist" -maxdepth 1 -name '*.json' -exec cat {} + >/dev/null; }
floor_ls=$(median_us ls -f "$hist")
floor_cat=$(median_us catmeta)
floor_start=$(median_us "$tmp/openheim" --version)
ls50=$(median_us "$tmp/openheim" sessions ls)
lsall=$(median_us "$tmp/openheim" sessions ls --limit 0)
search=$(median_us "$tmp/openheim" sessions search migration rollback)
row() { printf '%-44s %8.1f ms  %s\n' "$1" "$(echo "$2/1000" | bc -l)" "$3"; }
ratio() { printf 'x%.2f %s' "$(echo "$1/$2" | bc -l)" "$3"; }
row "floor: ls -f history/ ($((N * 2)) files)" "$floor_ls" ""
row "floor: cat of the $N meta files" "$floor_cat" ""
row "floor: openheim --version (start-up)" "$floor_start" "(target < 10 ms)"
row "sessions ls (50 newest)" "$ls50" "$(ratio "$ls50" "$floor_start" "of --version"), $(ratio "$ls50" "$floor_ls" "of ls -f") (target < 10 ms)"
row "sessions ls --limit 0 (all $N)" "$lsall" "$(ratio "$lsall" "$floor_cat" "of cat meta")"
row "sessions search 'migration rollback'" "$search" "$(ratio "$search" "$floor_start" "of --version")"

# Bulk: BULK sessions copied into a fresh data directory (a restore).
export OPENHEIM_HOME="$tmp/bulk"
mkdir -p "$OPENHEIM_HOME/history"
"$tmp/openheim" sessions ls >/dev/null 2>&1 # an index that knows none of them
find "$hist" -maxdepth 1 -name '*.json' >"$tmp/metas" # (head would SIGPIPE find)
head -n "$BULK" "$tmp/metas" | while read -r f; do
  cp "$f" "${f%.json}.jsonl" "$OPENHEIM_HOME/history/"
done
a=$(date +%s%N); n=$("$tmp/openheim" sessions ls --limit 0 --select id | wc -l); b=$(date +%s%N)
row "first sessions ls after copying $BULK sessions" "$(((b - a) / 1000))" "(listed $n; was 16.5 s before issue 23)"
a=$(date +%s%N); "$tmp/openheim" sessions search migration rollback 2>"$tmp/note" >/dev/null; b=$(date +%s%N)
row "then sessions search" "$(((b - a) / 1000))" "$(head -c 90 "$tmp/note")"
