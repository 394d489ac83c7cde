//go:build unix

package acp

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

type hostHandler func(context.Context, json.RawMessage) (any, error)

// invoke calls h with params as JSON and returns the result as the peer
// would send it.
func invoke(t *testing.T, h hostHandler, params any) (string, error) {
	t.Helper()
	raw, _ := json.Marshal(params)
	res, err := h(context.Background(), raw)
	if err != nil {
		return "", err
	}
	out, _ := json.Marshal(res)
	return string(out), nil
}

// mustInvoke is invoke that must succeed, decoding the result into into.
func mustInvoke(t *testing.T, h hostHandler, params, into any) string {
	t.Helper()
	out, err := invoke(t, h, params)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(out), into); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
	}
	return out
}

// wantRPCError checks err is a JSON-RPC error with code whose message
// contains every part.
func wantRPCError(t *testing.T, err error, code int, parts ...string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("error %v is not a *jsonrpc.Error", err)
	}
	if rpc.Code != code {
		t.Errorf("code %d, want %d (%v)", rpc.Code, code, err)
	}
	for _, p := range parts {
		if !strings.Contains(rpc.Message, p) {
			t.Errorf("message %q lacks %q", rpc.Message, p)
		}
	}
}

// realTempDir is t.TempDir with symlinks resolved (macOS's /var), as the
// sandbox reports it.
func realTempDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newTestHostFS(t *testing.T) (*hostFS, string) {
	root := realTempDir(t)
	f, err := newHostFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return f, root
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHostFSRead(t *testing.T) {
	f, root := newTestHostFS(t)
	abs := filepath.Join(root, "a.txt")
	writeTestFile(t, abs, "one\ntwo\nthree\nfour")
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"path": abs}, "one\ntwo\nthree\nfour"},
		{map[string]any{"path": "a.txt"}, "one\ntwo\nthree\nfour"},
		{map[string]any{"path": abs, "line": 2, "limit": 2}, "two\nthree\n"},
		{map[string]any{"path": abs, "line": 3}, "three\nfour"},
		{map[string]any{"path": abs, "line": 0, "limit": 1}, "one\n"},
		{map[string]any{"path": abs, "line": 4, "limit": 5}, "four"},
		{map[string]any{"path": abs, "line": 9}, ""},
		{map[string]any{"path": abs, "limit": 0}, ""},
	} {
		c.params["sessionId"] = "s"
		var r ReadTextFileResponse
		if mustInvoke(t, f.readTextFile, c.params, &r); r.Content != c.want {
			t.Errorf("%v: got %q, want %q", c.params, r.Content, c.want)
		}
	}
	for _, c := range []struct {
		params map[string]any
		code   int
		want   string
	}{
		{map[string]any{"path": "missing.txt"}, jsonrpc.ResourceNotFound, "missing.txt"},
		{map[string]any{"path": "a.txt/under-a-file"}, jsonrpc.ResourceNotFound, "a.txt/under-a-file"},
		{map[string]any{"path": root}, jsonrpc.InvalidParams, "not a regular file"},
		{map[string]any{}, jsonrpc.InvalidParams, "path is required"},
		{map[string]any{"path": abs, "line": -1}, jsonrpc.InvalidParams, "negative"},
	} {
		c.params["sessionId"] = "s"
		_, err := invoke(t, f.readTextFile, c.params)
		wantRPCError(t, err, c.code, c.want)
	}
}

func TestHostFSReadRefusesNonText(t *testing.T) {
	f, root := newTestHostFS(t)
	writeTestFile(t, filepath.Join(root, "nul.bin"), "abc\x00def")
	writeTestFile(t, filepath.Join(root, "latin1.txt"), "caf\xe9\n")
	for _, name := range []string{"nul.bin", "latin1.txt"} {
		_, err := invoke(t, f.readTextFile, map[string]any{"sessionId": "s", "path": name})
		wantRPCError(t, err, jsonrpc.InvalidParams, name, "not a text file")
	}
	// Over the limit by one byte (sparse, so cheap to make).
	big := filepath.Join(root, "big.txt")
	writeTestFile(t, big, "")
	if err := os.Truncate(big, hostMaxReadBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err := invoke(t, f.readTextFile, map[string]any{"sessionId": "s", "path": big})
	wantRPCError(t, err, jsonrpc.InvalidParams, "too large")
}

func TestHostFSWrite(t *testing.T) {
	f, root := newTestHostFS(t)
	if out := mustInvoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": filepath.Join(root, "x/y/z.txt"), "content": "héllo\n"}, nil); out != "{}" {
		t.Errorf("result %s, want {}", out)
	}
	if b, err := os.ReadFile(filepath.Join(root, "x/y/z.txt")); err != nil || string(b) != "héllo\n" {
		t.Fatalf("read back %q, %v", b, err)
	}

	// Replacing keeps the mode and leaves no temporary file behind.
	p := filepath.Join(root, "script.sh")
	writeTestFile(t, p, "old")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	mustInvoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": "script.sh", "content": "new"}, nil)
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("mode after write: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if tmp, _ := filepath.Glob(filepath.Join(root, ".*.tmp-*")); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}

	for _, p := range []string{"x", root} {
		_, err := invoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": p, "content": "no"})
		wantRPCError(t, err, jsonrpc.InvalidParams, "not a regular file")
	}
}

func TestHostFSOutsideRoot(t *testing.T) {
	f, root := newTestHostFS(t)
	outside := realTempDir(t)
	secret := filepath.Join(outside, "secret.txt")
	writeTestFile(t, secret, "secret")
	for name, target := range map[string]string{"link": outside, "file-link": secret} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{secret, "../" + filepath.Base(outside) + "/secret.txt", "link/secret.txt", "file-link", "link/new.txt"} {
		_, err := invoke(t, f.readTextFile, map[string]any{"sessionId": "s", "path": p})
		wantRPCError(t, err, jsonrpc.InvalidParams, p, root, "outside")
		_, err = invoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": p, "content": "pwned"})
		wantRPCError(t, err, jsonrpc.InvalidParams, p, root, "outside")
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("the file outside was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("a file was created outside the root")
	}
}

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
