package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/redact"
	"github.com/openheim/openheim/runtime/session"
)

// TestChunkSplitSecretMasked: a model that streams the config's key in
// pieces (each harmless on its own, so no front end's per-chunk redaction
// sees it) reaches the turn's stream masked; the rest of the answer, and
// its order against the other events, is as streamed.
func TestChunkSplitSecretMasked(t *testing.T) {
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	key := "sk-proj-9f8e7d6c5b4a"
	srv.Enqueue(llmtest.Reply{Thinking: []string{"the key is sk-pro", "j-9f8e7d6c5b4a, hm"}, Text: []string{"Your key: sk-", "proj-9f8e", "7d6c5b4a. And sk-", "pr"}})
	cfg := load(t, "[providers.local]\napi_base = \""+srv.URL()+"\"\napi_key = \""+key+"\"\ndefault_model = \"m\"\n")
	store, err := session.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Config: cfg, Store: store}
	var evs []event.Event
	_, end, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("what is my key?")},
		Sink: event.SinkFunc(func(ev event.Event) { evs = append(evs, ev) })})
	if err != nil || end.Err != nil {
		t.Fatalf("%v %v", err, end.Err)
	}
	var text, thought strings.Builder
	lastChunk, committed := -1, -1
	for i, ev := range evs {
		switch ev.Kind {
		case event.AgentMessageChunk:
			text.WriteString(ev.Content.Text)
			lastChunk = i
		case event.AgentThoughtChunk:
			thought.WriteString(ev.Content.Text)
		case event.Committed:
			if len(ev.Messages) > 0 && ev.Messages[0].Role == message.RoleAssistant {
				committed = i
			}
		}
	}
	if got := text.String(); got != "Your key: "+redact.Marker+". And sk-pr" {
		t.Errorf("answer streamed as %q", got)
	}
	if got := thought.String(); got != "the key is "+redact.Marker+", hm" {
		t.Errorf("thought streamed as %q", got)
	}
	if committed < 0 || lastChunk > committed {
		t.Errorf("the answer's last chunk (event %d) came after its commit (event %d)", lastChunk, committed)
	}
}
