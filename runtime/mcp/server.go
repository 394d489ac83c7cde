package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/config"
)

// protocolVersion is pinned: it skips the server/discover probe that the
// TypeScript servers do not know, and they all speak it.
const protocolVersion = "2025-11-25"

var errClosed = errors.New("the MCP client is closed")

// server is one configured MCP server and its connection, if any.
type server struct {
	m      *Manager
	name   string
	cfg    *config.MCPServer
	log    *slog.Logger
	scrub  scrubber
	client *mcp.Client
	httpc  *http.Client    // HTTP servers only
	httptr *http.Transport // its transport, for closing idle connections

	mu         sync.Mutex
	closed     bool
	sess       *session      // the live session, nil when not connected
	connecting chan struct{} // closed when the attempt in flight ends
	tools      []*mcp.Tool   // after the filters, from the last listing
	listed     bool          // tools holds a successful listing
	err        error         // why the server is not connected
	retryAt    time.Time     // no new attempt before this after a failed one
	refreshing bool          // a tools/list refresh is running
	stale      bool          // the tool list changed since the refresh began
}

// session is one connection to a server.
type session struct {
	cs *mcp.ClientSession
	st *stdioTransport // stdio servers only
}

// abandon kills a stdio server's process group at once, then closes the
// session (an HTTP session gets its DELETE).
func (x *session) abandon() {
	if x.st != nil {
		x.st.kill()
	}
	_ = x.cs.Close()
}

func (s *server) transportName() string {
	switch {
	case s.cfg.Command != "":
		return "stdio"
	case s.cfg.URL != "":
		return "http"
	}
	return "unknown"
}

func (s *server) startupTimeout() time.Duration {
	return secs(s.cfg.StartupTimeoutSecs, config.DefaultStartupTimeoutSecs)
}

func (s *server) toolTimeout() time.Duration {
	return secs(s.cfg.ToolTimeoutSecs, config.DefaultToolTimeoutSecs)
}

func secs(n, def int) time.Duration {
	if n <= 0 {
		n = def
	}
	return time.Duration(n) * time.Second
}

// startConnectLocked begins a connection attempt in the background unless
// one is running, and returns the channel closed when it ends. parent, when
// not nil, cancels the attempt. s.mu is held and s is not closed.
func (s *server) startConnectLocked(parent context.Context) chan struct{} {
	if s.connecting != nil {
		return s.connecting
	}
	ch := make(chan struct{})
	s.connecting = ch
	if old := s.sess; old != nil {
		s.sess = nil
		s.m.goTracked(old.abandon)
	}
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		sess, list, err := s.dial(parent)
		s.mu.Lock()
		s.connecting = nil
		var late *session // connected after Close: closed below, without s.mu
		if err == nil && s.closed {
			late, err = sess, errClosed
		}
		if err != nil {
			s.err = err
			s.retryAt = time.Now().Add(s.m.backoff)
		} else {
			s.sess, s.tools, s.listed, s.err, s.retryAt = sess, list, true, nil, time.Time{}
			s.watchLocked(sess)
			if s.stale { // the list changed while connecting
				s.stale = false
				s.refreshLocked()
			}
		}
		closed := s.closed
		s.mu.Unlock()
		if late != nil {
			late.abandon()
		}
		if err != nil && !closed { // before Wait returns, so warnings print first
			if s.m.opts.Warn != nil {
				s.m.opts.Warn(s.name, err)
			} else {
				s.log.Warn("mcp server unavailable", "error", err)
			}
		}
		close(ch)
	}()
	return ch
}

// dial connects, initializes and lists the tools, all within the startup
// timeout.
func (s *server) dial(parent context.Context) (*session, []*mcp.Tool, error) {
	var t mcp.Transport
	var st *stdioTransport
	switch s.transportName() {
	case "stdio":
		st = &stdioTransport{cfg: s.cfg, log: s.log, scrub: s.scrub}
		t = st
	case "http":
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpc}
	default:
		return nil, nil, errors.New("neither command nor url is configured")
	}
	ctx, cancel := context.WithTimeout(s.m.base, s.startupTimeout())
	defer cancel()
	if parent != nil {
		defer context.AfterFunc(parent, cancel)()
	}
	// An abandoned attempt kills its server at once: the SDK's close of a
	// half-open session would otherwise wait for a graceful exit.
	stopKill := func() bool { return true }
	if st != nil {
		stopKill = context.AfterFunc(ctx, st.kill)
	}
	cs, err := s.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		stopKill()
		return nil, nil, s.connectError(ctx, err, st)
	}
	sess := &session{cs: cs, st: st}
	list, err := s.listTools(ctx, cs)
	if !stopKill() && err == nil {
		err = ctx.Err() // the kill raced with success
	}
	if err != nil {
		sess.abandon()
		return nil, nil, s.connectError(ctx, fmt.Errorf("listing tools: %w", err), st)
	}
	return sess, list, nil
}

