package responses

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	turnevent "github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/transport"
	"github.com/openheim/openheim/runtime/message"
)

// response assembles the call's result from the items in output order:
// reasoning becomes a thinking block carrying the encrypted reasoning as
// its signature (Origin marks it as this wire's), a message a text block,
// a function call a tool_use block.
func (a *accumulator) response() *llm.Response {
	resp := &llm.Response{}
	calls, refused := false, false
	for _, it := range a.items {
		switch it.kind {
		case "reasoning":
			if it.buf.Len() == 0 && it.encrypted == "" {
				continue
			}
			b := message.Block{Type: message.TypeThinking, Thinking: it.buf.String(), Origin: Origin}
			if it.encrypted != "" {
				enc := it.encrypted
				b.Signature = &enc
			}
			resp.Content = append(resp.Content, b)
		case "message":
			refused = refused || it.refusal
			if it.buf.Len() > 0 {
				resp.Content = append(resp.Content, message.Text(it.buf.String()))
			}
		case "function_call":
			calls = true
			id := it.callID
			if id == "" {
				id = transport.NewCallID()
			}
			args := it.buf.String()
			if args == "" {
				args = "{}"
			}
			resp.Content = append(resp.Content, message.Block{Type: message.TypeToolUse, ID: id, Name: it.name, Arguments: args})
		}
	}
	resp.StopReason = turnevent.StopEndTurn
	switch {
	case a.final != nil && a.final.IncompleteDetails != nil && a.final.IncompleteDetails.Reason == "max_output_tokens":
		resp.StopReason = turnevent.StopMaxTokens
	case a.final != nil && a.final.IncompleteDetails != nil && a.final.IncompleteDetails.Reason == "content_filter", refused:
		resp.StopReason = turnevent.StopRefusal
	case calls:
		resp.StopReason = llm.StopToolUse
	}
	if a.final != nil && a.final.Usage != nil {
		u := a.final.Usage
		var cached int64
		if u.InputTokensDetails != nil {
			cached = u.InputTokensDetails.CachedTokens
		}
		// Reasoning tokens are part of output_tokens.
		resp.Usage = message.Usage{InputTokens: max(u.InputTokens-cached, 0), OutputTokens: u.OutputTokens, CacheReadTokens: cached}
	}
	return resp
}

// apiError turns a failed response's error (response.failed, or an error
// event) into an error the retry policy and the agent understand:
// overload and rate limits become the HTTP answer they stand for, a
// context overflow wraps llm.ErrContextTooLong, anything else is final.
func apiError(e *wireError) error {
	code := codeString(e.Code)
	if code == "" {
		code = e.Type
	}
	msg := transport.Truncate(e.Message, 300)
	switch code {
	case "context_length_exceeded":
		return fmt.Errorf("%w: llm: server error in stream (%s): %s", llm.ErrContextTooLong, code, msg)
	case "rate_limit_exceeded":
		return &llm.StatusError{Status: 429, Body: msg, RetryAfter: retryAfter(e.Message)}
	case "server_error", "internal_error":
		return &llm.StatusError{Status: 500, Body: msg}
	case "server_is_overloaded", "service_unavailable", "overloaded":
		return &llm.StatusError{Status: 503, Body: msg}
	}
	return transport.StreamError(code, e.Message)
}

// codeString reads an error code that is a string or a number.
func codeString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// tryAgain is how a rate-limit message says when: "Please try again in
// 1.5s." or "in 20ms" (the stream has no Retry-After header).
var tryAgain = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)try again in\s*(\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b`)
})

func retryAfter(msg string) time.Duration {
	m := tryAgain().FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v <= 0 {
		return 0
	}
	if strings.EqualFold(m[2], "ms") {
		return time.Duration(v * float64(time.Millisecond))
	}
	return time.Duration(v * float64(time.Second))
}
