package transport_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/anthropic"
	"github.com/openheim/openheim/runtime/llm/gemini"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/openai"
	"github.com/openheim/openheim/runtime/llm/responses"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/llm/transport"
	"github.com/openheim/openheim/runtime/message"
)

// What every streaming wire must do alike, checked on each of them.

// userRequest is a one-message request for model.
func userRequest(model string) *llm.Request {
	return &llm.Request{Model: model, System: "be brief",
		Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}}}
}

// capWire starts the fake server for one wire with a client capped at limit.
type capWire struct {
	name  string
	setup func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, llm.Provider, *llm.Request)
}

var capWires = []capWire{
	{"openai", func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, llm.Provider, *llm.Request) {
		srv := wiretest.Fake(t, r)
		return srv, openai.New(openai.Config{BaseURL: srv.URL(), MaxAnswerBytes: limit, Timeout: 5 * time.Second}), userRequest("gpt-test")
	}},
	{"anthropic", func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, llm.Provider, *llm.Request) {
		srv := wiretest.Fake(t, r)
		return srv, anthropic.New(anthropic.Config{BaseURL: srv.URL(), MaxAnswerBytes: limit, Timeout: 5 * time.Second}), userRequest("claude-test")
	}},
	{"gemini", func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, llm.Provider, *llm.Request) {
		srv := wiretest.Fake(t, r)
		base := strings.TrimSuffix(srv.URL(), "/v1") + "/v1beta"
		return srv, gemini.New(gemini.Config{BaseURL: base, MaxAnswerBytes: limit, Timeout: 5 * time.Second}), userRequest("gemini-test")
	}},
	{"responses", func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, llm.Provider, *llm.Request) {
		srv := wiretest.Fake(t, r)
		return srv, responses.New(responses.Config{BaseURL: srv.URL(), MaxAnswerBytes: limit, Timeout: 5 * time.Second}), userRequest("gpt-5")
	}},
}

// TestAnswerCapWires streams far more than the cap on every wire. The reply
// hangs before its end marker, so a client that read on past the cap would
// wait for the idle timeout and fail: the call ending at once, as
// max_tokens with exactly the kept prefix, shows the stream was closed.
func TestAnswerCapWires(t *testing.T) {
	const limit = 1000
	piece := "ab€ " // 6 bytes, a 3-byte rune among them
	var text []string
	for range 2000 {
		text = append(text, piece)
	}
	full := strings.Repeat(piece, 2000)
	replies := map[string]llmtest.Reply{
		"text":              {Text: text, Hang: true},
		"thinking and text": {Thinking: []string{strings.Repeat("t", 600)}, Text: text, Hang: true, Signature: "sig"},
	}
	for _, w := range capWires {
		for name, reply := range replies {
			t.Run(w.name+"/"+name, func(t *testing.T) {
				srv, p, req := w.setup(t, limit, reply)
				start := time.Now()
				deltas, resp, err := wiretest.Collect(t, p, req)
				if err != nil {
					t.Fatalf("err = %v after %v", err, time.Since(start))
				}
				if resp.StopReason != event.StopMaxTokens {
					t.Errorf("stop = %q", resp.StopReason)
				}
				var streamed strings.Builder
				for _, d := range deltas {
					streamed.WriteString(d.Text)
				}
				kept := answerText(resp)
				if len(kept) > limit || len(kept) < limit-3 || !utf8.ValidString(kept) || kept != streamed.String() {
					t.Errorf("kept %d bytes (valid %v), streamed %d", len(kept), utf8.ValidString(kept), streamed.Len())
				}
				if reply.Thinking == nil && !strings.HasPrefix(full, kept) {
					t.Errorf("kept text is not the start of the answer: %q", kept[:40])
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests", n)
				}
			})
		}
	}
}

