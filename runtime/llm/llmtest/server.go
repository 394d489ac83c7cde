// Package llmtest is a fake LLM server for tests: OpenAI chat completions,
// Anthropic Messages, Gemini streamGenerateContent and the OpenAI Responses
// API, chosen by the request path. It speaks real SSE over real HTTP on
// 127.0.0.1, so clients are exercised end to end, including the wire quirks
// of compatible servers (CRLF, "data:" without a space, keep-alive
// comments, "error": null, cut connections), and real peers (codex-acp)
// can run turns against it. Other test binaries use it in-process:
//
//	srv := llmtest.New()
//	defer srv.Close()
//	replies, _ := llmtest.LoadScript("testdata/script.json")
//	srv.Enqueue(replies...)
//	// point the client at srv.URL()
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// RecordedRequest is one request as the server received it.
type RecordedRequest struct {
	Method string
	Path   string
	Query  string // the raw query, without "?"
	Header http.Header
	Body   map[string]any // the decoded JSON body; nil if it was not a JSON object
	Raw    []byte
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	ts        *httptest.Server
	done      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	queue   []Reply
	reqs    []RecordedRequest
	hanging int
	models  *models // nil: the default list
}

// Hanging is how many Hang replies have sent all they will send and are
// now blocked: a test can act on a stream known to be mid-way.
func (s *Server) Hanging() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hanging
}

// New starts a server on 127.0.0.1.
func New() *Server {
	s := &Server{done: make(chan struct{})}
	s.ts = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// URL is the base URL to configure a client with; it ends in /v1.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close stops the server, first releasing any Hang or delayed reply (the
// underlying httptest.Server waits for running handlers).
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// Enqueue appends replies; each request consumes the first one.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending is how many scripted replies are still queued.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Reset drops every queued reply, for tests that script as they go.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = nil
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.reqs...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := RecordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &rec.Body)

	// Record before choosing the reply, so a test can inspect the request
	// even when the reply hangs or fails.
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	n := len(s.reqs)
	if isModelsList(r) {
		s.mu.Unlock()
		s.serveModels(w, r)
		return
	}
	wire, ok := wireOf(r.URL.Path)
	if r.Method != http.MethodPost || !ok {
		s.mu.Unlock()
		http.Error(w, "llmtest: only POST .../chat/completions, .../messages, ...:streamGenerateContent and .../responses are served, got "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	if len(s.queue) == 0 {
		s.mu.Unlock()
		http.Error(w, fmt.Sprintf("llmtest: no scripted reply for request %d", n), http.StatusInternalServerError)
		return
	}
	reply := s.queue[0]
	_, hasOpts := rec.Body["stream_options"]
	if wire == WireOpenAI && reply.RejectStreamOptions && hasOpts {
		// Left queued: the client's retry without stream_options gets it.
		s.mu.Unlock()
		writeJSONError(w, http.StatusBadRequest,
			`{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":"stream_options","code":null}}`)
		return
	}
	s.queue = s.queue[1:]
	s.mu.Unlock()

	if !s.sleep(r, reply.DelayMs) {
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		body := reply.ErrorBody
		switch {
		case reply.EchoRequest:
			body = echoBody(r, body)
		case body == "":
			body = defaultErrorBody(wire, reply.Status)
		}
		writeJSONError(w, reply.Status, body)
		return
	}
	s.stream(w, r, wire, reply, rec.Body, n)
}

// echoBody is an error object quoting the request line and headers, after
// extra (the reply's ErrorBody, if any).
func echoBody(r *http.Request, extra string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": strings.TrimSpace(extra + " unauthorized request to " + r.URL.RequestURI()), "headers": r.Header}})
	return string(b)
}

func writeJSONError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// render is the reply in the wire's events, the index of its finish event
// (where a Hang reply stops) and the wire's end marker (nil: none), sent
// last unless the reply is cut.
func render(wire Wire, reply Reply, r *http.Request, body map[string]any, n int) (events []sseEvent, finishAt int, end *sseEvent) {
	model, _ := body["model"].(string)
	switch wire {
	case WireOpenAI:
		includeUsage := false
		if so, ok := body["stream_options"].(map[string]any); ok {
			includeUsage, _ = so["include_usage"].(bool)
		}
		events, finishAt = reply.openaiEvents(fmt.Sprintf("chatcmpl-llmtest-%d", n), model, includeUsage)
		end = &sseEvent{data: "[DONE]"}
	case WireAnthropic:
		events, finishAt = reply.anthropicEvents(fmt.Sprintf("msg_llmtest_%d", n), model)
		end = &sseEvent{name: "message_stop", data: `{"type":"message_stop"}`}
	case WireGemini:
		events, finishAt = reply.geminiEvents(geminiModel(r.URL.Path), n)
	case WireResponses:
		events, finishAt = reply.responsesEvents(n, model)
	}
	return events, finishAt, end
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, wire Wire, reply Reply, body map[string]any, n int) {
	events, finishAt, end := render(wire, reply, r, body, n)

	eol, prefix := "\n", "data: "
	if reply.CRLF {
		eol = "\r\n"
	}
	if reply.NoSpace {
		prefix = "data:"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(i int, ev sseEvent) bool {
		if i > 0 && !s.sleep(r, reply.ChunkDelayMs) {
			return false
		}
		var b strings.Builder
		if reply.KeepAlive && i > 0 {
			b.WriteString(": keep-alive" + eol + eol)
		}
		if ev.name != "" {
			b.WriteString("event: " + ev.name + eol)
		}
		b.WriteString(prefix + ev.data + eol + eol)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}

	for i, ev := range events {
		if reply.CutAfter > 0 && i == reply.CutAfter {
			break
		}
		if reply.Hang && i == finishAt {
			s.mu.Lock()
			s.hanging++
			s.mu.Unlock()
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return
		}
		if !send(i, ev) {
			return
		}
	}
	if reply.CutAfter > 0 {
		// Drop the connection without the end marker, as a crashed
		// server or a severed proxy would.
		panic(http.ErrAbortHandler)
	}
	// A reply that failed mid-stream ends without the wire's end marker.
	if end != nil && reply.ErrorEvent == "" {
		send(len(events), *end)
	}
	if wire == WireGemini && reply.RawError != "" {
		// Gemini and Vertex end a failing stream with a bare JSON
		// object, outside the event-stream format, after its events.
		_, _ = io.WriteString(w, geminiRawError(reply.RawError))
	}
}

// sleep waits ms milliseconds; false if the client left or the server closed.
func (s *Server) sleep(r *http.Request, ms int) bool {
	if ms <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}
