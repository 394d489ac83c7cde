package openai

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// BenchmarkOpenAIStream measures a whole streamed call against the fake
// server and reports the cost per chunk (HTTP, SSE framing, JSON decode,
// accumulation; the fake server's encoding shares the same 2 cores).
func BenchmarkOpenAIStream(b *testing.B) {
	const chunks = 1000
	text := make([]string, chunks)
	for i := range text {
		text[i] = "token "
	}
	reply := llmtest.Reply{Text: text, Usage: &llmtest.Usage{Prompt: 10, Completion: chunks}}
	srv := llmtest.New()
	defer srv.Close()
	p := New(Config{BaseURL: srv.URL(), Timeout: 10 * time.Second})
	req := simpleRequest()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv.Enqueue(reply)
		b.StartTimer()
		resp, err := p.Stream(context.Background(), req, func(llm.Delta) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Content[0].Text) != chunks*len("token ") {
			b.Fatalf("text length %d", len(resp.Content[0].Text))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}

// BenchmarkDecodeOAStream isolates the client's decode cost from HTTP and
// the server, on a pre-rendered stream.
func BenchmarkDecodeOAStream(b *testing.B) {
	const chunks = 1000
	var sb strings.Builder
	for i := 0; i < chunks; i++ {
		sb.WriteString(`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1764460800,"model":"m","choices":[{"index":0,"delta":{"content":"token "},"finish_reason":null}]}` + "\n\n")
	}
	sb.WriteString("data: [DONE]\n\n")
	stream := sb.String()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := decodeOAStream(io.Reader(strings.NewReader(stream)), 0, func(llm.Delta) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}
