package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
)

// TestInvalidReported: every message that is not valid JSON-RPC, and every
// response to an id the peer never used, reaches WithInvalid (and is still
// answered as the spec says); valid messages do not.
func TestInvalidReported(t *testing.T) {
	pr, rw := io.Pipe()
	rr, pw := io.Pipe()
	var mu sync.Mutex
	var bad []string
	p := NewPeer(NewLineStream(pr, pw, closers{pr, pw}), echoHandler(), WithLogger(quiet),
		WithInvalid(func(raw json.RawMessage, err error) {
			mu.Lock()
			bad = append(bad, string(raw)+" => "+err.Error())
			mu.Unlock()
		}))
	runPeer(t, context.Background(), p)
	t.Cleanup(func() { rw.Close(); rr.Close() })
	pong := make(chan struct{})
	go func() { // the peer's answers, read as they come (the pipes do not buffer)
		answers := bufio.NewScanner(rr)
		for answers.Scan() {
			if strings.Contains(answers.Text(), `"id":"ping"`) {
				close(pong)
			}
		}
	}()
	for _, in := range []string{`{bad json`, `42`, `[]`, `{"jsonrpc":"1.0","id":7,"method":"echo"}`,
		`{"jsonrpc":"2.0","method":"note","params":{}}`, `{"jsonrpc":"2.0","id":99,"result":1}`,
		`{"jsonrpc":"2.0","id":"ping","method":"nil"}`} {
		io.WriteString(rw, in+"\n")
	}
	<-pong
	mu.Lock()
	defer mu.Unlock()
	if len(bad) != 5 || !strings.Contains(bad[0], "{bad json => ") || !strings.Contains(bad[4], "id 99") {
		t.Errorf("reported:\n%s", strings.Join(bad, "\n"))
	}
}
