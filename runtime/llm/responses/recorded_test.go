package responses

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	turnevent "github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/message"
)

// recorded is what one recorded response must decode to; texts are
// checked by start, end and length.
type recorded struct {
	file                string
	segment             int // which response of a file that holds several
	textStart, textEnd  string
	textLen             int
	thinkStart          string
	thinkLen            int
	sigStart            string
	sigLen              int
	calls               []message.Block
	stop                turnevent.StopReason
	input, read, output int64
}

func call(id, name, args string) message.Block {
	return message.Block{Type: message.TypeToolUse, ID: id, Name: name, Arguments: args}
}

// The recorded streams of testdata/recorded (sources in README.md there):
// OpenAI's API (a four-step tool loop of gpt-5.1-codex-max with summaries
// and encrypted reasoning, store false; two messages of one response),
// GitHub Copilot's (item ids changing on every event) and LM Studio's
// (raw reasoning_text, arguments only in the done event).
var recordedCases = []recorded{
	{file: "openai-reasoning-encrypted-content.1.chunks.txt", segment: 0,
		thinkStart: "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7", thinkLen: 163, sigStart: "gAAAAABpPDIV", sigLen: 1060,
		calls: []message.Block{call("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator", `{"a":12,"b":7,"op":"add"}`)},
		stop:  llm.StopToolUse, input: 134, output: 28},
	{file: "openai-reasoning-encrypted-content.1.chunks.txt", segment: 1,
		calls: []message.Block{call("call_Q6pW65MUgW9vF59BmItYGos3", "calculator", `{"a":19,"b":3,"op":"multiply"}`)},
		stop:  llm.StopToolUse, input: 221, output: 26},
	{file: "openai-reasoning-encrypted-content.1.chunks.txt", segment: 3, textStart: "The final result is **570**.", textLen: 28,
		stop: turnevent.StopEndTurn, input: 299, output: 12},
	{file: "openai-phase.1.chunks.txt", textStart: "Got it — I’ll quickly check reliable", textEnd: "morning brief with timestamps.", textLen: 157 + 1491,
		stop: turnevent.StopEndTurn, input: 7112 - 3072, read: 3072, output: 463},
	{file: "github-copilot-id-rotation.1.chunks.txt", textStart: "There are **3** letter **“r”**s in", textEnd: "at positions **3, 8, and 9**.", textLen: 146,
		thinkStart: "**Counting character occurrences**", thinkLen: 34, stop: turnevent.StopEndTurn, input: 19, output: 105},
	{file: "lmstudio-tool-call.1.chunks.txt", textStart: "I'll get the current weather information for San Francisco for you.", textLen: 67,
		thinkStart: "The user is asking for the weather in San Francisco.", thinkLen: 242,
		calls: []message.Block{call("call_2025306790300011", "weather", `{"location":"San Francisco"}`)},
		stop:  llm.StopToolUse, input: 180, read: 2, output: 61},
}

// segment is response number n of a fixture holding several, one after
// the other (each starts with response.created), its lines unchanged.
func segment(t *testing.T, chunks []byte, n int) []byte {
	var segs [][]byte
	for _, line := range bytes.SplitAfter(chunks, []byte("\n")) {
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Type == "response.created" {
			segs = append(segs, nil)
		}
		if len(segs) > 0 {
			segs[len(segs)-1] = append(segs[len(segs)-1], line...)
		}
	}
	if n >= len(segs) {
		t.Fatalf("no response %d in the fixture", n)
	}
	return segs[n]
}

// TestRecordedStreams replays each recorded response twice: framed as
// Vercel ai's harness serves its fixtures (data lines only, then [DONE])
// and as the API sends them (an event: line naming each type).
func TestRecordedStreams(t *testing.T) {
	for _, tc := range recordedCases {
		chunks := segment(t, wiretest.ReadFile(t, "testdata/recorded/"+tc.file), tc.segment)
		for name, f := range map[string]wiretest.Framing{"harness": {Done: true}, "api": {Named: true}} {
			t.Run(tc.file+"/"+name, func(t *testing.T) {
				checkRecorded(t, tc, wiretest.Frame(t, chunks, f))
			})
		}
	}
}

func checkRecorded(t *testing.T, tc recorded, body []byte) {
	t.Helper()
	p := New(Config{BaseURL: wiretest.ServeBytes(t, body), Timeout: 5 * time.Second})
	ds, resp, err := wiretest.Collect(t, p, llmRequest("gpt-5.1-codex-max", user("hi")))
	if err != nil {
		t.Fatal(err)
	}
	var text, think, sig, shownText, shownThink string
	var calls []message.Block
	for _, b := range resp.Content {
		switch b.Type {
		case message.TypeText:
			text += b.Text
		case message.TypeThinking:
			think += b.Thinking
			if b.Origin != Origin {
				t.Errorf("thinking block without this wire's origin: %#v", b)
			}
			if b.Signature != nil {
				sig += *b.Signature
			}
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
		t.Errorf("text (%d bytes) = %.80q; shown %d bytes", len(text), text, len(shownText))
	}
	if !strings.HasPrefix(think, tc.thinkStart) || len(think) != tc.thinkLen || shownThink != think {
		t.Errorf("thinking (%d bytes) = %.80q; shown %d bytes", len(think), think, len(shownThink))
	}
	if !strings.HasPrefix(sig, tc.sigStart) || len(sig) != tc.sigLen {
		t.Errorf("encrypted reasoning = %.20q (%d bytes)", sig, len(sig))
	}
	if len(calls) != len(tc.calls) {
		t.Fatalf("calls = %#v", calls)
	}
	for i := range calls {
		if calls[i] != tc.calls[i] {
			t.Errorf("call %d = %#v", i, calls[i])
		}
	}
	if u := resp.Usage; resp.StopReason != tc.stop || u.InputTokens != tc.input || u.CacheReadTokens != tc.read || u.OutputTokens != tc.output {
		t.Errorf("stop %q, usage %+v", resp.StopReason, u)
	}
}

// TestRecordedError: OpenAI's recorded quota failure (an error event, then
// response.failed) is a final error naming the code.
func TestRecordedError(t *testing.T) {
	chunks := wiretest.ReadFile(t, "testdata/recorded/openai-error.1.chunks.txt")
	for name, f := range map[string]wiretest.Framing{"harness": {Done: true}, "api": {Named: true}} {
		t.Run(name, func(t *testing.T) {
			p := New(Config{BaseURL: wiretest.ServeBytes(t, wiretest.Frame(t, chunks, f)), Timeout: 5 * time.Second})
			_, _, err := wiretest.Collect(t, p, llmRequest("gpt-5-nano", user("hi")))
			wiretest.CheckErrorClass(t, err, wiretest.ErrCase{Contains: "(insufficient_quota): You exceeded your current quota"}, testKey)
		})
	}
}
