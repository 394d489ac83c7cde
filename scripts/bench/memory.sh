#!/usr/bin/env bash
# Whole-process benchmark of long-term memory at scale: `openheim memory
# import` of N notes (default 100,000 of ~30 words, Zipf-distributed
# pseudo-words, fixed seed) into an empty memory, then `openheim memory
# search` of two words, RUNS times. The floor for search is `openheim
# --version` in the same run (process start-up, which every command pays);
# the floor for import is index/memory's BenchmarkBuild, bleve alone
# building an index of as many notes, run here too. The in-process figures
# (p99 of Memory.Search against the bare bleve query) are the go benchmarks
# `make bench` runs beside this.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${NOTES:-100000}
RUNS=${RUNS:-50}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -ldflags '-s -w' -o "$tmp/openheim" ./cmd/openheim
export OPENHEIM_HOME="$tmp/home"
mkdir -p "$OPENHEIM_HOME"

python3 - "$N" >"$tmp/notes.jsonl" <<'PY'
import json, random, sys
r = random.Random(7)
cons, vows = "bcdfghklmnprstvz", "aeiou"
vocab = sorted({"".join(r.choice(cons) + r.choice(vows) for _ in range(2 + r.randrange(3))) for _ in range(9000)})[:8000]
weights = [1 / (i + 2) ** 1.1 for i in range(len(vocab))]
for i in range(int(sys.argv[1])):
    words = r.choices(vocab, weights, k=15 + r.randrange(31))
    print(json.dumps({"content": " ".join(words)}))
PY
read -r q1 q2 < <(sed -n 500p "$tmp/notes.jsonl" | python3 -c 'import json,sys; w=json.load(sys.stdin)["content"].split(); print(w[3], w[7])')

ms() { local a b; a=$(date +%s%N); "$@" >/dev/null; b=$(date +%s%N); echo $(((b - a) / 1000)); }
pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END{i=int(NR*p/100+0.5); if(i<1)i=1; printf "%.1f", a[i]/1000}'; }

floor_import=$(go test -run '^$' -bench '^BenchmarkBuild$' -benchtime 1x ./index/memory/ | awk '/^BenchmarkBuild/ {print int($3 / 1000)}')
import_us=$(ms "$tmp/openheim" memory import "$tmp/notes.jsonl")
"$tmp/openheim" memory search "$q1" >/dev/null # the index is in step from here on

: >"$tmp/search"; : >"$tmp/version"
for _ in $(seq "$RUNS"); do
  ms "$tmp/openheim" memory search "$q1 $q2" >>"$tmp/search"
  ms "$tmp/openheim" --version >>"$tmp/version"
done
s50=$(pct 50 <"$tmp/search"); s99=$(pct 99 <"$tmp/search")
v50=$(pct 50 <"$tmp/version"); v99=$(pct 99 <"$tmp/version")
printf 'notes: %d; runs: %d\n' "$N" "$RUNS"
printf '%-40s %9s ms   (target < 10 s)\n' "memory import" "$(echo "scale=1; $import_us/1000" | bc)"
printf '%-40s %9s ms   ratio %.2fx\n' "floor: bleve build (index/memory)" "$(echo "scale=1; $floor_import/1000" | bc)" "$(echo "$import_us/$floor_import" | bc -l)"
printf '%-40s %9s ms p50 %7s ms p99   (target p99 < 30 ms)\n' "memory search '$q1 $q2'" "$s50" "$s99"
printf '%-40s %9s ms p50 %7s ms p99   ratio p99 %.2fx\n' "floor: openheim --version" "$v50" "$v99" "$(echo "$s99/$v99" | bc -l)"
