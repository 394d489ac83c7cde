package gemini

import (
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/message"
)

// TestRecordedStreams replays Gemini 3 Pro's recorded answers (Vercel ai's
// fixtures, framed as its harness serves them; README.md in
// testdata/recorded): a text answer whose thoughtSignature comes on a last,
// empty text part, and function calls carrying their signatures.
func TestRecordedStreams(t *testing.T) {
	for _, tc := range []struct {
		file                 string
		text, sigStart, name string
		sigLen               int
		output               int64
	}{
		{"google-text.chunks.txt", "There are **3** \"r\"s in strawberry.\n\nst**r**awbe**rr**y", "EqsFCqgFAb", "", 916, 23 + 185},
		{"google-tool-call-gemini3.chunks.txt", "", "EpEgCo4gAb", "weather", 5488, 15 + 804},
		{"google-tool-call.chunks.txt", "", "EqUCCqICAb", "weather", 396, 15 + 45},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := wiretest.Frame(t, wiretest.ReadFile(t, "testdata/recorded/"+tc.file), wiretest.Framing{})
			p := New(Config{BaseURL: wiretest.ServeBytes(t, body), Timeout: 5 * time.Second})
			ds, resp, err := wiretest.Collect(t, p, geminiRequest())
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Content) != 1 {
				t.Fatalf("content = %#v", resp.Content)
			}
			b := resp.Content[0]
			var shown string
			for _, d := range ds {
				shown += d.Text
			}
			if b.Text != tc.text || shown != tc.text || b.Signature == nil || !strings.HasPrefix(*b.Signature, tc.sigStart) || len(*b.Signature) != tc.sigLen {
				t.Errorf("block = %.200v", b)
			}
			stop := event.StopEndTurn
			if tc.name != "" {
				stop = llm.StopToolUse
				if b.Type != message.TypeToolUse || b.Name != tc.name || b.Arguments != `{"location":"San Francisco"}` || !strings.HasPrefix(b.ID, "call_") {
					t.Errorf("call = %.200v", b)
				}
			}
			if resp.StopReason != stop || resp.Usage.OutputTokens != tc.output {
				t.Errorf("stop %q, usage %+v", resp.StopReason, resp.Usage)
			}
			// The signature goes back on the part it came with.
			req := geminiRequest()
			req.Messages = append(req.Messages, message.Message{Role: message.RoleAssistant, Content: resp.Content})
			wr, err := buildGMRequest(req, 0, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			parts := wr.Contents[1].Parts
			if len(parts) != 1 || parts[0].Thought || parts[0].ThoughtSignature != *b.Signature || parts[0].Text != tc.text {
				t.Errorf("sent back as %.200v", parts)
			}
		})
	}
}

// TestRecordedRawError: the stream of vercel/ai issue 5217 as Gemini sent
// it: text, a finishReason, then a bare pretty-printed error object. It is
// the 503 it says, retried like one, not a one-word answer.
func TestRecordedRawError(t *testing.T) {
	body := wiretest.ReadFile(t, "testdata/recorded/vercel-ai-issue-5217.sse")
	p := New(Config{BaseURL: wiretest.ServeBytes(t, body), APIKey: gmTestKey, Timeout: 5 * time.Second})
	_, _, err := wiretest.Collect(t, p, geminiRequest())
	wiretest.CheckErrorClass(t, err, wiretest.ErrCase{Contains: "HTTP 503: UNAVAILABLE: The model is overloaded. Please try again later.",
		Retryable: true, Status: 503}, gmTestKey)
}
