package llm

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

func TestAnswerCapTake(t *testing.T) {
	tests := []struct {
		limit      int
		in         []string
		want       string
		wantCapped bool
	}{
		{10, []string{"abc", "def"}, "abcdef", false},
		{6, []string{"abc", "def"}, "abcdef", false},
		{5, []string{"abc", "def"}, "abcde", true},
		{4, []string{"héllo"}, "hél", true}, // é is 2 bytes: "hél" is 4
		{2, []string{"hé"}, "h", true},      // no half rune
		{3, []string{"ab", "€"}, "ab", true},
		{-1, []string{strings.Repeat("x", 1000)}, strings.Repeat("x", 1000), false},
	}
	for _, tt := range tests {
		c := newAnswerCap(tt.limit)
		var got strings.Builder
		capped := false
		for _, s := range tt.in {
			kept, err := c.take(s)
			got.WriteString(kept)
			if err != nil {
				capped = true
				break
			}
		}
		if got.String() != tt.want || capped != tt.wantCapped {
			t.Errorf("limit %d, %q: got %q capped=%v, want %q capped=%v", tt.limit, tt.in, got.String(), capped, tt.want, tt.wantCapped)
		}
	}
	if c := newAnswerCap(0); c.limit != DefaultMaxAnswerBytes {
		t.Errorf("zero limit = %d", c.limit)
	}
}

// capWire starts the fake server for one wire with a client capped at limit.
type capWire struct {
	name  string
	setup func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, Provider, *Request)
}

var capWires = []capWire{
	{"openai", func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, Provider, *Request) {
		srv, p := setup(t, OpenAIConfig{MaxAnswerBytes: limit, Timeout: 5 * time.Second}, r)
		return srv, p, simpleRequest()
	}},
	{"anthropic", func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, Provider, *Request) {
		srv, p := setupAn(t, AnthropicConfig{MaxAnswerBytes: limit, Timeout: 5 * time.Second}, r)
		return srv, p, anRequestFor(userMsg("hi"))
	}},
	{"gemini", func(t *testing.T, limit int, r llmtest.Reply) (*llmtest.Server, Provider, *Request) {
		srv, p := geminiSetup(t, GeminiConfig{MaxAnswerBytes: limit, Timeout: 5 * time.Second}, r)
		return srv, p, geminiRequest()
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
				deltas, resp, err := collect(t, p, req)
				if err != nil {
					t.Fatalf("err = %v after %v", err, time.Since(start))
				}
				if resp.StopReason != StopMaxTokens {
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
			_, resp, err := collect(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != StopMaxTokens {
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
			_, resp, err := collect(t, WithRetry(p, fastPolicy), req)
			if err != nil || resp.StopReason != StopEndTurn || answerText(resp) != "hello world!" || len(srv.Requests()) != 1 {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
		})
	}
}

func answerText(resp *Response) string {
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
