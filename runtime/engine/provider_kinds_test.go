package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

// TestNewProviderResponsesAndThinking: kind openai_responses reaches the
// Responses wire, and the thinking keys reach the wires that read them.
func TestNewProviderResponsesAndThinking(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	cfg := load(t, `
default_provider = "responses"
[providers.responses]
kind = "openai_responses"
api_base = "`+srv.URL()+`"
api_key = "k"
default_model = "gpt-5"
[providers.claude]
kind = "anthropic"
api_base = "`+srv.URL()+`"
api_key = "k"
default_model = "claude-opus-4-7"
thinking = "adaptive"
adaptive_thinking = false
thinking_budget = 2048
`)
	srv.Enqueue(llmtest.Reply{Thinking: []string{"hm"}, Encrypted: "ENC", Text: []string{"ok"}}, llmtest.Reply{Text: []string{"ok"}})
	for _, name := range []string{"responses", "claude"} {
		r, err := cfg.Resolve(name, "")
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewProvider(r)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Stream(context.Background(), &llm.Request{Model: r.Model,
			Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}}}, nil)
		if err != nil || (message.Message{Content: resp.Content}).JoinText() != "ok" {
			t.Fatalf("%s: %#v, %v", name, resp, err)
		}
	}
	reqs := srv.Requests()
	if reqs[0].Path != "/v1/responses" || reqs[0].Body["store"] != false {
		t.Errorf("responses request: %s %s", reqs[0].Path, reqs[0].Raw)
	}
	th, _ := json.Marshal(reqs[1].Body["thinking"])
	if reqs[1].Path != "/v1/messages" || string(th) != `{"budget_tokens":2048,"type":"enabled"}` {
		t.Errorf("anthropic thinking = %s", th)
	}
}
