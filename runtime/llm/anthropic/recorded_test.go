package anthropic

import (
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/message"
)

// TestRecordedStreams replays the recorded streams of testdata/recorded
// (README.md there): anthropic-sdk-python's fixtures byte for byte (the
// last event of each is stored without its line end, so message_stop is
// cut: the stream is complete after message_delta's stop reason, as the
// SDKs read it) and Vercel ai's, framed with their event names as the API
// sends them.
func TestRecordedStreams(t *testing.T) {
	for _, tc := range []struct {
		file, text, thinkStart, sigStart string
		thinkLen, sigLen                 int
		calls                            []message.Block
		stop                             event.StopReason
		input, output                    int64
	}{
		{file: "basic_response.txt", text: "Hello there!", stop: event.StopEndTurn, input: 11, output: 6},
		{file: "tool_use_response.txt", text: "I'll check the current weather in Paris for you.",
			calls: []message.Block{{Type: message.TypeToolUse, ID: "toolu_01NRLabsLyVHZPKxbKvkfSMn", Name: "get_weather", Arguments: `{"location": "Paris"}`}},
			stop:  llm.StopToolUse, input: 377, output: 65},
		{file: "refusal_response.txt", stop: event.StopRefusal, input: 20, output: 0},
		{file: "stream-a-refusal.sse", text: "Hi", thinkStart: "Simple educational question", thinkLen: 216,
			sigStart: "c3ludGhldGlj", sigLen: 68, stop: event.StopRefusal, input: 28, output: 106},
		{file: "anthropic-text.chunks.txt", text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
			stop: event.StopEndTurn, input: 12, output: 30},
		{file: "anthropic-refusal.chunks.txt", stop: event.StopRefusal, input: 18, output: 5},
		{file: "anthropic-tool-no-args.chunks.txt", text: "I'll update the issue list for you.",
			calls: []message.Block{{Type: message.TypeToolUse, ID: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", Name: "updateIssueList", Arguments: `{}`}},
			stop:  llm.StopToolUse, input: 565, output: 48},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := wiretest.ReadFile(t, "testdata/recorded/"+tc.file)
			if strings.HasSuffix(tc.file, ".chunks.txt") {
				body = wiretest.Frame(t, body, wiretest.Framing{Named: true})
			}
			p := New(Config{BaseURL: wiretest.ServeBytes(t, body), Timeout: 5 * time.Second})
			ds, resp, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
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
			if text != tc.text || shownText != text || !strings.HasPrefix(think, tc.thinkStart) || len(think) != tc.thinkLen || shownThink != think {
				t.Errorf("text %q, thinking %d bytes %.40q", text, len(think), think)
			}
			if !strings.HasPrefix(sig, tc.sigStart) || len(sig) != tc.sigLen {
				t.Errorf("signature %q", sig)
			}
			if len(calls) != len(tc.calls) || (len(calls) > 0 && calls[0] != tc.calls[0]) {
				t.Errorf("calls = %#v", calls)
			}
			if resp.StopReason != tc.stop || resp.Usage.InputTokens != tc.input || resp.Usage.OutputTokens != tc.output {
				t.Errorf("stop %q, usage %+v", resp.StopReason, resp.Usage)
			}
		})
	}
}
