package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/redact"
)

// maxJSONResponse bounds a success body: 100 embedding vectors of 4096
// floats in JSON are about 10 MB.
const maxJSONResponse = 64 << 20

// JSONClient is the HTTP side of the request/response APIs (embeddings):
// it POSTs JSON and decodes a JSON answer, each attempt bounded as a whole
// by the timeout. Non-2xx answers become llm.StatusErrors.
type JSONClient struct {
	client  *http.Client
	timeout time.Duration
	red     *redact.Redactor
}

// NewJSONClient applies the Timeout convention of Config (zero:
// DefaultTimeout, negative: none); hc nil means the shared HTTPClient.
func NewJSONClient(timeout time.Duration, hc *http.Client, red *redact.Redactor) *JSONClient {
	h := &JSONClient{client: hc, timeout: timeout, red: red}
	if h.timeout == 0 {
		h.timeout = DefaultTimeout
	}
	if h.client == nil {
		h.client = HTTPClient(h.timeout)
	}
	return h
}

// Hide masks the client's secrets in err (see the package function Hide).
func (h *JSONClient) Hide(err error) error { return Hide(err, h.red) }

// Post sends in as JSON to endpoint with the auth headers, and decodes a 2xx
// answer into out. Other answers become a *llm.StatusError.
func (h *JSONClient) Post(ctx context.Context, endpoint string, auth http.Header, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	reqCtx := ctx
	if h.timeout > 0 {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeoutCause(ctx, h.timeout, &timeoutError{phase: "embeddings request", d: h.timeout})
		defer cancel()
	}
	// fail reports the caller's cancellation or our timeout in place of
	// the transport error they caused.
	fail := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var te *timeoutError
		if errors.As(context.Cause(reqCtx), &te) {
			return te
		}
		return err
	}

	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	for k, vs := range auth {
		hreq.Header[k] = vs
	}
	hresp, err := h.client.Do(hreq)
	if err != nil {
		return fail(err)
	}
	defer hresp.Body.Close()

	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		msg, rerr := io.ReadAll(io.LimitReader(hresp.Body, 64<<10))
		if rerr != nil && (ctx.Err() != nil || context.Cause(reqCtx) != nil) {
			return fail(rerr)
		}
		return &llm.StatusError{
			Status:     hresp.StatusCode,
			Body:       Truncate(h.red.String(strings.TrimSpace(string(msg))), MaxErrorBody),
			RetryAfter: parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now()),
		}
	}
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, maxJSONResponse+1))
	if err != nil {
		return fail(fmt.Errorf("reading the response: %w", err))
	}
	if len(raw) > maxJSONResponse {
		return fmt.Errorf("response larger than %d bytes", maxJSONResponse)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding the response: %w: %s", err,
			Truncate(h.red.String(strings.TrimSpace(string(raw))), 300))
	}
	return nil
}
