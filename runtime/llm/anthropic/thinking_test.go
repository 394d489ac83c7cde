package anthropic

import (
	"testing"

	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// TestAdaptiveTable: the model names of the vendor's SDK (anthropic-sdk-go
// Model constants) and their gateway spellings get the form they accept.
func TestAdaptiveTable(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-opus-4-6": true, "claude-sonnet-4-6": true, "claude-opus-4-7": true, "claude-opus-4-8": true,
		"claude-sonnet-5": true, "claude-fable-5": true, "claude-mythos-5": true, "claude-mythos-preview": true,
		"anthropic/claude-opus-4.6": true, "us.anthropic.claude-sonnet-4-6": true, "claude-opus-4-7@20260101": true,
		"Claude-Opus-4-6":  true,
		"claude-haiku-4-5": false, "claude-haiku-4-5-20251001": false, "claude-opus-4-5-20251101": false,
		"claude-sonnet-4-5": false, "claude-opus-4-1": false, "claude-opus-4-20250514": false,
		"claude-sonnet-4@20250514": false, "claude-sonnet-4": false, "claude-3-7-sonnet-20250219": false,
		"claude-3-5-haiku-latest": false, "anthropic/claude-3.7-sonnet": false, "claude-2.1": false,
		"anthropic.claude-opus-4-1-20250805-v1:0": false,
		"deepseek-chat": false, "kimi-k2": false, "claude-test": false,
	} {
		if got := takesAdaptive(model); got != want {
			t.Errorf("takesAdaptive(%q) = %v, want %v", model, got, want)
		}
	}
}

// TestAnthropicThinkingForms: what each thinking setting sends, by model,
// with the budget and the override, as the request body on the wire.
func TestAnthropicThinkingForms(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name  string
		cfg   Config
		model string
		want  string // the thinking field as JSON, "" for absent
	}{
		{"adaptive on a recent model", Config{Thinking: "adaptive"}, "claude-opus-4-7", `{"type":"adaptive"}`},
		{"adaptive on an older model", Config{Thinking: "adaptive"}, "claude-sonnet-4-5", `{"type":"enabled","budget_tokens":12000}`},
		{"adaptive with a budget for the older model", Config{Thinking: "adaptive", ThinkingBudget: 4000}, "claude-sonnet-4-5",
			`{"type":"enabled","budget_tokens":4000}`},
		{"budget on a recent model", Config{Thinking: "budget", ThinkingBudget: 2048}, "claude-opus-4-6", `{"type":"enabled","budget_tokens":2048}`},
		{"budget default", Config{Thinking: "budget"}, "claude-opus-4-6", `{"type":"enabled","budget_tokens":12000}`},
		{"budget floor", Config{Thinking: "budget", ThinkingBudget: 10}, "claude-opus-4-6", `{"type":"enabled","budget_tokens":1024}`},
		{"budget above max_tokens", Config{Thinking: "budget", ThinkingBudget: 50000, MaxTokens: 8000}, "claude-opus-4-6",
			`{"type":"enabled","budget_tokens":7999}`},
		{"budget without room", Config{Thinking: "budget", MaxTokens: 1024}, "claude-opus-4-6", ""},
		{"adaptive needs no room", Config{Thinking: "adaptive", MaxTokens: 1024}, "claude-opus-4-6", `{"type":"adaptive"}`},
		{"override true", Config{Thinking: "adaptive", AdaptiveThinking: &yes}, "my-gateway-model", `{"type":"adaptive"}`},
		{"override false", Config{Thinking: "adaptive", AdaptiveThinking: &no}, "claude-opus-4-6", `{"type":"enabled","budget_tokens":12000}`},
		{"override without thinking", Config{AdaptiveThinking: &yes}, "claude-opus-4-6", ""},
		{"off", Config{Thinking: "off"}, "claude-opus-4-7", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := setupAn(t, tt.cfg, llmtest.Reply{Text: []string{"ok"}})
			req := anRequestFor(userMsg("hi"))
			req.Model = tt.model
			if _, _, err := wiretest.Collect(t, p, req); err != nil {
				t.Fatal(err)
			}
			got, has := srv.Requests()[0].Body["thinking"]
			switch {
			case tt.want == "" && has:
				t.Errorf("thinking sent: %v", got)
			case tt.want != "":
				jsonEqual(t, got, tt.want)
			}
		})
	}
}
