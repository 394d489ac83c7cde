package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/redact"
)

// DefaultTimeout is used when a Config's Timeout is zero. It is
// generous because local servers may load a model before sending the first
// byte.
const DefaultTimeout = 120 * time.Second

// SSEClient is the HTTP side shared by the streaming clients: it POSTs a
// JSON body and hands the event-stream answer to a wire decoder, under an
// idle watchdog. Non-2xx answers become llm.StatusErrors.
type SSEClient struct {
	// URL is where Do posts. A wire whose path depends on the request
	// (Gemini: the model) posts through a copy with its own URL.
	URL     string
	client  *http.Client
	timeout time.Duration    // <= 0: no watchdog
	red     *redact.Redactor // masked in error bodies
}

// NewSSEClient applies the Timeout convention of Config (zero:
// DefaultTimeout, negative: none) and builds a transport with connect and
// header timeouts unless the caller brought its own http.Client. red holds
// the client's own secrets (see Secrets).
func NewSSEClient(url string, timeout time.Duration, hc *http.Client, red *redact.Redactor) *SSEClient {
	c := &SSEClient{URL: url, timeout: timeout, client: hc, red: red}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.client == nil {
		c.client = HTTPClient(c.timeout)
	}
	return c
}

// Hide masks the client's secrets in err (see the package function Hide).
func (c *SSEClient) Hide(err error) error { return Hide(err, c.red) }

// HTTPClient bounds connecting, the TLS handshake and waiting for the
// response headers by timeout (none when it is negative). It sets no
// http.Client.Timeout: that would kill a healthy long stream.
//
// Clients are shared per timeout for the life of the process: a provider
// is made for every turn, and a transport per turn would open a new
// connection (and TLS handshake) each time and strand its idle ones.
func HTTPClient(timeout time.Duration) *http.Client {
	if c, ok := httpClients.Load(timeout); ok {
		return c.(*http.Client)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A server streams many turns to one provider at once.
	tr.MaxIdleConnsPerHost = 32
	if timeout > 0 {
		tr.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
		tr.ResponseHeaderTimeout = timeout
		tr.TLSHandshakeTimeout = timeout
	}
	c, _ := httpClients.LoadOrStore(timeout, &http.Client{Transport: tr})
	return c.(*http.Client)
}

var httpClients sync.Map // time.Duration -> *http.Client

// Endpoint joins path to base, keeping base's query after it and adding
// query (e.g. "alt=sse") to it: a gateway that takes its token in the
// query (api_base = "https://gw/v1?token=X") gets
// https://gw/v1/chat/completions?token=X, not /v1?token=X/chat/completions.
// A fragment is dropped: it is never sent.
func Endpoint(base, path, query string) string {
	base, _, _ = strings.Cut(base, "#")
	base, q, _ := strings.Cut(base, "?")
	u := strings.TrimRight(base, "/") + path
	switch {
	case q != "" && query != "":
		return u + "?" + q + "&" + query
	case q != "" || query != "":
		return u + "?" + q + query
	}
	return u
}

// Header is the header every request of a client carries: the key
// under keyHeader (only when set; value prefix e.g. "Bearer "), defaults,
// then the configured extra headers, which replace defaults of their name.
func Header(keyHeader, prefix, key string, defaults, extra map[string]string) http.Header {
	h := http.Header{}
	if key != "" {
		h.Set(keyHeader, prefix+key)
	}
	for k, v := range defaults {
		h.Set(k, v)
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	return h
}

// Do runs one HTTP exchange under the idle watchdog: a timer, re-armed by
// every byte received, that cancels the request when the server goes quiet.
// header is added to the request (Content-Type and Accept are preset).
func (c *SSEClient) Do(ctx context.Context, body []byte, header http.Header,
	decode func(io.Reader) (*llm.Response, error)) (*llm.Response, error) {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if c.timeout > 0 {
		timer = time.AfterFunc(c.timeout, func() { cancel(&timeoutError{d: c.timeout}) })
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
			return &timeoutError{phase: phase, d: c.timeout}
		}
		return err
	}

	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	for k, vs := range header {
		hreq.Header.Del(k)
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}

	hresp, err := c.client.Do(hreq)
	if err != nil {
		return nil, fail(fmt.Errorf("llm: %w", err), "waiting for the response")
	}
	defer hresp.Body.Close()
	var rd io.Reader = hresp.Body
	if timer != nil {
		timer.Reset(c.timeout)
		rd = &idleReader{r: hresp.Body, t: timer, d: c.timeout}
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
		return nil, &llm.StatusError{
			Status:     hresp.StatusCode,
			Body:       Truncate(c.red.String(strings.TrimSpace(string(msg))), MaxErrorBody),
			RetryAfter: parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now()),
		}
	}
	if mt, _, _ := mime.ParseMediaType(hresp.Header.Get("Content-Type")); mt == "application/json" {
		// A 200 JSON body is a server ignoring stream:true or a gateway's
		// error page: retrying will not make it an event stream.
		msg, _ := io.ReadAll(io.LimitReader(rd, 4<<10))
		return nil, fmt.Errorf("llm: expected an event stream, got application/json: %s",
			Truncate(c.red.String(string(msg)), 300))
	}

	resp, err := decode(rd)
	if err != nil {
		return nil, fail(err, "stream idle")
	}
	return resp, nil
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
