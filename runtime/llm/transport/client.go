package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/openheim/openheim/runtime/llm"
)

// API is how a vendor's HTTP API is reached: its default root and the
// header its key travels in. A vendor's streaming wire and its embedding
// call each describe it once and build everything from it.
type API struct {
	BaseURL   string            // the root when the config names none
	KeyHeader string            // the header carrying the key
	KeyPrefix string            // before the key in it, e.g. "Bearer "
	Headers   map[string]string // defaults; configured headers replace them by name
}

// Base is base, or the API's default root when it is empty.
func (a API) Base(base string) string {
	if base == "" {
		return a.BaseURL
	}
	return base
}

// Header is the header every request carries: the key (when set), the
// API's defaults, then the configured extra headers (see Header).
func (a API) Header(key string, extra map[string]string) http.Header {
	return Header(a.KeyHeader, a.KeyPrefix, key, a.Headers, extra)
}

// Decoder reads one event-stream answer of a wire: it forwards deltas to
// onDelta as they arrive and returns the assembled response, cut as
// max_tokens past maxAnswer bytes (see NewAnswerCap).
type Decoder func(body io.Reader, maxAnswer int, onDelta func(llm.Delta) error) (*llm.Response, error)

// Client is the set-up every streaming wire's provider shares: the config
// it was made with, the API root it talks to, the event-stream connection
// (which masks the config's secrets) and the header of every request. A
// wire embeds it and adds only its own format.
type Client struct {
	Cfg    Config
	Base   string // Cfg.BaseURL, or the API's default
	Conn   *SSEClient
	Header http.Header
}

// NewClient sets a wire's client up from cfg for api, posting to path
// under the base URL; an empty path leaves the endpoint to each call (see
// Post).
func NewClient(cfg Config, api API, path string) Client {
	base := api.Base(cfg.BaseURL)
	url := ""
	if path != "" {
		url = Endpoint(base, path, "")
	}
	return Client{Cfg: cfg, Base: base, Header: api.Header(cfg.APIKey, cfg.Headers),
		Conn: NewSSEClient(url, cfg.Timeout, cfg.HTTPClient, Secrets(cfg.APIKey, base, cfg.Headers))}
}

// Call is a wire's own part of a model call: build its request, Post it,
// classify what failed. req is never nil.
type Call func(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error)

// Provider makes a wire's call an llm.Provider: a nil request is refused
// before it, and the client's secrets are masked in whatever it fails
// with.
func (c *Client) Provider(call Call) llm.Provider { return &provider{c: c, call: call} }

type provider struct {
	c    *Client
	call Call
}

func (p *provider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	resp, err := p.call(ctx, req, onDelta)
	return resp, p.c.Hide(err)
}

// MaxTokens is a call's answer cap: the request's when set, else the
// config's; zero (or less) when neither is, which each wire reads its way.
func (c *Client) MaxTokens(req *llm.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return c.Cfg.MaxTokens
}

// Post sends wreq as JSON with the client's header and decodes the answer
// with decode, under the config's answer cap. url is the call's endpoint;
// empty means the one NewClient was given.
func (c *Client) Post(ctx context.Context, url string, wreq any, decode Decoder, onDelta func(llm.Delta) error) (*llm.Response, error) {
	body, err := json.Marshal(wreq)
	if err != nil {
		return nil, fmt.Errorf("llm: encoding request: %w", err)
	}
	conn := c.Conn
	if url != "" {
		at := *c.Conn
		at.URL = url
		conn = &at
	}
	return conn.Do(ctx, body, c.Header, func(r io.Reader) (*llm.Response, error) {
		return decode(r, c.Cfg.MaxAnswerBytes, onDelta)
	})
}

// Hide masks the client's secrets in err (see the package function Hide).
func (c *Client) Hide(err error) error { return c.Conn.Hide(err) }
