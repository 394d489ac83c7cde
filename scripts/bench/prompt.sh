#!/usr/bin/env bash
# Whole-process benchmark of `openheim prompt` on the two-step tool scenario
# (list_dir, then an answer) against a local fake server, compared with the
# floor: a tiny client that sends the same two HTTP requests and nothing else.
# Prints median wall time and peak RSS of each, openheim's overhead and the
# ratio; then `openheim --version` against the smallest Go program (start-up
# floor: what the Go runtime itself costs to start on this machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-30}
tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -trimpath -ldflags '-s -w' -o "$tmp/openheim" ./cmd/openheim
go build -o "$tmp/fakellm" ./scripts/bench/fakellm
go build -trimpath -ldflags '-s -w' -o "$tmp/bareclient" ./scripts/bench/bareclient
mkdir -p "$tmp/hello"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n' >"$tmp/hello/main.go"
(cd "$tmp/hello" && GOFLAGS= go mod init hello >/dev/null 2>&1 && go build -trimpath -ldflags '-s -w' -o "$tmp/hellobin" .)

"$tmp/fakellm" -runs $((RUNS * 2 + 4)) >"$tmp/url" &
server=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
url=$(cat "$tmp/url")

mkdir -p "$tmp/work" "$tmp/home"
echo a >"$tmp/work/a.txt"; echo b >"$tmp/work/b.txt"
cat >"$tmp/config.toml" <<TOML
default_provider = "fake"
work_dir = "$tmp/work"
[providers.fake]
api_base = "$url"
default_model = "fake-model"
TOML

median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

# measure NAME CMD...: RUNS runs; prints median wall ms (from the clock, as
# /usr/bin/time only has 10 ms resolution) and median peak RSS in KiB.
measure() {
  local name=$1; shift
  : >"$tmp/$name.txt"
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$tmp/one" "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000 )) $(cat "$tmp/one")" >>"$tmp/$name.txt"
  done
  local us kb
  us=$(awk '{print $1}' "$tmp/$name.txt" | median)
  kb=$(awk '{print $2}' "$tmp/$name.txt" | median)
  echo "$(echo "scale=1; $us/1000" | bc) $kb"
}

# Warm up both (page cache, first connection).
OPENHEIM_HOME="$tmp/home" "$tmp/openheim" --config "$tmp/config.toml" prompt "What is in this directory?" >/dev/null
"$tmp/bareclient" "$url"

read -r oh_ms oh_kb < <(OPENHEIM_HOME="$tmp/home" measure openheim "$tmp/openheim" --config "$tmp/config.toml" prompt --json "What is in this directory?")
read -r bare_ms bare_kb < <(measure bare "$tmp/bareclient" "$url")

printf 'runs: %d each, medians\n' "$RUNS"
printf '%-22s %8s %10s\n' "" "wall ms" "peak RSS"
printf '%-22s %8s %8.1f MB\n' "openheim prompt" "$oh_ms" "$(echo "$oh_kb/1024" | bc -l)"
printf '%-22s %8s %8.1f MB\n' "bare two requests" "$bare_ms" "$(echo "$bare_kb/1024" | bc -l)"
printf '%-22s %8s %8.1f MB   (targets: < 10 ms, < 30 MB)\n' "openheim adds" "$(echo "$oh_ms - $bare_ms" | bc)" "$(echo "($oh_kb - $bare_kb)/1024" | bc -l)"
printf '%-22s %8.2f\n' "ratio to bare client" "$(echo "$oh_ms/$bare_ms" | bc -l)"

read -r ver_ms _ < <(measure version "$tmp/openheim" --version)
read -r hello_ms _ < <(measure hello "$tmp/hellobin")
printf '%-22s %8s\n' "openheim --version" "$ver_ms"
printf '%-22s %8s\n' "floor: hello (Go)" "$hello_ms"
printf '%-22s %8.2f   (openheim --version target: < 10 ms)\n' "ratio to floor" "$(echo "$ver_ms/$hello_ms" | bc -l)"
