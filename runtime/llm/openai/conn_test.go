package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

// Timeouts, cancellation, transport failures and secrecy.

func TestOpenAIIdleTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	tests := []struct {
		name    string
		reply   llmtest.Reply
		wantErr string // "" means success
	}{
		{"hang after first chunk", llmtest.Reply{Text: []string{"a"}, Hang: true}, "no data from the server for 200ms (stream idle)"},
		{"slow headers", llmtest.Reply{Text: []string{"a"}, DelayMs: 1500}, "timeout"},
		// 14 chunks 40ms apart: ~550ms in total, well over the timeout, but
		// never 200ms of silence, so it must succeed.
		{"slow but steady", llmtest.Reply{Text: strings.Split("abcdefghijkl", ""), ChunkDelayMs: 40}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := setup(t, Config{Timeout: timeout}, tt.reply)
			start := time.Now()
			_, resp, err := wiretest.Collect(t, p, simpleRequest())
			took := time.Since(start)
			if tt.wantErr == "" {
				if err != nil || resp.Content[0].Text != "abcdefghijkl" {
					t.Fatalf("got %v, %v", resp, err)
				}
				if took < 2*timeout {
					t.Errorf("stream took %v; the test needs it longer than the timeout", took)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if !llm.Retryable(err) {
				t.Errorf("a timeout should be retryable: %v", err)
			}
			if took > timeout+time.Second {
				t.Errorf("timed out after %v", took)
			}
		})
	}
}

func TestOpenAICustomClientIdleTimeout(t *testing.T) {
	// A caller's client has no header timeout of ours; the watchdog covers it.
	_, p := setup(t, Config{Timeout: 200 * time.Millisecond, HTTPClient: &http.Client{}},
		llmtest.Reply{Text: []string{"a"}, DelayMs: 2000})
	_, _, err := wiretest.Collect(t, p, simpleRequest())
	if err == nil || !strings.Contains(err.Error(), "waiting for the response") || !llm.Retryable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenAICancelStopsStream(t *testing.T) {
	srv, p := setup(t, Config{Timeout: time.Minute}, llmtest.Reply{Text: []string{"a"}, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, simpleRequest(), nil)
		done <- err
	}()
	for len(srv.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the first chunk arrive
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || llm.Retryable(err) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
}

func TestOpenAIOnDeltaErrorAborts(t *testing.T) {
	_, p := setup(t, Config{}, llmtest.Reply{Text: []string{"a", "b", "c"}})
	stop := errors.New("consumer gone")
	n := 0
	_, err := p.Stream(context.Background(), simpleRequest(), func(llm.Delta) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("err = %v after %d deltas", err, n)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := New(Config{BaseURL: "http://" + addr + "/v1", APIKey: testKey})
	_, err = p.Stream(context.Background(), simpleRequest(), nil)
	if err == nil || !llm.Retryable(err) || strings.Contains(err.Error(), testKey) {
		t.Fatalf("err = %v (retryable %v)", err, llm.Retryable(err))
	}
}

func TestOpenAICloseBeforeResponse(t *testing.T) {
	// The server accepts, reads the request, and hangs up without answering.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	defer ts.Close()
	_, err := New(Config{BaseURL: ts.URL}).Stream(context.Background(), simpleRequest(), nil)
	if err == nil || !llm.Retryable(err) {
		t.Fatalf("err = %v (retryable %v)", err, llm.Retryable(err))
	}
}

func TestOpenAIKeyNeverInErrors(t *testing.T) {
	echo := `{"error":{"message":"key ` + testKey + ` is over quota"}}`
	replies := []llmtest.Reply{
		{Status: 401, ErrorBody: echo},
		{Status: 429, ErrorBody: echo, RetryAfter: "1"},
		{Status: 500, ErrorBody: strings.Repeat("x", 3000) + testKey},
		{Text: []string{"a"}, Malformed: true},
		{Text: []string{"a"}, CutAfter: 1},
		{Text: []string{"a"}, Hang: true},
	}
	for i, r := range replies {
		_, p := setup(t, Config{APIKey: testKey, Timeout: 200 * time.Millisecond}, r)
		_, _, err := wiretest.Collect(t, p, simpleRequest())
		if err == nil {
			t.Fatalf("reply %d: no error", i)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("reply %d: key in error: %v", i, err)
		}
	}
}

// rawStream is what OpenAI sends for a text + two-call reply, with usage.
const rawStream = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\r\n\r\n" +
	": keep-alive\r\n\r\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"hm\"}}]}\r\n\r\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hé\"}}]}\r\n\r\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"p\\\":\"}}]}}]}\r\n\r\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\",\"function\":{\"name\":\"g\",\"arguments\":\"\"}}]}}]}\r\n\r\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"世\\\"}\"}}]}}]}\r\n\r\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":null}}}\r\n\r\n" +
	"data: [DONE]\r\n\r\n"

func TestDecodeOAStreamSplitEverywhere(t *testing.T) {
	want := &llm.Response{
		Content: []message.Block{{Type: message.TypeThinking, Thinking: "hm"}, message.Text("Hé"),
			{Type: message.TypeToolUse, ID: "c1", Name: "f", Arguments: `{"p":"世"}`},
			{Type: message.TypeToolUse, ID: "c2", Name: "g", Arguments: `{}`}},
		StopReason: llm.StopToolUse, Usage: message.Usage{InputTokens: 9, OutputTokens: 4},
	}
	for i := 0; i <= len(rawStream); i++ {
		r := io.MultiReader(strings.NewReader(rawStream[:i]), iotest.HalfReader(strings.NewReader(rawStream[i:])))
		got, err := decodeOAStream(r, 0, nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: %#v, %v", i, got, err)
		}
	}
}

func TestDecodeOAStreamWholeCallsWithSameIndex(t *testing.T) {
	// Some compatible servers send each call whole, all with index 0.
	s := `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{\"x\":1}"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"delta":{"tool_calls":[{"id":"c","function":{"name":"h","arguments":"{"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}` + "\n\n" +
		"data: [DONE]\n\n"
	resp, err := decodeOAStream(strings.NewReader(s), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range resp.Content {
		got = append(got, b.ID+":"+b.Name+":"+b.Arguments)
	}
	if strings.Join(got, " ") != `a:f:{} b:g:{"x":1} c:h:{}` || resp.StopReason != llm.StopToolUse {
		t.Fatalf("got %v %s", got, resp.StopReason)
	}
}
