package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

func TestEndpoint(t *testing.T) {
	for _, c := range []struct{ base, path, query, want string }{
		{"http://h/v1", "/chat/completions", "", "http://h/v1/chat/completions"},
		{"http://h/v1/", "/chat/completions", "", "http://h/v1/chat/completions"},
		{"http://h/v1?token=X", "/chat/completions", "", "http://h/v1/chat/completions?token=X"},
		{"http://h/v1/?token=X#frag", "/messages", "", "http://h/v1/messages?token=X"},
		{"http://h/v1beta", "/models/m:streamGenerateContent", "alt=sse", "http://h/v1beta/models/m:streamGenerateContent?alt=sse"},
		{"http://h/v1beta?key=K&x=1", "/models/m:streamGenerateContent", "alt=sse", "http://h/v1beta/models/m:streamGenerateContent?key=K&x=1&alt=sse"},
	} {
		if got := endpoint(c.base, c.path, c.query); got != c.want {
			t.Errorf("endpoint(%q, %q, %q) = %q, want %q", c.base, c.path, c.query, got, c.want)
		}
	}
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
		p                 Provider
	}{
		{"openai", "/v1/chat/completions", "token=" + qtok, NewOpenAI(OpenAIConfig{BaseURL: base, APIKey: key, Headers: headers, Timeout: 5 * time.Second})},
		{"anthropic", "/v1/messages", "token=" + qtok, NewAnthropic(AnthropicConfig{BaseURL: base, APIKey: key, Headers: headers, Timeout: 5 * time.Second})},
		{"gemini", "/v1beta/models/gpt-test:streamGenerateContent", "token=" + qtok + "&alt=sse", NewGemini(GeminiConfig{BaseURL: gmBase, APIKey: key, Headers: headers, Timeout: 5 * time.Second})},
	} {
		srv.Enqueue(llmtest.Reply{Text: []string{"ok"}}, llmtest.Reply{Status: 401, EchoRequest: true})
		if _, _, err := collect(t, c.p, simpleRequest()); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		reqs := srv.Requests()
		got := reqs[len(reqs)-1]
		if got.Path != c.path || got.Query != c.query {
			t.Errorf("%s: request went to %s?%s, want %s?%s", c.name, got.Path, got.Query, c.path, c.query)
		}
		_, _, err := collect(t, c.p, simpleRequest())
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

func TestEmbedBaseQuery(t *testing.T) {
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	for _, c := range []struct{ kind, base, path string }{
		{"openai_compatible", srv.URL() + "?token=qtok-embed-1234", "/v1/embeddings"},
		{"gemini", strings.TrimSuffix(srv.URL(), "/v1") + "/v1beta?token=qtok-embed-1234", "/v1beta/models/m:batchEmbedContents"},
	} {
		e, err := NewEmbedder(EmbedConfig{Kind: c.kind, BaseURL: c.base, Model: "m", APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		reqs := srv.Requests()
		got := reqs[len(reqs)-1]
		if got.Path != c.path || got.Query != "token=qtok-embed-1234" {
			t.Errorf("%s: request went to %s?%s", c.kind, got.Path, got.Query)
		}
	}
}
