#!/usr/bin/env bash
# Two-replica variant of serve.sh: the same load (1,000 WebSocket sessions,
# each one prompt streaming 200 chunks from a zero-latency fake provider),
# but every session is prompted on replica A and its updates are counted on
# replica B, where they arrive through NATS (core subjects) while A stores
# each step in JetStream. The NATS servers (three on loopback routes, R3,
# file storage) are built from the nats-server module the tests embed; it is
# never linked into openheim. The single-node figure is measured first, in
# the same run, as the floor the issue compares against (at least half).
# Loopback only; every run has a deadline.
#   CONNS=1000 CHUNKS=200 NODES=3 scripts/bench/serve-cluster.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CONNS=${CONNS:-1000}
CHUNKS=${CHUNKS:-200}
NODES=${NODES:-3}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 8192 ]; then
  echo "serve-cluster.sh: open-file limit $(ulimit -n) is too low" >&2
  exit 1
fi

go build -trimpath -ldflags '-s -w' -o "$tmp/openheim" ./cmd/openheim
go build -o "$tmp/nats-server" github.com/nats-io/nats-server/v2
go build -o "$tmp/streamllm" ./scripts/bench/streamllm
go build -o "$tmp/wsload" ./scripts/bench/wsload

"$tmp/streamllm" -chunks "$CHUNKS" >"$tmp/url" &
pids+=($!)
llm=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
[ -s "$tmp/url" ] || { echo "serve-cluster.sh: the fake provider did not start" >&2; exit 1; }

# Free loopback ports for the NATS clients and routes.
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2*'"$NODES"')]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r -a p <<<"$ports"
routes=""
for i in $(seq 0 $((NODES - 1))); do routes+="nats-route://127.0.0.1:${p[$((NODES + i))]},"; done
urls=""
for i in $(seq 0 $((NODES - 1))); do
  name="n$((i + 1))"
  mkdir -p "$tmp/$name"
  cluster=""
  [ "$NODES" -gt 1 ] && cluster="cluster { name: bench, listen: 127.0.0.1:${p[$((NODES + i))]}, routes: [${routes%,}] }"
  cat >"$tmp/$name.conf" <<CONF
server_name: $name
listen: 127.0.0.1:${p[$i]}
jetstream { store_dir: "$tmp/$name" }
$cluster
CONF
  "$tmp/nats-server" -c "$tmp/$name.conf" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  urls+="nats://127.0.0.1:${p[$i]},"
done
urls=${urls%,}
# JetStream answers once a meta leader is elected.
for _ in $(seq 200); do
  grep -q "JetStream cluster new metadata leader\|Server is ready" "$tmp"/n1.log && break
  sleep 0.1
done
sleep 2

mkdir -p "$tmp/work"
base="default_provider = \"bench\"
work_dir = \"$tmp/work\"
max_iterations = 2
[providers.bench]
kind = \"openai_compatible\"
api_base = \"$(cat "$tmp/url")\"
default_model = \"bench\""
printf '%s\n' "$base" >"$tmp/single.toml"
printf '%s\n[cluster]\nnats_url = "%s"\nreplicas = %d\n' "$base" "$urls" "$NODES" >"$tmp/cluster.toml"

echo "== one server, no cluster (the floor) =="
"$tmp/wsload" -openheim "$tmp/openheim" -config "$tmp/single.toml" -home "$tmp" \
  -cwd "$tmp/work" -conns "$CONNS" -chunks "$CHUNKS" -llm-pid "$llm" "$@" || true
echo
echo "== two replicas, $NODES NATS nodes (R$NODES): prompted on A, counted on B =="
"$tmp/wsload" -openheim "$tmp/openheim" -config "$tmp/cluster.toml" -home "$tmp" -replicas 2 \
  -cwd "$tmp/work" -conns "$CONNS" -chunks "$CHUNKS" -llm-pid "$llm" -timeout 120s "$@"
