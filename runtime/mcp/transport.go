package mcp

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/childproc"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/redact"
)

// terminateGrace is how long closing a stdio server waits for it to exit
// after its stdin is closed, and again after SIGTERM, before SIGKILL (the
// SDK's sequence; the rest of the group is killed after). The reference
// servers exit on end of input within milliseconds, unless work they were
// asked to cancel keeps them busy; a CLI should not hang on exit for that.
var terminateGrace = time.Second

// dialTimeout bounds connecting (and the TLS handshake) to an HTTP server.
const dialTimeout = 10 * time.Second

// stderrTail is how many of a server's last stderr lines are kept to explain
// a failed start.
const stderrTail = 5

// stdioTransport runs a server command in its own process group, started
// by childproc so that it dies with openheim. Its connection's Close kills
// the whole group once the server has exited (or been made to), so
// grandchildren (npx, sh -c) never outlive it.
type stdioTransport struct {
	cfg   *config.MCPServer
	log   *slog.Logger
	scrub scrubber // applied to stderr lines before they are logged or kept

	mu     sync.Mutex
	proc   *proc
	killed bool // kill was called, possibly before the process started
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cmd := exec.Command(t.cfg.Command, t.cfg.Args...)
	cmd.Env = environ(t.cfg.Env)
	cmd.Dir = t.cfg.Cwd
	// An *os.File as Stderr: the child writes to the pipe directly, and
	// cmd.Wait never waits for a copying goroutine that grandchildren
	// holding the pipe open could stall.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = w
	var conn mcp.Connection
	err = childproc.StartFunc(cmd, func() (err error) {
		conn, err = (&mcp.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}).Connect(ctx)
		return err
	})
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, stderr: r, done: make(chan struct{})}
	go p.readStderr(t.log, t.scrub)
	t.mu.Lock()
	t.proc = p
	killed := t.killed
	t.mu.Unlock()
	if killed {
		p.kill()
	}
	return &groupConn{Connection: conn, p: p}, nil
}

// kill kills the server's process group now, or as soon as it starts.
func (t *stdioTransport) kill() {
	t.mu.Lock()
	t.killed = true
	p := t.proc
	t.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

func (t *stdioTransport) process() *proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc
}

// environ is the inherited environment plus the configured variables, which
// win (exec keeps the last value of a duplicated key).
func environ(extra map[string]string) []string {
	env := os.Environ()
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// proc is one started stdio server.
type proc struct {
	cmd    *exec.Cmd
	stderr *os.File
	done   chan struct{} // closed when readStderr has returned

	mu   sync.Mutex
	tail []string
}

// readStderr logs the server's stderr line by line (at info level: servers
// print banners there) and keeps the last lines.
func (p *proc) readStderr(log *slog.Logger, scrub scrubber) {
	defer close(p.done)
	br := bufio.NewReaderSize(p.stderr, 4096)
	for {
		chunk, err := br.ReadSlice('\n')
		if line := scrub.Replace(strings.TrimRight(string(chunk), "\r\n")); strings.TrimSpace(line) != "" {
			log.Info("mcp server stderr", "line", line)
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > stderrTail {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// lastLine is the last line the server wrote to stderr, if any.
func (p *proc) lastLine() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tail) == 0 {
		return ""
	}
	return p.tail[len(p.tail)-1]
}

func (p *proc) kill() { _ = childproc.KillGroup(p.cmd.Process.Pid) }

// exited reports how the server ended, once it has been waited for.
func (p *proc) exited() (string, bool) {
	if st := p.cmd.ProcessState; st != nil {
		return st.String(), true
	}
	return "", false
}

// finish waits briefly for the last stderr lines, then closes the pipe so
// that a descendant which left the group cannot keep the reader alive.
func (p *proc) finish() {
	select {
	case <-p.done:
	case <-time.After(200 * time.Millisecond):
	}
	p.stderr.Close()
	<-p.done
}

// groupConn is the SDK's stdio connection whose Close, after the SDK's
// graceful close (stdin closed, then SIGTERM, then SIGKILL of the server),
// kills what is left of the process group.
type groupConn struct {
	mcp.Connection
	p    *proc
	once sync.Once
	err  error
}

func (c *groupConn) Close() error {
	c.once.Do(func() {
		c.err = c.Connection.Close()
		c.p.kill()
		c.p.finish()
	})
	return c.err
}

// newHTTPClient bounds connecting and waiting for response headers but sets
// no Client.Timeout, which would cut the long-lived SSE streams. Calls are
// bounded by their own contexts; headerTimeout only has to catch a server
// that accepts a request and never answers one that has no deadline.
func newHTTPClient(headers map[string]string, headerTimeout time.Duration) (*http.Client, *http.Transport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = dialTimeout
	tr.ResponseHeaderTimeout = headerTimeout
	var rt http.RoundTripper = tr
	if len(headers) > 0 {
		h := http.Header{}
		for k, v := range headers {
			if !protocolHeaders[http.CanonicalHeaderKey(k)] {
				h.Set(k, v)
			}
		}
		rt = &headerTransport{base: tr, headers: h}
	}
	return &http.Client{Transport: rt}, tr
}

// protocolHeaders are set by the SDK and never replaced by configured ones.
var protocolHeaders = map[string]bool{
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Last-Event-Id": true,
	"Content-Type": true, "Content-Length": true, "Accept": true, "Host": true,
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, vs := range t.headers {
		r.Header[k] = vs
	}
	return t.base.RoundTrip(r)
}

// redactURL drops credentials, query and fragment.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid url>"
	}
	u.User = nil
	u.RawQuery, u.ForceQuery = "", false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// scrubber hides what must never be shown in a server's errors, status and
// relayed stderr: its URL's credentials, query and fragment (net/http quotes
// URLs in its errors, with the password as ***), then the secrets of its
// config (header values, secret env values and args: a failing server often
// prints its command line) and of the whole config (a server inherits the
// environment, provider keys included).
type scrubber struct {
	urls *strings.Replacer
	red  *redact.Redactor
}

// Replace returns s scrubbed.
func (sc scrubber) Replace(s string) string { return sc.red.String(sc.urls.Replace(s)) }

func newScrubber(cfg *config.MCPServer, base *redact.Redactor) scrubber {
	var pairs []string
	if cfg.URL != "" {
		pairs = append(pairs, cfg.URL, redactURL(cfg.URL))
		if u, err := url.Parse(cfg.URL); err == nil {
			if u.User != nil {
				pairs = append(pairs, u.User.String()+"@", "", u.User.Username()+":***@", "")
			}
			if u.RawQuery != "" {
				pairs = append(pairs, "?"+u.RawQuery, "")
			}
			if u.Fragment != "" {
				pairs = append(pairs, "#"+u.EscapedFragment(), "")
			}
		}
	}
	return scrubber{urls: strings.NewReplacer(pairs...), red: base.With(cfg.Secrets()...)}
}
