package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this test binary as `openheim`, so the
// scripts exercise the real main: flags, exit codes, stdout and stderr.
func TestMain(m *testing.M) {
	// The scripted fake ACP agent runs as this binary too (chat --agent).
	acptest.MaybeRunFakeAgent()
	testscript.Main(m, map[string]func(){
		"openheim": main,
	})
}

// TestScripts runs the end-to-end scripts in testdata/script against the
// fake OpenAI-compatible server. Set UPDATE_GOLDEN=1 to rewrite the golden
// files inside the scripts.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") != "",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("OPENHEIM_HOME", filepath.Join(env.WorkDir, ".openheim"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("MCP_BIN", mcpBin)
			env.Values[fakeKey{}] = &fakeHolder{}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond != "mcppeers" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := os.Stat(filepath.Join(mcpBin, "mcp-server-everything"))
			if err != nil && os.Getenv("CI") != "" {
				return false, fmt.Errorf("the MCP test peers are missing (CI installs them with npm ci --prefix testdata/mcp): %v", err)
			}
			return err == nil, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakellm":   cmdFakeLLM,
			"waitreq":   cmdWaitReq,
			"waithang":  cmdWaitHang,
			"sleep":     cmdSleep,
			"llmreq":    cmdLLMReq,
			"expand":    cmdExpand,
			"normalize": cmdNormalize,
		},
	})
}

// mcpBin holds the real MCP peers' commands (testdata/mcp, from npm).
var mcpBin, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "mcp", "node_modules", ".bin"))

type fakeKey struct{}

// fakeHolder carries a script's fake server between its commands.
type fakeHolder struct{ s *llmtest.Server }

func server(ts *testscript.TestScript) *llmtest.Server {
	s := ts.Value(fakeKey{}).(*fakeHolder).s
	if s == nil {
		ts.Fatalf("no fake LLM server: run fakellm first")
	}
	return s
}

// fakellm SCRIPT.json: start a fake LLM server scripted with the replies in
// the file and set $LLM_URL to its base URL.
func cmdFakeLLM(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakellm SCRIPT.json")
	}
	replies, err := llmtest.LoadScript(ts.MkAbs(args[0]))
	ts.Check(err)
	s := llmtest.New()
	s.Enqueue(replies...)
	ts.Defer(s.Close)
	ts.Setenv("LLM_URL", s.URL())
	ts.Setenv("LLM_BASE", strings.TrimSuffix(s.URL(), "/v1"))
	ts.Setenv("LLM_HOST", strings.TrimPrefix(strings.TrimSuffix(s.URL(), "/v1"), "http://"))
	ts.Value(fakeKey{}).(*fakeHolder).s = s
}

// waitreq N: wait until the fake server has received N requests.
func cmdWaitReq(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	deadline := time.Now().Add(20 * time.Second)
	for len(server(ts).Requests()) < n {
		if time.Now().After(deadline) {
			ts.Fatalf("fake LLM got %d requests, want %d", len(server(ts).Requests()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waithang N: wait until N Hang replies have streamed all they will.
func cmdWaitHang(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	deadline := time.Now().Add(20 * time.Second)
	for server(ts).Hanging() < n {
		if time.Now().After(deadline) {
			ts.Fatalf("fake LLM has %d hanging replies, want %d", server(ts).Hanging(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sleep DURATION: give a background process time to take in what it was sent.
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}

// llmreq N: print the raw JSON body of request N (1-based) on stdout, or
// with no argument the number of requests received.
func cmdLLMReq(ts *testscript.TestScript, neg bool, args []string) {
	reqs := server(ts).Requests()
	if len(args) == 0 {
		fmt.Fprintf(ts.Stdout(), "%d\n", len(reqs))
		return
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	if n < 1 || n > len(reqs) {
		ts.Fatalf("request %d of %d", n, len(reqs))
	}
	fmt.Fprintf(ts.Stdout(), "%s\n", reqs[n-1].Raw)
}

// expand FILE: replace $VAR and ${VAR} in the file with the script's env.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	for _, f := range args {
		data, err := os.ReadFile(ts.MkAbs(f))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(os.Expand(string(data), ts.Getenv)), 0o644))
	}
}

var (
	uuidRE     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE     = regexp.MustCompile(`"updatedAt":"[^"]+"`)
	durationRE = regexp.MustCompile(`"durationMs":\d+`)
	providerRE = regexp.MustCompile(`"model":"[^"]*","provider":"[^"]*"`)
)

// normalize [-provider] SRC DST: write SRC (a file, or stdout/stderr of the
// last exec) to DST with what varies between runs replaced: ids, times,
// durations and the work directory; with -provider also the model and
// provider names, to compare runs against different providers. Compare DST
// with a golden file using cmp.
func cmdNormalize(ts *testscript.TestScript, neg bool, args []string) {
	provider := len(args) > 0 && args[0] == "-provider"
	if provider {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: normalize [-provider] SRC DST")
	}
	s := ts.ReadFile(args[0])
	if provider {
		s = providerRE.ReplaceAllString(s, `"model":"<MODEL>","provider":"<PROVIDER>"`)
	}
	s = strings.ReplaceAll(s, ts.Getenv("WORK"), "$WORK")
	s = uuidRE.ReplaceAllString(s, "<UUID>")
	s = timeRE.ReplaceAllString(s, `"updatedAt":"<TIME>"`)
	s = durationRE.ReplaceAllString(s, `"durationMs":<MS>`)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644))
}
