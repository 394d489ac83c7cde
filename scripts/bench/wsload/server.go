//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// listenRE finds the URL in the line `openheim serve` logs once it accepts
// connections.
var listenRE = regexp.MustCompile(`listening on (http://\S+)`)

// listenURL finds the server's URL in a line of its log, without the
// punctuation or quote (slog's text format) that may follow it.
func listenURL(line string) (string, bool) {
	m := listenRE.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.TrimRight(m[1], `/.,;"'`), true
}

// server is one `openheim serve` process, started fresh for each run so its
// idle and peak RSS belong to that run alone.
type server struct {
	cmd     *exec.Cmd
	URL     string        // http://127.0.0.1:PORT
	token   string        // the token it requires
	done    chan struct{} // closed when the process has exited
	scanned chan struct{} // closed when its stderr has been read to the end

	mu    sync.Mutex
	lines int      // stderr lines after the listening line
	tail  []string // the first few of them, to report
}

// maxTail bounds what is kept of the server's stderr.
const maxTail = 8

// startServer runs `bin --config cfg serve --host 127.0.0.1 --port 0` with
// OPENHEIM_HOME=home and a fresh token, and waits (up to wait) for its
// listening line.
func startServer(bin, cfg, home string, wait time.Duration, verbose bool) (*server, error) {
	return startServerWith(bin, cfg, home, newToken(), wait, verbose)
}

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// startServerWith is startServer with a given token: the replicas of a
// cluster share one.
func startServerWith(bin, cfg, home, token string, wait time.Duration, verbose bool) (*server, error) {
	args := []string{"serve", "--host", "127.0.0.1", "--port", "0"}
	if cfg != "" {
		args = append([]string{"--config", cfg}, args...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+home, "OPENHEIM_TOKEN="+token)
	// Its own process group, so stopping it also stops anything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Our own pipe rather than StderrPipe: Wait closes that one as soon as
	// the process exits, cutting off the last lines mid-read.
	stderr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		stderr.Close()
		return nil, err
	}
	s := &server{cmd: cmd, token: token, done: make(chan struct{}), scanned: make(chan struct{})}
	found := make(chan string, 1)
	go func() { s.scan(stderr, found, verbose); stderr.Close(); close(s.scanned) }()
	go func() { _ = cmd.Wait(); close(s.done) }()

	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s.URL = <-found:
		return s, nil
	case <-s.done:
		select { // its last words, unless a child still holds the pipe
		case <-s.scanned:
		case <-time.After(time.Second):
		}
		return nil, fmt.Errorf("openheim serve exited before listening (%v): %s", cmd.ProcessState, s.stderrTail())
	case <-t.C:
		s.stop()
		return nil, fmt.Errorf("openheim serve printed no %q line within %v: %s", "listening on", wait, s.stderrTail())
	}
}

// scan reads the server's stderr to the end: it hands over the listening
// URL and keeps a count and the first lines of the rest, where warnings and
// errors show up.
func (s *server) scan(r io.Reader, found chan<- string, verbose bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	listening := false
	for sc.Scan() {
		line := sc.Text()
		if verbose {
			fmt.Fprintln(os.Stderr, "server:", line)
		}
		if !listening {
			if u, ok := listenURL(line); ok {
				listening = true
				found <- u
				continue
			}
		}
		s.mu.Lock()
		s.lines++
		if len(s.tail) < maxTail {
			s.tail = append(s.tail, line)
		}
		s.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

func (s *server) stderrTail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tail) == 0 {
		return "(no output)"
	}
	return strings.Join(s.tail, " | ")
}

// Stderr is how many lines the server logged after listening, and the first
// of them.
func (s *server) Stderr() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines, append([]string(nil), s.tail...)
}

func (s *server) Pid() int { return s.cmd.Process.Pid }

// stop asks the server to shut down, then kills its process group if it has
// not gone within a few seconds. It reports whether the shutdown was clean.
func (s *server) stop() error {
	pg := -s.cmd.Process.Pid
	_ = syscall.Kill(pg, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
	}
	_ = syscall.Kill(pg, syscall.SIGKILL)
	<-s.done
	return errors.New("openheim serve did not exit within 5s of SIGTERM; killed")
}
