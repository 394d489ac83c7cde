//go:build unix

package acptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/protocol/jsonrpc"
)

type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	peer   *jsonrpc.Peer
	exited chan struct{} // closed when Wait has returned
	err    error         // Wait's result, once exited is closed
}

// startProcess starts the fake agent as a real child in its own process
// group, as the host will, and initializes it.
func startProcess(t *testing.T, s acptest.Script) *proc {
	t.Helper()
	name, args, env := acptest.Command(s)
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	})
	p.peer = jsonrpc.NewPeer(jsonrpc.NewLineStream(stdout, p.stdin, nil), nil, jsonrpc.WithLogger(slog.New(slog.DiscardHandler)))
	go p.peer.Run(context.Background())
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res struct{ AgentInfo struct{ Name string } }
	if err := p.peer.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &res); err != nil {
		t.Fatalf("initialize: %v (stderr: %s)", err, p.stderr)
	}
	if res.AgentInfo.Name != acptest.AgentName {
		t.Fatalf("agentInfo %+v", res.AgentInfo)
	}
	return p
}

func (p *proc) alive(t *testing.T, d time.Duration) bool {
	t.Helper()
	select {
	case <-p.exited:
		return false
	case <-time.After(d):
		return true
	}
}

func TestProcessExitsOnEOF(t *testing.T) {
	p := startProcess(t, acptest.Script{Stderr: []string{"some agent noise"}})
	p.stdin.Close()
	if p.alive(t, 10*time.Second) {
		t.Fatal("fake agent still running 10 s after EOF")
	}
	if p.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit code %d, stderr %s", p.cmd.ProcessState.ExitCode(), p.stderr)
	}
	got := acptest.ParseLog(p.stderr.Bytes())
	if len(got) != 1 || got[0].Method != "initialize" || !strings.Contains(string(got[0].Params), `"protocolVersion":1`) {
		t.Fatalf("stderr log %+v from %q", got, p.stderr)
	}
}

func TestProcessIgnoringEOFMustBeKilled(t *testing.T) {
	p := startProcess(t, acptest.Script{IgnoreEOF: true})
	p.stdin.Close()
	if !p.alive(t, 300*time.Millisecond) {
		t.Fatalf("IgnoreEOF agent exited after EOF: %v", p.cmd.ProcessState)
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	if p.alive(t, 10*time.Second) {
		t.Fatal("IgnoreEOF agent survived SIGTERM")
	}
}

func TestProcessIgnoringSIGTERM(t *testing.T) {
	p := startProcess(t, acptest.Script{IgnoreEOF: true, IgnoreSIGTERM: true})
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	if !p.alive(t, 300*time.Millisecond) {
		t.Fatalf("IgnoreSIGTERM agent exited on SIGTERM: %v", p.cmd.ProcessState)
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if p.alive(t, 10*time.Second) {
		t.Fatal("agent survived SIGKILL")
	}
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) {
		t.Fatalf("Wait: %v", p.err)
	}
}

func TestProcessCrashInPrompt(t *testing.T) {
	p := startProcess(t, acptest.Script{CrashInPrompt: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var s struct{ SessionID string }
	if err := p.peer.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{}}, &s); err != nil {
		t.Fatal(err)
	}
	err := p.peer.Call(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{}}, nil)
	if !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("prompt: %v", err)
	}
	if p.alive(t, 10*time.Second) || p.cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("crash exit: %v", p.cmd.ProcessState)
	}
	var recv []string
	for _, r := range acptest.ParseLog(p.stderr.Bytes()) {
		recv = append(recv, r.Method)
	}
	if got, _ := json.Marshal(recv); string(got) != `["initialize","session/new","session/prompt"]` {
		t.Fatalf("received %s", got)
	}
}

// syncBuffer is a bytes.Buffer safe for the exec copier goroutine and the
// test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

func (b *syncBuffer) String() string { return string(b.Bytes()) }
