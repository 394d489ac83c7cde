package sessionsapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/redact"
	"github.com/openheim/openheim/runtime/redact/redacttest"
)

// TestStreamMasksSecrets: with a secret planted in every config field, an
// answer quoting them streams masked, and a turn whose provider answers
// 401 quoting the request and every secret ends in a response.failed that
// shows none of them.
func TestStreamMasksSecrets(t *testing.T) {
	t.Setenv(redacttest.EnvVar, redacttest.EnvKey)
	f := newFixture(t, "", func(o *Options) {
		c := o.Engine.Config
		path := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(path, []byte(redacttest.Config(c.WorkDir, c.Providers["fake"].APIBase)), 0o600)
		cfg, err := config.LoadWith(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Engine.Config = cfg
	})
	f.llm.Enqueue(llmtest.Reply{Text: []string{"the answer: ", redacttest.Known()}},
		llmtest.Reply{Status: 401, EchoRequest: true, ErrorBody: redacttest.Known()})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("hi"), nil)
	s.waitName("response.completed", 1)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("again"), nil)
	failed := s.waitName("response.failed", 1)
	msg, _ := at(failed.Data, "response", "error", "message").(string)
	if !strings.Contains(msg, "HTTP 401") || !strings.Contains(msg, redact.Marker) {
		t.Fatalf("response.failed: %v", failed.Data)
	}
	all, _ := json.Marshal(s.all())
	if leaks := redacttest.Leaks(string(all)); len(leaks) > 0 {
		t.Errorf("the stream shows %v", leaks)
	}
	masked := false
	for _, e := range s.all() {
		if d, _ := e.Data["delta"].(string); e.Name == "response.output_text.delta" && strings.HasPrefix(d, "known: "+redact.Marker) {
			masked = true
		}
	}
	if !masked {
		t.Errorf("the answer's deltas were not masked where they were encoded: %s", all)
	}
}

// TestErrorAnswersMasked: an error answer quoting a secret goes out
// masked; a successful one passes as it is.
func TestErrorAnswersMasked(t *testing.T) {
	red := redact.New("sk-answer-secret-9")
	h := redactErrors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			writeError(w, errorString("cannot open sk-answer-secret-9"))
			return
		}
		writeJSON(w, 200, map[string]string{"content": "sk-answer-secret-9"})
	}), red)
	for path, want := range map[string]string{"/fail": `{"error":{"code":"server_error","message":"cannot open <redacted>"}}`, "/ok": `{"content":"sk-answer-secret-9"}`} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if got := strings.TrimSpace(rec.Body.String()); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
