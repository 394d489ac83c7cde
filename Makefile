# openheim: build, test, bench, install, lint.
GO      ?= go
BIN     ?= bin/openheim
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build test peers bench bench-cluster install lint fuzz demo

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/openheim

# The test command of the README and of .ci/run: the peers first, then every
# test; it ends with what was skipped and why, and fails when tests were
# skipped for want of the peers (unless OPENHEIM_SKIP_PEERS=1). The summary
# program is built before the run so that its output is not mixed in.
test: lint peers
	@$(GO) build -o bin/testsummary ./scripts/testsummary
	$(GO) test -race -count=1 -json ./... | bin/testsummary

# The real peers the tests drive openheim with: the ACP SDK and agents, the
# reference MCP servers and the browser driver from npm (pinned by their
# lockfiles), and Chromium. Installs only what is missing.
peers:
	@scripts/peers.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/agent/ ./runtime/llm/openai/ ./runtime/session/
	$(GO) test -run '^$$' -bench . -benchtime 20x ./index/sessions/
	$(GO) test -run '^$$' -bench 'Build|Search$$|OpenSearch|FreshProcess|StringsScan' -benchtime 1x ./index/memory/
	$(GO) test -run '^$$' -bench 'Search$$|FreshProcess' -benchtime 5x ./runtime/memory/
	$(GO) test -run '^$$' -bench 'Import' -benchtime 1x ./runtime/memory/
	$(GO) test -run '^$$' -bench . -benchtime 20x ./runtime/mcp/
	scripts/bench/prompt.sh
	scripts/bench/sessions.sh
	scripts/bench/memory.sh
	scripts/bench/serve.sh
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/live/
	$(GO) test -run '^$$' -bench StreamDelta -benchmem ./protocol/sessionsapi/
	$(GO) test -run '^$$' -bench SSEStream -benchtime 10x -benchmem ./protocol/sessionsapi/
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/redact/ ./runtime/event/
	$(GO) test -run '^$$' -bench HostUpdates -benchmem ./protocol/acp/host/
	scripts/bench/acphost.sh

# The cluster's figures (issue 22): acked appends on R3, appends/s across 32
# sessions, a watcher's added latency on another replica, failover; then
# serve.sh's load across two replicas against one node. Starts nats-server
# nodes in the test process; a few minutes.
bench-cluster:
	$(GO) test -run '^$$' -bench . ./runtime/backend/jetstream/
	scripts/bench/serve-cluster.sh

install:
	$(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/openheim

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@# The lease, the confinement and the process handling have per-OS
	@# code: the other builds (tests included) must still compile.
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzConfine -fuzztime 60s ./runtime/confine/
	$(GO) test -run '^$$' -fuzz FuzzReader -fuzztime 60s ./runtime/llm/sse/

# Runs the README's quick start: a real turn offline against a replay cassette.
demo:
	$(GO) run ./cmd/openheim --config testdata/demo/config.toml prompt "What is in this project? Read the notes and tell me."
