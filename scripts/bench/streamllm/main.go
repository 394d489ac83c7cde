// Command streamllm is a zero-latency OpenAI-compatible chat-completions
// server for load benchmarks: every POST .../chat/completions streams the
// same text reply of -chunks content deltas as fast as the reader takes them.
// Each delta's text starts with its send time, "[t=<unix ns>] ", so a client
// at the far end of a pipeline can compute delivery latency.
//
// It is a process of its own, not part of the load driver, so the CPU it
// burns is measured apart from the driver's and the two do not share a Go
// scheduler or garbage collector. It prints its base URL (ending in /v1) on
// stdout, serves until SIGINT or SIGTERM, then prints what it served on
// stderr. Unlike runtime/llm/llmtest it is not scripted: every request gets
// the same reply, so any number of sessions can run against it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// StampPrefix starts every delta's text; the unix-nanosecond send time and
// "] " follow. ASCII brackets, because JSON encoders leave them alone while
// some escape <, > and non-ASCII characters.
const StampPrefix = "[t="

// The wire pieces, encoded once. A content chunk is chunkHead, the stamp
// digits, chunkTail. Field order and shape as OpenAI sends them.
const (
	chunkHead  = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764460800,"model":"bench","choices":[{"index":0,"delta":{"content":"` + StampPrefix
	chunkTail  = `] tok "},"finish_reason":null}]}` + "\n\n"
	roleChunk  = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764460800,"model":"bench","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	stopChunk  = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764460800,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	usageChunk = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764460800,"model":"bench","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\n"
	doneEvent  = "data: [DONE]\n\n"
)

type provider struct {
	chunks     int
	flushEvery int
	usage      []byte

	streams  atomic.Int64 // replies finished
	cut      atomic.Int64 // replies the reader abandoned
	sent     atomic.Int64 // content chunks written
	inflight atomic.Int64
	peak     atomic.Int64 // most replies streaming at once
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	chunks := flag.Int("chunks", 200, "content deltas per reply")
	flushEvery := flag.Int("flush-every", 1, "flush the stream every N deltas (1: one write per delta, as a real model streams)")
	flag.Parse()
	if *chunks < 1 || *flushEvery < 1 {
		fmt.Fprintln(os.Stderr, "streamllm: -chunks and -flush-every must be at least 1")
		os.Exit(2)
	}
	p := &provider{chunks: *chunks, flushEvery: *flushEvery,
		usage: fmt.Appendf(nil, usageChunk, *chunks, 20+*chunks)}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamllm:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("http://%s/v1\n", ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	// Streams still running when the benchmark ends are its failures to
	// report, not something to wait for.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	fmt.Fprintf(os.Stderr, "streamllm: %d replies streamed, %d cut short, %d content chunks, at most %d at once\n",
		p.streams.Load(), p.cut.Load(), p.sent.Load(), p.peak.Load())
}

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "streamllm: only POST .../chat/completions is served", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		return
	}
	// The usage chunk only when asked for, as OpenAI does; a byte search is
	// enough for the compact JSON clients send.
	includeUsage := bytes.Contains(body, []byte(`"include_usage":true`))

	n := p.inflight.Add(1)
	defer p.inflight.Add(-1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if !p.stream(w, includeUsage) {
		p.cut.Add(1)
		return
	}
	p.streams.Add(1)
}

// stream writes one reply; false if the reader went away. The stamp is taken
// as each delta is encoded, so time spent waiting for the reader (a full
// socket buffer) counts as delivery latency, as it would with a real model.
func (p *provider) stream(w http.ResponseWriter, includeUsage bool) bool {
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 0, len(chunkHead)+len(chunkTail)+20)
	write := func(b []byte, flush bool) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		if flush && fl != nil {
			fl.Flush()
		}
		return true
	}
	if !write([]byte(roleChunk), true) {
		return false
	}
	for i := 1; i <= p.chunks; i++ {
		buf = append(buf[:0], chunkHead...)
		buf = strconv.AppendInt(buf, time.Now().UnixNano(), 10)
		buf = append(buf, chunkTail...)
		if !write(buf, i%p.flushEvery == 0) {
			return false
		}
		p.sent.Add(1)
	}
	tail := []byte(stopChunk)
	if includeUsage {
		tail = append(tail, p.usage...)
	}
	tail = append(tail, doneEvent...)
	return write(tail, true)
}
