package openai

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

// recordedCase is what a recorded stream must decode to. Long texts are
// checked by their start, end and length.
type recordedCase struct {
	file                string
	textStart, textEnd  string
	textLen             int
	thinkStart          string
	thinkLen            int
	calls               []message.Block
	stop                event.StopReason
	input, output, read int64
}

// The recorded streams of testdata/recorded (README.md there says where
// each comes from): OpenAI's own (openai-python's snapshots, byte for
// byte) and compatible servers' (DeepSeek, Groq, xAI, Moonshot, an
// Anthropic-backed gateway), framed as Vercel ai's test harness serves
// its fixtures.
var recordedCases = []recordedCase{
	{file: "openai-text.sse", textStart: "I'm unable to provide real-time weather updates.", textEnd: "a reliable weather website or a weather app.",
		textLen: 159, stop: event.StopEndTurn, input: 14, output: 30},
	{file: "openai-refusal.sse", textStart: "I'm sorry, I can't assist with that request.", textLen: 44, stop: event.StopRefusal, input: 79, output: 11},
	{file: "openai-max-tokens.sse", textStart: `{"`, textLen: 2, stop: event.StopMaxTokens, input: 79, output: 1},
	{file: "openai-parallel-tools.sse", calls: []message.Block{
		{Type: message.TypeToolUse, ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
		{Type: message.TypeToolUse, ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`}},
		stop: llm.StopToolUse, input: 149, output: 60},
	// DeepSeek: reasoning_content, "usage": null on every chunk and the
	// usage in the finish chunk.
	{file: "deepseek-reasoning.chunks.txt", textStart: `The word "strawberry" contains three "r"s.`, textLen: 42,
		thinkStart: "We need to count the number of", thinkLen: 606, stop: event.StopEndTurn, input: 18, output: 219},
	{file: "deepseek-tool-call.chunks.txt", thinkStart: "The user is asking for the wea", thinkLen: 191,
		calls: []message.Block{{Type: message.TypeToolUse, ID: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", Name: "weather", Arguments: `{"location": "San Francisco"}`}},
		stop:  llm.StopToolUse, input: 19, output: 83, read: 320},
	// Groq: reasoning in "reasoning" (OpenRouter's field, vLLM's newer
	// name, Ollama's), usage beside x_groq.
	{file: "groq-reasoning.chunks.txt", textStart: `The word **"strawberry"** is spelled as`, textEnd: `**Final Answer**: $\boxed{3}$`, textLen: 347,
		thinkStart: "Okay, let me try to figure out", thinkLen: 2972, stop: event.StopEndTurn, input: 17, output: 1107},
	{file: "groq-tool-call.chunks.txt", calls: []message.Block{{Type: message.TypeToolUse, ID: "tk85n1k4m", Name: "weather", Arguments: `{}`}},
		stop: llm.StopToolUse, input: 210, output: 15},
	// xAI: no finish_reason key on most chunks, the call whole in one
	// chunk, usage in a last chunk without choices.
	{file: "xai-tool-call.chunks.txt", thinkStart: "First, the user is asking abou", thinkLen: 1069,
		calls: []message.Block{{Type: message.TypeToolUse, ID: "call_79382389", Name: "weather", Arguments: `{"location":"San Francisco"}`}},
		stop:  llm.StopToolUse, input: 1, output: 26, read: 306},
	// Moonshot (Kimi): no "object", reasoning_content, usage with the finish.
	{file: "moonshotai-stream.chunks.txt", textStart: "Hello!", textLen: 6, thinkStart: "Thinking aloud. ", thinkLen: 16,
		stop: event.StopEndTurn, input: 9, output: 12},
	// A gateway serving Claude over this wire: no usage, the call at index 1.
	{file: "anthropic-compat-tool-call.sse", textStart: "Reading it.", textLen: 11,
		calls: []message.Block{{Type: message.TypeToolUse, ID: "toolu_sanitized", Name: "read_file", Arguments: `{"path": "a.txt"}`}},
		stop:  llm.StopToolUse},
}

// recordedBody is a fixture as it goes on the wire: .sse files byte for
// byte, .chunks.txt framed as their harness does.
func recordedBody(t *testing.T, file string) []byte {
	b := wiretest.ReadFile(t, "testdata/recorded/"+file)
	if strings.HasSuffix(file, ".chunks.txt") {
		return wiretest.Frame(t, b, wiretest.Framing{Done: true})
	}
	return b
}

func TestRecordedStreams(t *testing.T) {
	for _, tc := range recordedCases {
		t.Run(tc.file, func(t *testing.T) {
			checkRecorded(t, tc, recordedBody(t, tc.file))
		})
	}
}

func checkRecorded(t *testing.T, tc recordedCase, body []byte) {
	t.Helper()
	p := New(Config{BaseURL: wiretest.ServeBytes(t, body), Timeout: 5 * time.Second})
	ds, resp, err := wiretest.Collect(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var text, think, shownText, shownThink string
	var calls []message.Block
	for _, b := range resp.Content {
		switch b.Type {
		case message.TypeText:
			text += b.Text
		case message.TypeThinking:
			think += b.Thinking
		case message.TypeToolUse:
			calls = append(calls, b)
		}
	}
	for _, d := range ds {
		if d.Kind == llm.DeltaThinking {
			shownThink += d.Text
		} else {
			shownText += d.Text
		}
	}
	if !strings.HasPrefix(text, tc.textStart) || !strings.HasSuffix(text, tc.textEnd) || len(text) != tc.textLen || shownText != text {
		t.Errorf("text (%d bytes) = %.80q ... %.40q; shown %d bytes", len(text), text, text[max(0, len(text)-40):], len(shownText))
	}
	if !strings.HasPrefix(think, tc.thinkStart) || len(think) != tc.thinkLen || shownThink != think {
		t.Errorf("thinking (%d bytes) = %.40q", len(think), think)
	}
	if len(calls) != len(tc.calls) {
		t.Fatalf("calls = %#v", calls)
	}
	for i := range calls {
		if calls[i] != tc.calls[i] {
			t.Errorf("call %d = %#v", i, calls[i])
		}
	}
	if resp.StopReason != tc.stop {
		t.Errorf("stop = %q", resp.StopReason)
	}
	if u := resp.Usage; u.InputTokens != tc.input || u.OutputTokens != tc.output || u.CacheReadTokens != tc.read {
		t.Errorf("usage = %+v", u)
	}
}

// TestRecordedCompatHabits: the habits of compatible servers, applied to
// a recorded stream, change nothing of what it decodes to: CRLF line ends,
// "data:" without the space, comment lines (OpenRouter's ": OPENROUTER
// PROCESSING", others' ": keep-alive"), "error": null in every chunk, and
// no ids at all.
func TestRecordedCompatHabits(t *testing.T) {
	tc := recordedCases[5] // deepseek-tool-call: reasoning, a split call, usage
	raw := wiretest.ReadFile(t, "testdata/recorded/"+tc.file)
	noIDs := regexp.MustCompile(`"id":"[^"]*",`)
	habits := map[string]func([]byte) []byte{
		"crlf": func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) },
		"data: without space": func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte("data: "), []byte("data:"))
		},
		"comments": func(b []byte) []byte {
			b = append([]byte(": OPENROUTER PROCESSING\n\n"), b...)
			return bytes.ReplaceAll(b, []byte("\n\ndata: "), []byte("\n\n: keep-alive\n\ndata: "))
		},
		"error null": func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`"object":`), []byte(`"error":null,"object":`))
		},
		"no ids": func(b []byte) []byte { return noIDs.ReplaceAll(b, nil) },
	}
	for name, habit := range habits {
		t.Run(name, func(t *testing.T) {
			body := habit(wiretest.Frame(t, raw, wiretest.Framing{Done: true}))
			if name == "no ids" {
				// The call's id goes too: a generated one stands in.
				p := New(Config{BaseURL: wiretest.ServeBytes(t, body), Timeout: 5 * time.Second})
				_, resp, err := wiretest.Collect(t, p, simpleRequest())
				if err != nil || len(resp.Content) != 2 || !strings.HasPrefix(resp.Content[1].ID, "call_") || resp.Content[1].Arguments != tc.calls[0].Arguments {
					t.Fatalf("%#v, %v", resp, err)
				}
				return
			}
			checkRecorded(t, tc, body)
		})
	}
}

// TestOpenAIRefusal: a refusal streamed in delta.refusal is the answer's
// text and ends the call as refusal (it used to end as empty end_turn).
func TestOpenAIRefusal(t *testing.T) {
	_, p := setup(t, Config{}, llmtest.Reply{Refusal: []string{"I can't ", "help with that."}})
	ds, resp, err := wiretest.Collect(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != event.StopRefusal || len(resp.Content) != 1 || resp.Content[0].Text != "I can't help with that." ||
		len(ds) != 2 || ds[0].Kind != llm.DeltaText {
		t.Fatalf("deltas %#v, response %#v", ds, resp)
	}
}
