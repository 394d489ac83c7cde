#!/usr/bin/env bash
# acphost.sh: what the ACP host adds. Runs `openheim prompt --json` natively
# and through `--agent self` (openheim driving `openheim acp`) against the
# fake LLM, with turns of 1 and 2,000 streamed chunks, and prints medians:
# the host's start-up (1-chunk difference) and its cost per update
# ((2,000-chunk difference - start-up) / 2,000).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-9}
tmp=$(mktemp -d)
trap 'kill $(cat "$tmp/pid") 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/openheim" ./cmd/openheim
go build -o "$tmp/fakellm" ./scripts/bench/fakellm
mkdir -p "$tmp/project"
python3 - "$tmp" "$runs" <<'PY'
import json, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
big = [{"text": ["tok%d " % i for i in range(2000)]}]
small = [{"text": ["ok"]}]
open(tmp + "/replies.json", "w").write(json.dumps((small + big) * runs * 2 + small * 4))
PY
"$tmp/fakellm" -script "$tmp/replies.json" > "$tmp/url" & echo $! > "$tmp/pid"
for _ in $(seq 50); do [ -s "$tmp/url" ] && break; sleep 0.1; done
url=$(head -1 "$tmp/url")
cat > "$tmp/config.toml" <<TOML
default_provider = "fake"
work_dir = "$tmp/project"
[providers.fake]
api_base = "$url"
default_model = "fake-model"
[acp_agents.self]
command = "$tmp/openheim"
args = ["--config", "$tmp/config.toml", "acp"]
env = { OPENHEIM_HOME = "$tmp/agent-home" }
TOML
export OPENHEIM_HOME="$tmp/home"
ms() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A t
for mode in native agent; do
  for size in small big; do
    : > "$tmp/$mode-$size"
  done
done
for _ in $(seq "$runs"); do
  for mode in native agent; do
    flag=(); [ "$mode" = agent ] && flag=(--agent self)
    ms "$tmp/openheim" --config "$tmp/config.toml" prompt "${flag[@]}" --json small >> "$tmp/$mode-small"
    ms "$tmp/openheim" --config "$tmp/config.toml" prompt "${flag[@]}" --json big >> "$tmp/$mode-big"
  done
done
for f in native-small native-big agent-small agent-big; do t[$f]=$(median < "$tmp/$f"); done
startup=$(( t[agent-small] - t[native-small] ))
per=$(( (t[agent-big] - t[native-big] - startup) * 1000 / 2000 ))
echo "median wall time (µs): native 1 chunk ${t[native-small]}, 2000 chunks ${t[native-big]}; --agent self 1 chunk ${t[agent-small]}, 2000 chunks ${t[agent-big]}"
echo "host start-up (agent process, initialize, session/new): $startup µs"
echo "host cost per update: $per ns"
