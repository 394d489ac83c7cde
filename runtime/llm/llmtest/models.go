package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// models is what GET {base}/models answers (a health check's request).
type models struct {
	status int
	ids    []string
}

// ServeModels sets what GET {base}/models answers: status 200 with ids
// listed (OpenAI's and Anthropic's {"data":[{"id"}]}, or Gemini's
// {"models":[{"name"}]} to a request carrying x-goog-api-key), or another
// status with the wire's error body. By default it lists "fake-model".
// The request is recorded and consumes no scripted reply.
func (s *Server) ServeModels(status int, ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = &models{status: status, ids: ids}
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	m := s.models
	s.mu.Unlock()
	if m == nil {
		m = &models{status: http.StatusOK, ids: []string{"fake-model"}}
	}
	wire := WireOpenAI
	switch {
	case r.Header.Get("x-goog-api-key") != "":
		wire = WireGemini
	case r.Header.Get("x-api-key") != "":
		wire = WireAnthropic
	}
	if m.status != http.StatusOK {
		writeJSONError(w, m.status, defaultErrorBody(wire, m.status))
		return
	}
	var body any
	if wire == WireGemini {
		list := []map[string]string{}
		for _, id := range m.ids {
			list = append(list, map[string]string{"name": "models/" + id})
		}
		body = map[string]any{"models": list}
	} else {
		list := []map[string]string{}
		for _, id := range m.ids {
			list = append(list, map[string]string{"id": id, "object": "model"})
		}
		body = map[string]any{"object": "list", "data": list}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

func isModelsList(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models")
}
