package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/openheim/openheim/runtime/atomicfile"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/redact"
)

// Recorder wraps a Provider and writes every reply it returns, with the
// conversation it answered, into a replay cassette: capture a real run once,
// replay it offline in CI forever. Only messages and replies are written:
// never the system prompt, headers or keys; and the file passes the
// config's redactor, so a secret a tool printed or the model repeated is
// masked too (cassettes get committed to repositories).
type Recorder struct {
	p    llm.Provider
	path string
	red  *redact.Redactor

	mu sync.Mutex
	c  Cassette
}

// NewRecorder returns a provider that records p's replies into the cassette
// at path, replacing any file there, with red's secrets masked (nil: none).
// The file is rewritten (atomically) after every reply, so a run that is
// cut short keeps what it got.
func NewRecorder(p llm.Provider, path string, red *redact.Redactor) (*Recorder, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	r := &Recorder{p: p, path: path, red: red, c: Cassette{Version: 1, Replies: []CassetteReply{}}}
	return r, r.save()
}

// Stream implements llm.Provider.
func (r *Recorder) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	var stream []CassetteDelta
	resp, err := r.p.Stream(ctx, req, func(d llm.Delta) error {
		switch d.Kind {
		case llm.DeltaThinking:
			stream = append(stream, CassetteDelta{Thinking: d.Text})
		case llm.DeltaText:
			stream = append(stream, CassetteDelta{Text: d.Text})
		}
		if onDelta == nil {
			return nil
		}
		return onDelta(d)
	})
	if err != nil {
		return resp, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c.Replies = append(r.c.Replies, CassetteReply{
		Request:    &CassetteRequest{Messages: append([]message.Message(nil), req.Messages...)},
		Content:    resp.Content,
		Stream:     stream,
		StopReason: resp.StopReason,
		Usage:      resp.Usage,
	})
	if err := r.save(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return resp, nil
}

// save writes the cassette; the caller holds r.mu (or owns r).
func (r *Recorder) save() error {
	data, err := json.MarshalIndent(r.c, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(r.path, append(r.red.Bytes(data), '\n'), 0o600)
}
