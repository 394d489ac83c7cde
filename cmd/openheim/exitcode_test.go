package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds openheim once per test run, so exit codes are those a
// shell sees from the real executable.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "openheim-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "openheim")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return binPath
}

// TestExitCodes checks the process exit code of each way a turn can end,
// and that the NDJSON result line reports the same code.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		name    string
		replies []llmtest.Reply
		args    []string
		signal  bool
		want    int
	}{
		{"success", []llmtest.Reply{{Text: []string{"ok"}}}, nil, false, 0},
		{"provider failure", []llmtest.Reply{{Status: 400, ErrorBody: `{"error":{"message":"bad request"}}`}}, nil, false, 1},
		{"unknown model", nil, []string{"--model", "nope"}, false, 2},
		{"bad flag", nil, []string{"--max-iterations", "0"}, false, 2},
		{"max turn requests", []llmtest.Reply{{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "list_dir", Arguments: "{}"}}}}, []string{"--max-iterations", "1"}, false, 3},
		{"max tokens", []llmtest.Reply{{Text: []string{"cut"}, FinishReason: "length"}}, nil, false, 3},
		{"refusal", []llmtest.Reply{{Text: []string{"no"}, FinishReason: "content_filter"}}, nil, false, 3},
		{"timeout", []llmtest.Reply{{Hang: true}}, []string{"--timeout", "200ms"}, false, 124},
		{"sigint", []llmtest.Reply{{Text: []string{"a"}, Hang: true}}, nil, true, 130},
	}
	bin := binary(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New()
			defer srv.Close()
			srv.Enqueue(tc.replies...)
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.toml")
			os.WriteFile(cfg, []byte(`default_provider = "fake"
work_dir = "`+dir+`"
[providers.fake]
api_base = "`+srv.URL()+`"
models = ["m1"]
`), 0o600)
			args := append([]string{"--config", cfg, "prompt", "--json"}, tc.args...)
			cmd := exec.Command(bin, append(args, "hello")...)
			cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+filepath.Join(dir, "home"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.signal {
				deadline := time.Now().Add(10 * time.Second)
				for srv.Hanging() < 1 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				cmd.Process.Signal(syscall.SIGINT)
			}
			cmd.Wait()
			if got := cmd.ProcessState.ExitCode(); got != tc.want {
				t.Fatalf("exit code %d, want %d\nstderr: %s", got, tc.want, stderr.String())
			}
			if tc.want == 2 {
				if stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "openheim: ") {
					t.Errorf("usage error: stdout %q stderr %q", stdout.String(), stderr.String())
				}
				return
			}
			last := lastLine(stdout.Bytes())
			var res struct {
				Meta struct {
					ExitCode int    `json:"exitCode"`
					Error    string `json:"error"`
				} `json:"_meta"`
			}
			if err := json.Unmarshal(last, &res); err != nil {
				t.Fatalf("last line %q: %v", last, err)
			}
			if res.Meta.ExitCode != tc.want || (tc.want != 0) != (res.Meta.Error != "") {
				t.Errorf("result line %s", last)
			}
		})
	}
}

func lastLine(b []byte) []byte {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		last = append([]byte(nil), sc.Bytes()...)
	}
	return last
}
