//go:build unix

package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/protocol/jsonrpc"
)

// newTestTerminals returns terminals rooted in a fresh directory, closed
// at the end of the test so that no command outlives it.
func newTestTerminals(t *testing.T) (*terminals, string) {
	root := realTempDir(t)
	ts := newTerminals(root, nil)
	t.Cleanup(ts.closeAll)
	return ts, root
}

// startTerm creates a terminal, in session s1 unless params say otherwise.
func startTerm(t *testing.T, ts *terminals, params map[string]any) string {
	t.Helper()
	if params["sessionId"] == nil {
		params["sessionId"] = "s1"
	}
	var r struct{ TerminalID string }
	if mustInvoke(t, ts.create, params, &r); !strings.HasPrefix(r.TerminalID, "term_") {
		t.Fatalf("terminal id %q", r.TerminalID)
	}
	return r.TerminalID
}

func ref(session, id string) map[string]any {
	return map[string]any{"sessionId": session, "terminalId": id}
}

type termOut struct {
	Output     string
	Truncated  bool
	ExitStatus *termExitStatus
}

func termOutput(t *testing.T, ts *terminals, session, id string) termOut {
	t.Helper()
	var o termOut
	mustInvoke(t, ts.output, ref(session, id), &o)
	return o
}

// waitTerm waits for the terminal in session s1 to exit and checks both
// fields are on the wire, null or not.
func waitTerm(t *testing.T, ts *terminals, id string) termExitStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, _ := json.Marshal(ref("s1", id))
	res, err := ts.waitForExit(ctx, raw)
	if err != nil {
		t.Fatalf("wait_for_exit: %v", err)
	}
	b, _ := json.Marshal(res)
	var st termExitStatus
	json.Unmarshal(b, &st)
	if !strings.Contains(string(b), `"exitCode":`) || !strings.Contains(string(b), `"signal":`) {
		t.Errorf("exit status %s lacks exitCode or signal", b)
	}
	return st
}

