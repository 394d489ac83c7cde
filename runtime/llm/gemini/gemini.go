package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/llm/sse"
	"github.com/openheim/openheim/runtime/message"
)

// DefaultGeminiBaseURL is used when GeminiConfig.BaseURL is empty.
const DefaultGeminiBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// GeminiConfig configures a Gemini API (generateContent) client.
type GeminiConfig struct {
	BaseURL string // up to and including the version, e.g. DefaultGeminiBaseURL (the default)
	APIKey  string // sent only in the x-goog-api-key header, never in the URL
	// Timeout bounds connecting, waiting for the response headers, and each
	// silence between body bytes, as OpenAIConfig.Timeout does. Zero means
	// DefaultTimeout, negative disables it.
	Timeout   time.Duration
	MaxTokens int // maxOutputTokens when Request.MaxTokens is zero; 0 leaves it to the model
	// Thinking is "" (the model's default), "adaptive" (thought summaries
	// streamed, dynamic budget) or "off" (thinking budget 0).
	Thinking string
	Headers  map[string]string // extra headers, e.g. for a gateway
	// HTTPClient replaces the default client. The idle timeout still
	// applies; connect and header timeouts are then the client's business.
	HTTPClient *http.Client
	// MaxAnswerBytes caps one answer, as OpenAIConfig.MaxAnswerBytes does.
	MaxAnswerBytes int
}

type gemini struct {
	cfg    GeminiConfig
	base   string
	conn   *sseClient // its url is set per call: the model is in the path
	header http.Header
}

// NewGemini returns a streaming Gemini Provider (kind gemini).
func NewGemini(cfg GeminiConfig) Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultGeminiBaseURL
	}
	h := requestHeader("x-goog-api-key", "", cfg.APIKey, nil, cfg.Headers)
	return &gemini{cfg: cfg, base: base, header: h,
		conn: newSSEClient("", cfg.Timeout, cfg.HTTPClient, secretsOf(cfg.APIKey, base, cfg.Headers))}
}

// Stream implements Provider.
func (p *gemini) Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	resp, err := p.stream(ctx, req, onDelta)
	return resp, hide(err, p.conn.red)
}

func (p *gemini) stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	model := strings.TrimPrefix(req.Model, "models/")
	if model == "" {
		return nil, errors.New("llm: gemini: no model")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.cfg.MaxTokens
	}
	wreq, err := buildGMRequest(req, maxTokens, p.cfg.Thinking)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(wreq)
	if err != nil {
		return nil, fmt.Errorf("llm: encoding request: %w", err)
	}
	// The key travels in the header only: a URL ends up in proxy logs.
	conn := *p.conn
	conn.url = endpoint(p.base, "/models/"+url.PathEscape(model)+":streamGenerateContent", "alt=sse")
	resp, err := conn.do(ctx, body, p.header, func(r io.Reader) (*Response, error) {
		return decodeGMStream(r, p.cfg.MaxAnswerBytes, onDelta)
	})
	if err != nil {
		return nil, gmClassify(err)
	}
	return resp, nil
}

// gmClassify marks a 400 whose message says the input is over the model's
// token limit ("The input token count (1200000) exceeds the maximum number
// of tokens allowed (1048576).").
func gmClassify(err error) error {
	return markContextTooLong(err, []string{"token count", "exceeds the maximum"})
}

// gmAccumulator assembles the Response from streamed events.
type gmAccumulator struct {
	thinking strings.Builder
	thinkSig string
	text     strings.Builder
	calls    []message.Block
	finish   string
	blocked  string
	usage    *gmUsage
	events   int
	cap      *answerCap
}

// decodeGMStream reads events until the stream ends. Gemini sends no end
// marker: the stream is complete only if some event carried a finishReason
// (or a prompt blockReason) and the body then ended cleanly. An answer
// passing maxAnswer bytes (see newAnswerCap) ends there as max_tokens.
func decodeGMStream(body io.Reader, maxAnswer int, onDelta func(Delta) error) (*Response, error) {
	acc := &gmAccumulator{cap: newAnswerCap(maxAnswer)}
	r := sse.NewReader(body)
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) && (acc.finish != "" || acc.blocked != "") {
				return acc.response(), nil
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%w: no finishReason after %d events", ErrStreamCut, acc.events)
			}
			if errors.Is(err, sse.ErrLineTooLong) {
				return nil, fmt.Errorf("llm: stream event %d: %w", acc.events+1, err)
			}
			return nil, fmt.Errorf("%w after %d events: %w", ErrStreamCut, acc.events, err)
		}
		data := strings.TrimSpace(ev.Data)
		if data == "" {
			continue
		}
		acc.events++
		if err := acc.add([]byte(data), onDelta); err != nil {
			if errors.Is(err, errAnswerCap) {
				return acc.cap.capped(acc.response()), nil
			}
			return nil, err
		}
	}
}

