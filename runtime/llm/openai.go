package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultOpenAIBaseURL is used when OpenAIConfig.BaseURL is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// DefaultTimeout is used when OpenAIConfig.Timeout is zero. It is generous
// because local servers may load a model before sending the first byte.
const DefaultTimeout = 120 * time.Second

// OpenAIConfig configures an OpenAI chat-completions client; it also serves
// the many compatible servers (vLLM, Ollama, llama.cpp, OpenRouter, ...).
type OpenAIConfig struct {
	BaseURL string // up to and including /v1; default DefaultOpenAIBaseURL
	APIKey  string // sent as a Bearer token when set
	// Timeout bounds connecting, waiting for the response headers, and each
	// silence between body bytes. It does not cap the whole stream: a long
	// answer that keeps streaming is fine. Zero means DefaultTimeout,
	// negative disables it.
	Timeout   time.Duration
	MaxTokens int // used when Request.MaxTokens is zero; 0 leaves it to the server
	// MaxCompletionTokens sends max_completion_tokens (kind openai: its
	// reasoning models reject max_tokens) instead of max_tokens.
	MaxCompletionTokens bool
	// HTTPClient replaces the default client. The idle timeout still
	// applies; connect and header timeouts are then the client's business.
	HTTPClient *http.Client
	Headers    map[string]string // extra headers, e.g. for OpenRouter or a gateway
}

type openAI struct {
	cfg     OpenAIConfig
	url     string
	client  *http.Client
	timeout time.Duration
	// noStreamOptions is set once the server rejected stream_options, so
	// later calls skip the doomed first attempt.
	noStreamOptions atomic.Bool
}

// NewOpenAI returns a streaming chat-completions Provider.
func NewOpenAI(cfg OpenAIConfig) Provider {
	p := &openAI{cfg: cfg, timeout: cfg.Timeout}
	if p.timeout == 0 {
		p.timeout = DefaultTimeout
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	p.url = base + "/chat/completions"
	p.client = cfg.HTTPClient
	if p.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if p.timeout > 0 {
			tr.DialContext = (&net.Dialer{Timeout: p.timeout, KeepAlive: 30 * time.Second}).DialContext
			tr.ResponseHeaderTimeout = p.timeout
			tr.TLSHandshakeTimeout = p.timeout
		}
		// No http.Client.Timeout: it would kill a healthy long stream.
		p.client = &http.Client{Transport: tr}
	}
	return p
}

// Stream implements Provider.
func (p *openAI) Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	resp, err := p.stream(ctx, req, onDelta)
	return resp, redact(err, p.cfg.APIKey)
}

func (p *openAI) stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.cfg.MaxTokens
	}
	withOpts := !p.noStreamOptions.Load()
	for {
		body, err := json.Marshal(buildOARequest(req, maxTokens, p.cfg.MaxCompletionTokens, withOpts))
		if err != nil {
			return nil, fmt.Errorf("llm: encoding request: %w", err)
		}
		resp, err := p.do(ctx, body, onDelta)
		var se *StatusError
		if withOpts && errors.As(err, &se) && se.Status == http.StatusBadRequest &&
			(strings.Contains(se.Body, "stream_options") || strings.Contains(se.Body, "include_usage")) {
			p.noStreamOptions.Store(true)
			withOpts = false
			slog.Info("llm: server rejects stream_options; continuing without usage reporting", "url", p.url)
			continue
		}
		return resp, err
	}
}

// do runs one HTTP exchange under the idle watchdog: a timer, re-armed by
// every byte received, that cancels the request when the server goes quiet.
func (p *openAI) do(ctx context.Context, body []byte, onDelta func(Delta) error) (*Response, error) {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if p.timeout > 0 {
		timer = time.AfterFunc(p.timeout, func() { cancel(&timeoutError{d: p.timeout}) })
		defer timer.Stop()
	}
	// fail turns an error into what the caller should see: the caller's own
	// cancellation, our timeout, or err itself.
	fail := func(err error, phase string) error {
		if ctx.Err() != nil {
			return fmt.Errorf("llm: %w", ctx.Err())
		}
		var te *timeoutError
		if errors.As(context.Cause(reqCtx), &te) {
			return &timeoutError{phase: phase, d: p.timeout}
		}
		return err
	}

	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if p.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	for k, v := range p.cfg.Headers {
		hreq.Header.Set(k, v)
	}

	hresp, err := p.client.Do(hreq)
	if err != nil {
		return nil, fail(fmt.Errorf("llm: %w", err), "waiting for the response")
	}
	defer hresp.Body.Close()
	var rd io.Reader = hresp.Body
	if timer != nil {
		timer.Reset(p.timeout)
		rd = &idleReader{r: hresp.Body, t: timer, d: p.timeout}
	}

	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		// A body cut short still yields a StatusError (the status is what
		// matters), unless the caller cancelled or the server went silent.
		msg, rerr := io.ReadAll(io.LimitReader(rd, 64<<10))
		if rerr != nil {
			if ferr := fail(nil, "reading the error body"); ferr != nil {
				return nil, ferr
			}
		}
		return nil, &StatusError{
			Status:     hresp.StatusCode,
			Body:       truncate(redactString(strings.TrimSpace(string(msg)), p.cfg.APIKey), maxErrorBody),
			RetryAfter: parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now()),
		}
	}
	if mt, _, _ := mime.ParseMediaType(hresp.Header.Get("Content-Type")); mt == "application/json" {
		// A 200 JSON body is a server ignoring stream:true or a gateway's
		// error page: retrying will not make it an event stream.
		msg, _ := io.ReadAll(io.LimitReader(rd, 4<<10))
		return nil, fmt.Errorf("llm: expected an event stream, got application/json: %s",
			truncate(redactString(string(msg), p.cfg.APIKey), 300))
	}

	resp, err := decodeOAStream(rd, onDelta)
	if err != nil {
		return nil, fail(err, "stream idle")
	}
	return resp, nil
}

func redactString(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// idleReader re-arms the watchdog whenever bytes arrive.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (ir *idleReader) Read(b []byte) (int, error) {
	n, err := ir.r.Read(b)
	if n > 0 {
		ir.t.Reset(ir.d)
	}
	return n, err
}