// connectError explains a failed attempt without secrets.
func (s *server) connectError(ctx context.Context, err error, st *stdioTransport) error {
	if s.m.base.Err() != nil {
		return errClosed
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s (startup_timeout_secs)", s.startupTimeout())
	}
	if ctx.Err() != nil {
		return errors.New("connecting was cancelled")
	}
	if st != nil {
		p := st.process()
		if p == nil {
			var ee *exec.Error
			if errors.As(err, &ee) {
				err = ee.Err
			}
			return fmt.Errorf("cannot start %q: %s", s.cfg.Command, s.scrub.Replace(err.Error()))
		}
		if how, ok := p.exited(); ok {
			msg := "the server exited during start-up (" + how + ")"
			if line := p.lastLine(); line != "" {
				msg += "; its last stderr line: " + truncate(line, 300)
			}
			return errors.New(s.scrub.Replace(msg))
		}
	}
	var op *net.OpError
	if errors.As(err, &op) && s.cfg.URL != "" {
		return fmt.Errorf("cannot reach %s: %s", redactURL(s.cfg.URL), s.scrub.Replace(op.Err.Error()))
	}
	return errors.New(s.scrub.Replace(err.Error()))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// listTools lists every page of the server's tools and keeps those the
// filters allow.
func (s *server) listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	if res := cs.InitializeResult(); res != nil && (res.Capabilities == nil || res.Capabilities.Tools == nil) {
		return nil, nil // no tools capability: tools/list would be "method not found"
	}
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if allowed(s.cfg.EnabledTools, s.cfg.DisabledTools, t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// watchLocked notices a session that ends on its own (the server exited,
// the HTTP session was lost): the next call reconnects. s.mu is held.
func (s *server) watchLocked(sess *session) {
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		err := sess.cs.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sess == sess {
			s.sess = nil
			s.err = s.lostError(sess, err)
		}
	}()
}

func (s *server) lostError(sess *session, err error) error {
	if sess.st != nil {
		if p := sess.st.process(); p != nil {
			if how, ok := p.exited(); ok {
				return errors.New("the server exited (" + how + ")")
			}
		}
	}
	if err == nil || strings.HasSuffix(err.Error(), "EOF") {
		return errors.New("connection lost")
	}
	return fmt.Errorf("connection lost: %s", s.scrub.Replace(err.Error()))
}

// drop forgets a session a call found broken and closes it.
func (s *server) drop(sess *session, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != sess || s.closed {
		return
	}
	s.sess = nil
	s.err = fmt.Errorf("connection lost: %s", s.scrub.Replace(cause.Error()))
	s.m.goTracked(sess.abandon)
}

// session returns the live session, connecting first when there is none
// (unless a failed attempt is younger than the back-off).
func (s *server) session(ctx context.Context) (*session, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	if sess := s.sess; sess != nil {
		s.mu.Unlock()
		return sess, nil
	}
	ch := s.connecting
	if ch == nil {
		if s.err != nil && time.Now().Before(s.retryAt) {
			err := s.unavailableLocked()
			s.mu.Unlock()
			return nil, err
		}
		ch = s.startConnectLocked(nil)
	}
	s.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, errClosed
	case s.sess != nil:
		return s.sess, nil
	}
	return nil, s.unavailableLocked()
}

func (s *server) unavailableLocked() error {
	err := s.err
	if err == nil {
		err = errors.New("not connected")
	}
	if wait := time.Until(s.retryAt); wait > 0 {
		n := time.Duration(math.Ceil(wait.Seconds())) * time.Second
		return fmt.Errorf("%w; next connection attempt in %s (at %s)", err, n, s.retryAt.Format("15:04:05"))
	}
	return err
}

// onToolsChanged re-lists the tools in the background when the server says
// its list changed.
func (s *server) onToolsChanged(cs *mcp.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
	case s.connecting != nil && s.sess == nil:
		s.stale = true // the attempt re-lists once it is done
	case s.sess != nil && s.sess.cs == cs:
		if s.refreshing {
			s.stale = true
		} else {
			s.refreshLocked()
		}
	}
}

// refreshLocked starts re-listing the live session's tools. s.mu is held.
func (s *server) refreshLocked() {
	s.refreshing = true
	sess := s.sess
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		for {
			ctx, cancel := context.WithTimeout(s.m.base, s.startupTimeout())
			list, err := s.listTools(ctx, sess.cs)
			cancel()
			s.mu.Lock()
			if err != nil {
				s.log.Info("mcp tools/list refresh failed", "error", s.scrub.Replace(err.Error()))
			} else if s.sess == sess {
				s.tools = list
			}
			if !s.stale || s.closed || s.sess != sess {
				s.refreshing, s.stale = false, false
				s.mu.Unlock()
				return
			}
			s.stale = false
			s.mu.Unlock()
		}
	}()
}