func wantExitCode(t *testing.T, st termExitStatus, code int) {
	t.Helper()
	if st.ExitCode == nil || *st.ExitCode != code || st.Signal != nil {
		t.Errorf("exit status %+v, want code %d", st, code)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func closedSoon(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// processGone reports whether pid no longer runs; a zombie counts as gone,
// since reaping an orphan is up to whatever init the test runs under.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func TestTerminalEchoAndExitCodes(t *testing.T) {
	ts, _ := newTestTerminals(t)
	id := startTerm(t, ts, map[string]any{"command": "echo", "args": []string{"hello", "world"}})
	wantExitCode(t, waitTerm(t, ts, id), 0)
	if !ts.byID[id].groupGone.Load() {
		t.Error("an ended, empty group is still to be signalled")
	}
	if o := termOutput(t, ts, "s1", id); o.Output != "hello world\n" || o.Truncated || o.ExitStatus == nil || *o.ExitStatus.ExitCode != 0 {
		t.Errorf("output %+v", o)
	}

	for _, c := range []struct {
		params map[string]any
		code   int
		out    string
	}{
		{map[string]any{"command": "sh", "args": []string{"-c", "echo out; echo err >&2; exit 3"}}, 3, "out\nerr\n"},
		// Arguments reach the command verbatim, never through a shell.
		{map[string]any{"command": "echo", "args": []string{"$HOME;", "*"}}, 0, "$HOME; *\n"},
		// An argument-less shell line, as claude-agent-acp sends its Bash tool's.
		{map[string]any{"command": "echo abc | tr a-c x-z && exit 4"}, 4, "xyz\n"},
	} {
		id := startTerm(t, ts, c.params)
		wantExitCode(t, waitTerm(t, ts, id), c.code)
		if o := termOutput(t, ts, "s1", id); o.Output != c.out {
			t.Errorf("%v: output %q, want %q", c.params, o.Output, c.out)
		}
	}

	_, err := invoke(t, ts.create, map[string]any{"sessionId": "s1", "command": "openheim-no-such-command"})
	wantRPCError(t, err, jsonrpc.Internal, "openheim-no-such-command")
	_, err = invoke(t, ts.create, map[string]any{"sessionId": "s1", "command": " "})
	wantRPCError(t, err, jsonrpc.InvalidParams, "command is required")
	_, err = invoke(t, ts.create, map[string]any{"command": "true"})
	wantRPCError(t, err, jsonrpc.InvalidParams, "sessionId is required")
}

func TestTerminalEnvAndCwd(t *testing.T) {
	ts, root := newTestTerminals(t)
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	id := startTerm(t, ts, map[string]any{
		"command": "sh", "args": []string{"-c", `printf '%s %s|' "$OPENHEIM_TEST_VAR" "$PATH"; pwd`},
		"env": []map[string]string{{"name": "OPENHEIM_TEST_VAR", "value": "a b"}},
		"cwd": sub,
	})
	waitTerm(t, ts, id)
	if o, want := termOutput(t, ts, "s1", id), "a b "+os.Getenv("PATH")+"|"+sub+"\n"; o.Output != want {
		t.Errorf("output %q, want %q", o.Output, want)
	}

	// A relative cwd is taken from root, and root is the default.
	for cwd, want := range map[string]string{"sub": sub, "": root} {
		id := startTerm(t, ts, map[string]any{"command": "pwd", "cwd": cwd})
		waitTerm(t, ts, id)
		if o := termOutput(t, ts, "s1", id); o.Output != want+"\n" {
			t.Errorf("cwd %q: ran in %q", cwd, o.Output)
		}
	}

	outside := realTempDir(t)
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{outside, "..", "escape"} {
		_, err := invoke(t, ts.create, map[string]any{"sessionId": "s1", "command": "pwd", "cwd": cwd})
		wantRPCError(t, err, jsonrpc.InvalidParams, "outside")
	}
	_, err := invoke(t, ts.create, map[string]any{"sessionId": "s1", "command": "pwd", "cwd": "nowhere"})
	wantRPCError(t, err, jsonrpc.InvalidParams, "not a directory")
}

func TestTerminalOutputLimit(t *testing.T) {
	ts, _ := newTestTerminals(t)
	// 300 two-byte characters; a 51-byte limit cuts inside one of them.
	id := startTerm(t, ts, map[string]any{
		"command": "sh", "args": []string{"-c", `i=0; while [ $i -lt 300 ]; do printf 'é'; i=$((i+1)); done`},
		"outputByteLimit": 51,
	})
	waitTerm(t, ts, id)
	if o := termOutput(t, ts, "s1", id); !o.Truncated || o.Output != strings.Repeat("é", 25) {
		t.Errorf("truncated=%v output %q (%d bytes)", o.Truncated, o.Output, len(o.Output))
	}

	// The buffer itself, fed in pieces that split characters: what it keeps
	// is always valid UTF-8, at most limit bytes, and the newest output.
	b := &tailBuffer{limit: 1000}
	var all strings.Builder
	for i := range 5000 {
		s := "€" + strconv.Itoa(i) + "ü"
		all.WriteString(s)
		b.Write([]byte(s[:2]))
		b.Write([]byte(s[2:]))
	}
	got, truncated := b.snapshot(true)
	if !truncated || len(got) > 1000 || len(got) < 997 || !utf8.ValidString(got) || !strings.HasSuffix(all.String(), got) {
		t.Errorf("tail: truncated=%v len=%d valid=%v", truncated, len(got), utf8.ValidString(got))
	}
	// While running, half a character at the end waits for the rest.
	b = &tailBuffer{limit: 100}
	b.Write([]byte("ok€"[:4]))
	if got, truncated := b.snapshot(false); got != "ok" || truncated {
		t.Errorf("running snapshot %q, %v", got, truncated)
	}
}

func TestTerminalKillProcessGroup(t *testing.T) {
	ts, _ := newTestTerminals(t)
	id := startTerm(t, ts, map[string]any{"command": "sh", "args": []string{"-c", "sleep 30 & echo $!; sleep 30"}})
	var grandchild int
	eventually(t, "the background pid", func() bool {
		line, _, ok := strings.Cut(termOutput(t, ts, "s1", id).Output, "\n")
		grandchild, _ = strconv.Atoi(line)
		return ok && grandchild > 0
	})
	if o := termOutput(t, ts, "s1", id); o.ExitStatus != nil {
		t.Fatalf("exit status while running: %+v", o.ExitStatus)
	}
	if out := mustInvoke(t, ts.kill, ref("s1", id), nil); out != "{}" {
		t.Errorf("kill result %s", out)
	}
	if st := waitTerm(t, ts, id); st.Signal == nil || *st.Signal != "SIGKILL" || st.ExitCode != nil {
		t.Errorf("exit status %+v, want signal SIGKILL", st)
	}
	eventually(t, "the background sleep to die", func() bool { return processGone(grandchild) })
	// Killed, not released: the output is still there.
	if o := termOutput(t, ts, "s1", id); !strings.HasPrefix(o.Output, strconv.Itoa(grandchild)+"\n") || o.ExitStatus == nil {
		t.Errorf("output after kill %+v", o)
	}
	if ts.count() != 1 {
		t.Errorf("count %d after kill, want 1: the terminal stays until released", ts.count())
	}
}

func TestTerminalRelease(t *testing.T) {
	ts, _ := newTestTerminals(t)
	id := startTerm(t, ts, map[string]any{"command": "sleep", "args": []string{"30"}})
	done := ts.byID[id].done
	_, err := invoke(t, ts.output, ref("s2", id))
	wantRPCError(t, err, jsonrpc.InvalidParams, "unknown terminal")

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	raw, _ := json.Marshal(ref("s1", id))
	if _, err := ts.waitForExit(ctx, raw); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait_for_exit past its deadline: %v", err)
	}

	if out := mustInvoke(t, ts.release, ref("s1", id), nil); out != "{}" {
		t.Errorf("release result %s", out)
	}
	for _, h := range []hostHandler{ts.output, ts.waitForExit, ts.kill, ts.release} {
		_, err = invoke(t, h, ref("s1", id))
		wantRPCError(t, err, jsonrpc.InvalidParams, "unknown terminal", id)
	}
	if !closedSoon(done) {
		t.Fatal("the released command still runs")
	}
	if ts.count() != 0 {
		t.Errorf("count %d after release", ts.count())
	}
}

func TestTerminalReleaseSession(t *testing.T) {
	ts, _ := newTestTerminals(t)
	sleep := func(session string) *hostTerminal {
		return ts.byID[startTerm(t, ts, map[string]any{"sessionId": session, "command": "sleep", "args": []string{"30"}})]
	}
	a1, a2, b1 := sleep("a"), sleep("a"), sleep("b")
	ts.releaseSession("a")
	ts.releaseSession("a")
	if ts.count() != 1 {
		t.Fatalf("count %d, want 1", ts.count())
	}
	if !closedSoon(a1.done) || !closedSoon(a2.done) {
		t.Fatal("a terminal of the released session still runs")
	}
	_, err := invoke(t, ts.output, ref("a", a1.id))
	wantRPCError(t, err, jsonrpc.InvalidParams, "unknown terminal")
	if o := termOutput(t, ts, "b", b1.id); o.ExitStatus != nil {
		t.Errorf("the other session's terminal ended: %+v", o.ExitStatus)
	}

	ts.closeAll()
	if ts.count() != 0 || !closedSoon(b1.done) {
		t.Errorf("closeAll left %d terminals or a command running", ts.count())
	}
	_, err = invoke(t, ts.create, map[string]any{"sessionId": "b", "command": "true"})
	wantRPCError(t, err, jsonrpc.Internal, "shutting down")
}

func TestTerminalLiveLimit(t *testing.T) {
	ts, _ := newTestTerminals(t)
	for range maxLiveTerminals {
		startTerm(t, ts, map[string]any{"command": "sleep", "args": []string{"30"}})
	}
	_, err := invoke(t, ts.create, map[string]any{"sessionId": "s1", "command": "true"})
	wantRPCError(t, err, jsonrpc.Internal, "too many terminals")
	ts.releaseSession("s1")
	startTerm(t, ts, map[string]any{"command": "true"})
}