func (a *gmAccumulator) add(data []byte, onDelta func(Delta) error) error {
	var c gmResponse
	if err := json.Unmarshal(data, &c); err != nil {
		// %v, not %w: broken JSON is not a transport failure to retry.
		return fmt.Errorf("llm: malformed JSON in stream event %d: %v (data: %q)",
			a.events, err, truncate(string(data), 200))
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return gmStreamError(c.Error)
	}
	if c.UsageMetadata != nil {
		a.usage = c.UsageMetadata // cumulative: the last one wins
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		a.blocked = c.PromptFeedback.BlockReason
	}
	for _, cand := range c.Candidates {
		if cand.Index != 0 {
			continue // openheim asks for one candidate
		}
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				if err := a.part(p, onDelta); err != nil {
					return err
				}
			}
		}
		if cand.FinishReason != "" {
			a.finish = cand.FinishReason
		}
	}
	return nil
}

// part takes one content part. A thoughtSignature on a function call belongs
// to that call; on a thought or text part it is kept on the thinking block,
// which is how it travels back to the API on the next request.
func (a *gmAccumulator) part(p gmPart, onDelta func(Delta) error) error {
	if fc := p.FunctionCall; fc != nil {
		id := fc.ID
		if id == "" {
			id = newCallID()
		}
		args := compactArgs(fc.Args)
		if err := a.cap.charge(len(id) + len(fc.Name) + len(args) + len(p.ThoughtSignature)); err != nil {
			return err
		}
		b := message.Block{Type: message.TypeToolUse, ID: id, Name: fc.Name, Arguments: args}
		if p.ThoughtSignature != "" {
			sig := p.ThoughtSignature
			b.Signature = &sig
		}
		a.calls = append(a.calls, b)
		return nil
	}
	if p.ThoughtSignature != "" {
		if err := a.cap.charge(len(p.ThoughtSignature)); err != nil {
			return err
		}
		a.thinkSig = p.ThoughtSignature
	}
	if p.Text == "" {
		return nil
	}
	text, capErr := a.cap.take(p.Text)
	if text == "" {
		return capErr
	}
	kind := DeltaText
	if p.Thought {
		kind = DeltaThinking
		a.thinking.WriteString(text)
	} else {
		a.text.WriteString(text)
	}
	if onDelta != nil {
		if err := onDelta(Delta{Kind: kind, Text: text}); err != nil {
			return err
		}
	}
	return capErr
}

// compactArgs is a function call's args object as a compact JSON string.
func compactArgs(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil || buf.Len() == 0 || buf.String() == "null" {
		return "{}"
	}
	return buf.String()
}

func (a *gmAccumulator) response() *Response {
	resp := &Response{StopReason: mapGeminiFinish(a.finish, a.blocked, len(a.calls) > 0)}
	if a.thinking.Len() > 0 || a.thinkSig != "" {
		b := message.Block{Type: message.TypeThinking, Thinking: a.thinking.String()}
		if a.thinkSig != "" {
			sig := a.thinkSig
			b.Signature = &sig
		}
		resp.Content = append(resp.Content, b)
	}
	if a.text.Len() > 0 {
		resp.Content = append(resp.Content, message.Text(a.text.String()))
	}
	resp.Content = append(resp.Content, a.calls...)
	if u := a.usage; u != nil {
		resp.Usage = message.Usage{
			InputTokens:     max(u.PromptTokenCount-u.CachedContentTokenCount, 0),
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens: u.CachedContentTokenCount,
		}
	}
	return resp
}

// mapGeminiFinish maps Gemini's finishReason. A blocked prompt and the
// content filters are refusals; received function calls make any other
// normal end tool_use (Gemini says STOP after calling functions), but
// MAX_TOKENS stays max_tokens.
func mapGeminiFinish(reason, blocked string, hasCalls bool) string {
	if blocked != "" {
		return StopRefusal
	}
	switch reason {
	case "MAX_TOKENS":
		return StopMaxTokens
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT":
		return StopRefusal
	}
	if hasCalls {
		return StopToolUse
	}
	return StopEndTurn
}

// gmStreamError turns an in-stream error object into an error: a StatusError
// when its code is an HTTP status, so retries treat it like that answer.
func gmStreamError(raw json.RawMessage) error {
	var e gmError
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return fmt.Errorf("llm: server error in stream: %s", truncate(string(raw), 300))
	}
	if e.Code >= 400 && e.Code <= 599 {
		body := e.Message
		if e.Status != "" {
			body = e.Status + ": " + body
		}
		return gmClassify(&StatusError{Status: e.Code, Body: truncate(body, maxErrorBody)})
	}
	if e.Status != "" {
		return fmt.Errorf("llm: server error in stream (%s): %s", e.Status, truncate(e.Message, 300))
	}
	return fmt.Errorf("llm: server error in stream: %s", truncate(e.Message, 300))
}
