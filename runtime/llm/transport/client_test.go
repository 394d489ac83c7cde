package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/sse"
)

// TestNewClient: one wire's set-up from a config and its API: the
// endpoint under the base (keeping the base's query), the key header and
// the defaults the configured headers override; Post sends there, or to a
// call's own URL, and hands the decoder the configured answer cap.
func TestNewClient(t *testing.T) {
	type seen struct {
		path, query string
		header      http.Header
	}
	got := make(chan seen, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.Path, r.URL.RawQuery, r.Header.Clone()}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
	}))
	defer srv.Close()
	api := API{BaseURL: "http://unused.invalid/v1", KeyHeader: "x-key", KeyPrefix: "K ",
		Headers: map[string]string{"x-version": "1", "x-beta": "b"}}
	cfg := Config{BaseURL: srv.URL + "/v1?token=T", APIKey: testKey, Timeout: 5 * time.Second, MaxAnswerBytes: 77,
		Headers: map[string]string{"X-Version": "2", "X-Extra": "e"}}
	c := NewClient(cfg, api, "/chat")
	if c.Base != cfg.BaseURL || c.Conn.URL != srv.URL+"/v1/chat?token=T" {
		t.Fatalf("base %q, url %q", c.Base, c.Conn.URL)
	}
	decode := func(r io.Reader, maxAnswer int, _ func(llm.Delta) error) (*llm.Response, error) {
		if maxAnswer != 77 {
			return nil, fmt.Errorf("maxAnswer %d", maxAnswer)
		}
		_, err := io.Copy(io.Discard, r)
		return &llm.Response{}, err
	}
	for _, url := range []string{"", srv.URL + "/v1/models/m:stream?alt=sse"} {
		if _, err := c.Post(context.Background(), url, map[string]string{"a": "b"}, decode, nil); err != nil {
			t.Fatal(err)
		}
		s := <-got
		want := "/v1/chat"
		if url != "" {
			want = "/v1/models/m:stream"
		}
		if s.path != want {
			t.Errorf("posted to %q, want %q", s.path, want)
		}
		h := s.header
		if h.Get("x-key") != "K "+testKey || h.Get("x-version") != "2" || h.Get("x-beta") != "b" || h.Get("x-extra") != "e" {
			t.Errorf("header %v", h)
		}
	}
	if c.Conn.URL != srv.URL+"/v1/chat?token=T" {
		t.Errorf("a call's own URL changed the client's: %q", c.Conn.URL)
	}

	d := NewClient(Config{}, api, "/chat")
	if d.Base != api.BaseURL || d.Conn.URL != api.BaseURL+"/chat" || d.Header.Get("x-key") != "" {
		t.Errorf("defaults: base %q, url %q, header %v", d.Base, d.Conn.URL, d.Header)
	}
}

// TestProvider: a nil request never reaches the wire, and the client's
// secrets are masked in what the wire fails with.
func TestProvider(t *testing.T) {
	c := NewClient(Config{APIKey: testKey}, API{BaseURL: "http://h/v1", KeyHeader: "x-key"}, "/p")
	calls := 0
	p := c.Provider(func(context.Context, *llm.Request, func(llm.Delta) error) (*llm.Response, error) {
		calls++
		return nil, errors.New("the server said " + testKey)
	})
	if _, err := p.Stream(context.Background(), nil, nil); err == nil || calls != 0 {
		t.Fatalf("nil request: err %v after %d calls", err, calls)
	}
	_, err := p.Stream(context.Background(), &llm.Request{}, nil)
	if err == nil || strings.Contains(err.Error(), testKey) || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestMaxTokens(t *testing.T) {
	for _, tt := range []struct{ req, cfg, want int }{{0, 0, 0}, {0, 500, 500}, {100, 500, 100}, {-1, 500, 500}} {
		c := Client{Cfg: Config{MaxTokens: tt.cfg}}
		if got := c.MaxTokens(&llm.Request{MaxTokens: tt.req}); got != tt.want {
			t.Errorf("request %d, config %d: %d, want %d", tt.req, tt.cfg, got, tt.want)
		}
	}
}

func TestReadFailure(t *testing.T) {
	reset := errors.New("connection reset")
	long := fmt.Errorf("reading: %w", sse.ErrLineTooLong)
	for _, tt := range []struct {
		err        error
		want       string
		cut, wraps bool
	}{
		{io.EOF, "llm: stream cut before the end: no [DONE] after 3 chunks", true, false},
		{io.ErrUnexpectedEOF, "llm: stream cut before the end: no [DONE] after 3 chunks", true, false},
		{long, "llm: stream chunk 4: reading: sse: line too long", false, true},
		{reset, "llm: stream cut before the end after 3 chunks: connection reset", true, true},
	} {
		err := ReadFailure(tt.err, 3, "chunk", "[DONE]")
		if err.Error() != tt.want || errors.Is(err, llm.ErrStreamCut) != tt.cut || errors.Is(err, tt.err) != tt.wraps {
			t.Errorf("%v: %q (cut %v)", tt.err, err, errors.Is(err, llm.ErrStreamCut))
		}
	}
}

func TestStreamErrors(t *testing.T) {
	syntax := errors.New("bad")
	for _, tt := range []struct {
		err  error
		want string
	}{
		{MalformedJSON("stream event 2 (x)", syntax, "{"), `llm: malformed JSON in stream event 2 (x): bad (data: "{")`},
		{MalformedJSON("stream chunk 2", syntax, ""), `llm: malformed JSON in stream chunk 2: bad`},
		{StreamError("", "boom"), "llm: server error in stream: boom"},
		{StreamError("server_error", strings.Repeat("x", 400)), "llm: server error in stream (server_error): " + strings.Repeat("x", 300) + "…"},
	} {
		if tt.err.Error() != tt.want {
			t.Errorf("got %q, want %q", tt.err, tt.want)
		}
	}
	if errors.Is(MalformedJSON("x", syntax, ""), syntax) {
		t.Error("a syntax error must not be wrapped")
	}
}

// TestForward: what fits the cap is kept and shown, the cap's error comes
// after it, and the consumer's own error wins.
func TestForward(t *testing.T) {
	c := NewAnswerCap(5)
	var buf strings.Builder
	var shown []string
	show := func(d llm.Delta) error {
		if d.Kind != llm.DeltaThinking {
			t.Errorf("kind %v", d.Kind)
		}
		shown = append(shown, d.Text)
		return nil
	}
	if err := c.Forward(&buf, llm.DeltaThinking, "", show); err != nil || len(shown) != 0 {
		t.Fatalf("empty: %v, %q", err, shown)
	}
	if err := c.Forward(&buf, llm.DeltaThinking, "abc", show); err != nil {
		t.Fatal(err)
	}
	if err := c.Forward(&buf, llm.DeltaThinking, "def", show); !errors.Is(err, ErrAnswerCap) {
		t.Fatalf("past the cap: %v", err)
	}
	if buf.String() != "abcde" || strings.Join(shown, "|") != "abc|de" {
		t.Fatalf("kept %q, shown %q", buf.String(), shown)
	}
	if err := c.Forward(&buf, llm.DeltaThinking, "g", show); !errors.Is(err, ErrAnswerCap) || len(shown) != 2 {
		t.Fatalf("full: %v, %q", err, shown)
	}
	stop := errors.New("stop")
	if err := NewAnswerCap(1).Forward(&buf, llm.DeltaText, "xy", func(llm.Delta) error { return stop }); err != stop {
		t.Fatalf("consumer error: %v", err)
	}
}
