package tui

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// screen is a terminal stand-in: the buffer behind the renderer's mutex.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor polls cond for up to 10 s: generous, so a loaded machine is slow
// rather than flaky.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// stop stops sp and returns a channel closed when its goroutine has exited.
func stop(scr *screen, sp *Spinner) chan struct{} {
	scr.mu.Lock()
	defer scr.mu.Unlock()
	done := sp.done
	sp.Stop()
	return done
}

func waitDone(t *testing.T, done chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the spinner's goroutine did not exit")
	}
}

func TestSpinnerFirstFrameAndStop(t *testing.T) {
	s := colour(t)
	scr := &screen{}
	sp := NewSpinner(&scr.buf, &scr.mu, s)
	sp.interval = time.Hour // only the first frame

	scr.mu.Lock()
	sp.Start("thinking…")
	first := scr.buf.String()
	active := sp.Active()
	scr.mu.Unlock()
	if want := "\r" + s.AccentText("⠋") + " " + s.Dim("thinking…") + "\x1b[K"; first != want {
		t.Errorf("first frame %q, want %q", first, want)
	}
	if !active {
		t.Error("not active after Start")
	}

	done := stop(scr, sp)
	waitDone(t, done)
	if got := scr.String(); got != first+"\r\x1b[K" {
		t.Errorf("after Stop the screen is %q, want the frame then a cleared line", got)
	}
	scr.mu.Lock()
	sp.Stop() // twice is fine
	active = sp.Active()
	scr.mu.Unlock()
	if active || scr.String() != first+"\r\x1b[K" {
		t.Errorf("a second Stop drew %q (active %v)", scr.String(), active)
	}
}

func TestSpinnerAnimatesAndStopsDrawing(t *testing.T) {
	scr := &screen{}
	sp := NewSpinner(&scr.buf, &scr.mu, Style{})
	sp.interval = time.Millisecond

	scr.mu.Lock()
	sp.Start("waiting")
	scr.mu.Unlock()
	waitFor(t, "a second frame", func() bool { return strings.Contains(scr.String(), "\r/ waiting\x1b[K") })

	done := stop(scr, sp)
	after := scr.String()
	if !strings.HasSuffix(after, "\r\x1b[K") {
		t.Errorf("Stop did not clear the line: %q", after)
	}
	waitDone(t, done)
	time.Sleep(20 * time.Millisecond) // many intervals: a stray tick would show
	if got := scr.String(); got != after {
		t.Errorf("drawn after Stop: %q", strings.TrimPrefix(got, after))
	}
}

func TestSpinnerLabelChange(t *testing.T) {
	s := colour(t)
	scr := &screen{}
	sp := NewSpinner(&scr.buf, &scr.mu, s)
	sp.interval = time.Hour

	scr.mu.Lock()
	sp.Start("thinking…")
	sp.Start("thinking…") // same label: nothing to redraw
	n := scr.buf.Len()
	sp.Start("running tool")
	got := scr.buf.String()[n:]
	scr.mu.Unlock()
	if want := "\r" + s.AccentText("⠋") + " " + s.Dim("running tool") + "\x1b[K"; got != want {
		t.Errorf("label change drew %q, want %q", got, want)
	}
	waitDone(t, stop(scr, sp))
}

func TestSpinnerElapsed(t *testing.T) {
	scr := &screen{}
	sp := NewSpinner(&scr.buf, &scr.mu, Style{})
	sp.interval = time.Hour
	now := time.Unix(1000, 0)
	sp.now = func() time.Time { return now }

	scr.mu.Lock()
	sp.Start("thinking…")
	now = now.Add(2 * time.Second)
	sp.draw()
	early := scr.buf.String()
	now = now.Add(2500 * time.Millisecond)
	sp.draw()
	late := scr.buf.String()[len(early):]
	scr.mu.Unlock()
	if strings.Contains(early, "s\x1b[K") {
		t.Errorf("elapsed time shown before 3 s: %q", early)
	}
	if want := "\r| thinking… 4s\x1b[K"; late != want {
		t.Errorf("after 4.5 s drew %q, want %q", late, want)
	}
	waitDone(t, stop(scr, sp))
}

// TestSpinnerRestart starts and stops quickly while frames are due: every
// goroutine must exit, and none may deadlock on the shared mutex.
func TestSpinnerRestart(t *testing.T) {
	scr := &screen{}
	sp := NewSpinner(&scr.buf, &scr.mu, colour(t))
	sp.interval = time.Microsecond
	var dones []chan struct{}
	for i := range 50 {
		scr.mu.Lock()
		sp.Start("x")
		scr.mu.Unlock()
		if i%2 == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		dones = append(dones, stop(scr, sp))
	}
	for _, d := range dones {
		waitDone(t, d)
	}
	if got := scr.String(); !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the last thing drawn is not a cleared line: %q", got[max(0, len(got)-40):])
	}
}
