package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// TestACPWithRealClient runs `openheim acp` under the official ACP
// TypeScript SDK (testdata/acp/driver.mjs) against the fake LLM server:
// initialize, session/new, a prompt whose tool call needs permission and
// writes through the client's fs, cancel mid-turn, latency and throughput,
// session/list, session/load replay, session/resume, session/delete. The
// SDK validates every message; an update it drops is logged as "Error
// handling notification", which fails the test.
func TestACPWithRealClient(t *testing.T) {
	node, driverDir := acpSDK(t)
	r := newRig(t)
	var many []string
	for i := range 5000 {
		many = append(many, fmt.Sprintf("w%d ", i))
	}
	r.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"hello.txt","content":"hello from openheim"}`}}},
		llmtest.Reply{Text: []string{"Wrote ", "hello.txt."}},
		llmtest.Reply{Text: []string{"Thinking..."}, Hang: true},
		llmtest.Reply{Text: []string{"hi"}},
		llmtest.Reply{Text: many},
	)
	work := filepath.Join(r.dir, "work")
	cmd := exec.Command(node, filepath.Join(driverDir, "driver.mjs"), r.bin, r.cfg, work)
	cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+r.home)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if strings.Contains(stderr.String(), "Error handling notification") {
		t.Errorf("the SDK rejected an update:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("driver: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var report struct {
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
			AtMs int    `json:"atMs"`
		} `json:"checks"`
		Updates                map[string]int `json:"updates"`
		FirstChunkMs           float64        `json:"firstChunkMs"`
		Streamed               int            `json:"streamed"`
		NotificationsPerSecond int            `json:"notificationsPerSecond"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if len(report.Checks) < 19 {
		t.Fatalf("only %d checks ran", len(report.Checks))
	}
	if data, err := os.ReadFile(filepath.Join(work, "hello.txt")); err != nil || string(data) != "hello from openheim" {
		t.Errorf("hello.txt: %q %v", data, err)
	}
	for _, c := range report.Checks {
		t.Logf("%6d ms  %s", c.AtMs, c.Name)
	}
	t.Logf("updates %v; first chunk %.2f ms after session/prompt; %d chunks at %d notifications/s",
		report.Updates, report.FirstChunkMs, report.Streamed, report.NotificationsPerSecond)
}

// acpSDK returns node and the directory of the ACP SDK drivers; it skips
// the test when they are missing, and fails it in CI, which installs them.
func acpSDK(t *testing.T) (node, driverDir string) {
	t.Helper()
	driverDir, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "acp"))
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(driverDir, "node_modules", "@agentclientprotocol", "sdk")); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the ACP SDK is missing (run npm ci in testdata/acp): %v %v", err, serr)
		}
		t.Skip("node or testdata/acp/node_modules missing; run: npm ci --prefix testdata/acp")
	}
	return node, driverDir
}
