package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// TestServeACPWithRealClient runs `openheim serve` and drives a prompt
// through it with the official ACP TypeScript SDK (testdata/acp/ws-driver.mjs)
// twice: over the bare ACP WebSocket /acp (the SDK's own ws-client) and over
// the /ws envelope (channel "agent"). Each run: initialize, session/new, a
// prompt whose list_dir tool call runs and whose answer streams back,
// session/list, then a second connection that session/loads the session
// and gets its history replayed. The SDK validates every message; an update
// it drops is logged as "Error handling notification", which fails the
// test. Last, SIGTERM stops the server: exit 0 and "openheim: stopped".
func TestServeACPWithRealClient(t *testing.T) {
	node, driverDir := acpSDK(t)
	r := newRig(t)
	work := filepath.Join(r.dir, "work")
	if err := os.WriteFile(filepath.Join(work, "marker-for-list-dir.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, r)

	for _, mode := range []string{"acp", "ws"} {
		t.Run(mode, func(t *testing.T) {
			// The driver checks the text against its TEXT constant.
			before := len(r.srv.Requests())
			r.srv.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "ls-" + mode, Name: "list_dir", Arguments: `{"path":"."}`}}},
				llmtest.Reply{Text: []string{"Listed ", "the ", "work ", "directory."}},
			)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "--experimental-websocket", filepath.Join(driverDir, "ws-driver.mjs"),
				"ws://"+strings.TrimPrefix(srv.url, "http://"), mode, work, srv.token)
			cmd.Dir = driverDir
			cmd.WaitDelay = 5 * time.Second
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			elapsed := time.Since(start)
			if strings.Contains(stderr.String(), "Error handling notification") {
				t.Errorf("the SDK rejected an update:\n%s", stderr.String())
			}
			if err != nil {
				t.Fatalf("driver (%s): %v\nstdout: %s\nstderr: %s\nserver stderr:\n%s", elapsed, err, stdout.String(), stderr.String(), srv.stderr())
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			var report struct {
				Mode   string `json:"mode"`
				Checks []struct {
					Name string `json:"name"`
					OK   bool   `json:"ok"`
					AtMs int    `json:"atMs"`
				} `json:"checks"`
				Text     string         `json:"text"`
				Updates  map[string]int `json:"updates"`
				Replay   []string       `json:"replay"`
				Frames   map[string]int `json:"frames"`
				ToolCall struct {
					Title string `json:"title"`
					Kind  string `json:"kind"`
				} `json:"toolCall"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
				t.Fatalf("report: %v\n%s", err, stdout.String())
			}
			want := 14 // see ws-driver.mjs: 2 per connection, 7 on the first, 3 on the second
			if mode == "ws" {
				want += 2 // the greeting, once per connection
			}
			if report.Mode != mode || len(report.Checks) != want {
				t.Fatalf("mode %q ran %d checks, want %d: %+v", report.Mode, len(report.Checks), want, report.Checks)
			}
			for _, c := range report.Checks {
				if !c.OK {
					t.Errorf("check %q failed", c.Name)
				}
			}
			if report.Text != "Listed the work directory." {
				t.Errorf("streamed text %q", report.Text)
			}
			if mode == "ws" && (report.Frames["fs"] != 2 || report.Frames["agent"] == 0 || len(report.Frames) != 2) {
				t.Errorf("/ws frames by channel: %v (want 2 fs greetings, agent frames, nothing else)", report.Frames)
			}
			// The model got the tool's result: the marker file in the listing.
			reqs := r.srv.Requests()
			if len(reqs) != before+2 || r.srv.Pending() != 0 {
				t.Fatalf("fake LLM: %d requests this run (want 2), %d replies left", len(reqs)-before, r.srv.Pending())
			}
			if !bytes.Contains(reqs[before+1].Raw, []byte("marker-for-list-dir.txt")) {
				t.Errorf("the second LLM request does not carry the list_dir result:\n%s", reqs[before+1].Raw)
			}
			for _, c := range report.Checks {
				t.Logf("%6d ms  %s", c.AtMs, c.Name)
			}
			t.Logf("driver %s; tool call %+v; updates %v; replay %v; frames %v", elapsed.Round(time.Millisecond),
				report.ToolCall, report.Updates, report.Replay, report.Frames)
		})
	}

	// SIGTERM: a graceful stop, exit 0.
	start := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("openheim serve did not exit within 10s of SIGTERM\nstderr:\n%s", srv.stderr())
	}
	if srv.err != nil {
		t.Errorf("openheim serve after SIGTERM: %v (want exit 0)\nstderr:\n%s", srv.err, srv.stderr())
	}
	if !strings.Contains(srv.stderr(), "openheim: stopped") {
		t.Errorf("no \"openheim: stopped\" on stderr:\n%s", srv.stderr())
	}
	t.Logf("stopped %s after SIGTERM", time.Since(start).Round(time.Millisecond))
}

// served is a running `openheim serve`.
type served struct {
	cmd    *exec.Cmd
	url    string        // http://127.0.0.1:PORT
	web    string        // the web client's address it printed, #token=... included
	token  string        // the token in that address
	exited chan struct{} // closed once the process has exited; err is then set
	err    error

	mu  sync.Mutex
	buf bytes.Buffer // stderr so far
}

func (s *served) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

var (
	listeningRE = regexp.MustCompile(`listening on (http://\S+)`)
	webClientRE = regexp.MustCompile(`web client: (http://\S+)`)
)

// startServe starts `openheim serve` on a free loopback port, as a user
// would (no token given: it makes one), and waits for its "listening on"
// and "web client" lines. The process is killed at cleanup if it still
// runs.
func startServe(t *testing.T, r *rig) *served {
	t.Helper()
	s := startServeWith(t, r, nil)
	token, ok := strings.CutPrefix(s.web, s.url+"/#token=")
	if !ok || token == "" {
		t.Fatalf("web client address %q: want %s/#token=<token>", s.web, s.url)
	}
	s.token = token
	return s
}

// startServeWith is startServe with more arguments and environment
// variables ("K=V"), without checking what it printed about the token.
func startServeWith(t *testing.T, r *rig, args []string, env ...string) *served {
	t.Helper()
	cmd := exec.Command(r.bin, append([]string{"--config", r.cfg, "serve", "--host", "127.0.0.1", "--port", "0"}, args...)...)
	cmd.Env = append(append(withoutEnv("OPENHEIM_TOKEN"), "OPENHEIM_HOME="+r.home), env...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, exited: make(chan struct{})}
	urlc := make(chan [2]string, 1)
	go func() {
		// Read stderr to EOF before Wait, which closes the pipe.
		sc := bufio.NewScanner(pr)
		var listening string
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.buf.WriteString(line + "\n")
			s.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				listening = m[1]
			}
			if m := webClientRE.FindStringSubmatch(line); m != nil && listening != "" {
				select {
				case urlc <- [2]string{listening, m[1]}:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
		s.err = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			cmd.Process.Kill()
			<-s.exited
		}
	})
	select {
	case u := <-urlc:
		s.url, s.web = u[0], u[1]
	case <-s.exited:
		t.Fatalf("openheim serve exited before listening: %v\nstderr:\n%s", s.err, s.stderr())
	case <-time.After(20 * time.Second):
		t.Fatalf("openheim serve printed no \"listening on\" line within 20s\nstderr:\n%s", s.stderr())
	}
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") || strings.HasSuffix(s.url, ":0") {
		t.Fatalf("listening on %q", s.url)
	}
	return s
}

// withoutEnv is os.Environ without the named variables.
func withoutEnv(names ...string) []string {
	var env []string
next:
	for _, kv := range os.Environ() {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		env = append(env, kv)
	}
	return env
}

// TestServeUsageErrors checks that `openheim serve` refuses, with exit code
// 2 and before listening, --insecure-no-auth on a non-loopback address or
// beside a token, and a port out of range.
func TestServeUsageErrors(t *testing.T) {
	r := newRig(t)
	cases := []struct {
		name string
		args []string
		want []string // on stderr
	}{
		{"no authentication on a public address", []string{"--host", "0.0.0.0", "--port", "0", "--insecure-no-auth"},
			[]string{"0.0.0.0", "--insecure-no-auth", "loopback"}},
		{"no authentication and a token", []string{"--port", "0", "--insecure-no-auth", "--token", "0123456789abcdef0123"},
			[]string{"--insecure-no-auth", "token"}},
		{"port out of range", []string{"--port", "70000"}, []string{"70000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, r.bin, append([]string{"--config", r.cfg, "serve"}, c.args...)...)
			cmd.Env = append(withoutEnv("OPENHEIM_TOKEN"), "OPENHEIM_HOME="+r.home)
			cmd.WaitDelay = 5 * time.Second
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("openheim serve %v did not exit (killed after 30s)\nstderr:\n%s", c.args, stderr.String())
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("openheim serve %v: %v, want exit status 2\nstderr:\n%s", c.args, err, stderr.String())
			}
			if listeningRE.MatchString(stderr.String()) {
				t.Errorf("it started a server:\n%s", stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr.String())
				}
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
		})
	}
}
