package wiretest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// Recorded streams from the vendors' SDK repositories (testdata/recorded
// of each wire, sources in its README) are replayed through a real HTTP
// server, so the client under test reads them as it reads a live answer.

// ServeBytes starts a server answering every request with body as an
// event stream, byte for byte, and returns its URL.
func ServeBytes(t *testing.T, body []byte) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// ReadFile reads a recorded stream.
func ReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Framing says how a fixture of one JSON event per line (Vercel ai's
// .chunks.txt) goes on the wire.
type Framing struct {
	// EOL ends each line ("\n" when empty); events end with two.
	EOL string
	// Named writes "event: <type>" (the JSON's "type") before each data
	// line, as the Anthropic and Responses APIs do.
	Named bool
	// Done ends the stream with "data: [DONE]", as Vercel ai's test
	// harness and OpenAI chat do.
	Done bool
}

// Frame turns the non-empty lines of chunks into events, each line's
// bytes unchanged: "data: <line>" as Vercel ai's harness serves them.
func Frame(t *testing.T, chunks []byte, f Framing) []byte {
	t.Helper()
	eol := f.EOL
	if eol == "" {
		eol = "\n"
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(chunks, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if f.Named {
			var ev struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("fixture line %.80s: %v", line, err)
			}
			out.WriteString("event: " + ev.Type + eol)
		}
		out.WriteString("data: ")
		out.Write(line)
		out.WriteString(eol + eol)
	}
	if f.Done {
		out.WriteString("data: [DONE]" + eol + eol)
	}
	return out.Bytes()
}