// TestAnswerCapToolArguments: arguments count against the cap too, whether
// they stream in fragments (OpenAI, Anthropic) or arrive whole (Gemini).
func TestAnswerCapToolArguments(t *testing.T) {
	const limit = 2000
	big := `{"content":"` + strings.Repeat("x", 50000) + `"}`
	reply := llmtest.Reply{Text: []string{"writing"},
		ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "write_file", Arguments: big, Split: 400}}}
	for _, w := range capWires {
		t.Run(w.name, func(t *testing.T) {
			_, p, req := w.setup(t, limit, reply)
			_, resp, err := wiretest.Collect(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != event.StopMaxTokens {
				t.Errorf("stop = %q", resp.StopReason)
			}
			total := 0
			for _, b := range resp.Content {
				total += len(b.Text) + len(b.Thinking) + len(b.Arguments)
			}
			if total > limit || answerText(resp) != "writing" {
				t.Errorf("kept %d bytes: %+v", total, resp.Content)
			}
		})
	}
}

// TestAnswerCapUnderLimit: an answer within the cap is untouched, and the
// retry wrapper passes a capped answer through as a result.
func TestAnswerCapUnderLimit(t *testing.T) {
	for _, w := range capWires {
		t.Run(w.name, func(t *testing.T) {
			srv, p, req := w.setup(t, 12, llmtest.Reply{Text: []string{"hello ", "world!"}})
			_, resp, err := wiretest.Collect(t, retry.Wrap(p, wiretest.FastPolicy), req)
			if err != nil || resp.StopReason != event.StopEndTurn || answerText(resp) != "hello world!" || len(srv.Requests()) != 1 {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
		})
	}
}

func answerText(resp *llm.Response) string {
	var b strings.Builder
	for _, blk := range resp.Content {
		if blk.Type == message.TypeText {
			b.WriteString(blk.Text)
		}
		if blk.Type == message.TypeThinking {
			b.WriteString(blk.Thinking)
		}
	}
	return b.String()
}

// TestBaseQueryEveryKind: an api_base carrying its token in the query (a
// gateway's habit) reaches the fake server with the path joined before the
// query, for every wire; and when the gateway answers 401 echoing the
// request (URL and headers), the error shows none of the client's secrets.
func TestBaseQueryEveryKind(t *testing.T) {
	const (
		qtok = "qtok-4f8a9b2c7d1e"
		hval = "hdr-secret-55aa77"
		key  = "sk-kind-key-991122"
	)
	headers := map[string]string{"X-Gateway-Token": hval}
	srv := llmtest.New()
	defer srv.Close()
	base := srv.URL() + "?token=" + qtok
	gmBase := strings.TrimSuffix(srv.URL(), "/v1") + "/v1beta?token=" + qtok
	for _, c := range []struct {
		name, path, query string
		p                 llm.Provider
	}{
		{"openai", "/v1/chat/completions", "token=" + qtok, openai.New(transport.Config{BaseURL: base, APIKey: key, Headers: headers, Timeout: 5 * time.Second})},
		{"anthropic", "/v1/messages", "token=" + qtok, anthropic.New(transport.Config{BaseURL: base, APIKey: key, Headers: headers, Timeout: 5 * time.Second})},
		{"gemini", "/v1beta/models/gpt-test:streamGenerateContent", "token=" + qtok + "&alt=sse", gemini.New(transport.Config{BaseURL: gmBase, APIKey: key, Headers: headers, Timeout: 5 * time.Second})},
		{"responses", "/v1/responses", "token=" + qtok, responses.New(transport.Config{BaseURL: base, APIKey: key, Headers: headers, Timeout: 5 * time.Second})},
	} {
		srv.Enqueue(llmtest.Reply{Text: []string{"ok"}}, llmtest.Reply{Status: 401, EchoRequest: true})
		if _, _, err := wiretest.Collect(t, c.p, userRequest("gpt-test")); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		reqs := srv.Requests()
		got := reqs[len(reqs)-1]
		if got.Path != c.path || got.Query != c.query {
			t.Errorf("%s: request went to %s?%s, want %s?%s", c.name, got.Path, got.Query, c.path, c.query)
		}
		_, _, err := wiretest.Collect(t, c.p, userRequest("gpt-test"))
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("%s: want the 401, got %v", c.name, err)
		}
		for _, s := range []string{qtok, hval, key} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error shows %q: %v", c.name, s, err)
			}
		}
	}
}
