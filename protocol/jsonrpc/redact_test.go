package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/redact"
)

// TestWithRedactorMasksErrors: an error response quoting a secret (in its
// message or its data, a plain error or an *Error) goes out masked; a
// result does not pass the redactor (it may carry a file to write).
func TestWithRedactorMasksErrors(t *testing.T) {
	const secret = "sk-peer-secret-0042"
	h := funcHandler{req: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		switch method {
		case "plain":
			return nil, errors.New("provider said: bad key " + secret)
		case "rpc":
			return nil, &Error{Code: Internal, Message: "failed " + secret, Data: map[string]any{"body": `{"key":"` + secret + `"}`}}
		}
		return map[string]string{"content": secret}, nil
	}}
	pr, rw := io.Pipe()
	rr, pw := io.Pipe()
	p := NewPeer(NewLineStream(pr, pw, closers{pr, pw}), h, WithLogger(quiet), WithRedactor(redact.New(secret)))
	wait := runPeer(t, context.Background(), p)
	defer func() { rw.Close(); rr.Close(); wait() }()
	sc := bufio.NewScanner(rr)
	for i, method := range []string{"plain", "rpc", "result"} {
		io.WriteString(rw, `{"jsonrpc":"2.0","id":`+string(rune('1'+i))+`,"method":"`+method+`"}`+"\n")
		if !sc.Scan() {
			t.Fatal("no answer")
		}
		line := sc.Text()
		masked := !strings.Contains(line, "peer-secret") && strings.Contains(line, redact.Marker)
		if method == "result" {
			if masked || !strings.Contains(line, secret) {
				t.Errorf("a result must pass unchanged: %s", line)
			}
			continue
		}
		if !masked || !strings.Contains(line, `"error"`) {
			t.Errorf("%s: %s", method, line)
		}
	}
}
