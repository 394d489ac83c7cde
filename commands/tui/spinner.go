package tui

import (
	"io"
	"strconv"
	"sync"
	"time"
)

const (
	spinInterval = 80 * time.Millisecond
	// showElapsed is when the spinner starts counting seconds: short waits
	// need no clock, long ones should show they are still progressing.
	showElapsed = 3 * time.Second
	eraseLine   = "\x1b[K"
)

var (
	brailleFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	// asciiFrames serve terminals without colour, which may lack the
	// braille glyphs too.
	asciiFrames = []string{"|", "/", "-", "\\"}
)

// Spinner animates a one-line activity indicator ("⠋ thinking…") on a
// terminal while the chat waits, for the first token or for tools. It draws
// over the current line, so start it only at the start of a line.
//
// The chat's renderer owns a mutex that serialises every write to the
// terminal. The Spinner takes that same mutex for each animation frame, so
// Start, Stop and Active must be called with it held. None of them waits
// for the animation goroutine: it may be blocked on that very mutex.
type Spinner struct {
	w        io.Writer
	mu       sync.Locker
	st       Style
	frames   []string
	interval time.Duration
	now      func() time.Time

	// Guarded by mu.
	label   string
	started time.Time
	frame   int
	gen     uint64        // bumped by Start and Stop; a goroutine of an older generation draws nothing
	stop    chan struct{} // closed by Stop; nil when not running
	done    chan struct{} // closed when the running goroutine has exited
	drawn   bool          // a frame is on screen
}

// NewSpinner returns a stopped spinner drawing on w in style s, taking mu
// for each frame it draws on its own.
func NewSpinner(w io.Writer, mu sync.Locker, s Style) *Spinner {
	frames := asciiFrames
	if s.Enabled {
		frames = brailleFrames
	}
	return &Spinner{w: w, mu: mu, st: s, frames: frames, interval: spinInterval, now: time.Now}
}

// Start shows the spinner with label, drawing the first frame at once, and
// animates it until Stop. If it is already running only the label changes
// (and the elapsed time restarts, as a new label means a new wait).
// Call it with mu held.
func (sp *Spinner) Start(label string) {
	if sp.stop != nil {
		if label != sp.label {
			sp.label, sp.started = label, sp.now()
			sp.draw()
		}
		return
	}
	sp.label, sp.started, sp.frame = label, sp.now(), 0
	sp.gen++
	sp.stop, sp.done = make(chan struct{}), make(chan struct{})
	sp.draw()
	go sp.run(sp.gen, sp.stop, sp.done)
}

// Stop clears the spinner's line if it drew anything; no frame is drawn
// after it returns. Stopping a stopped spinner does nothing.
// Call it with mu held.
func (sp *Spinner) Stop() {
	if sp.stop == nil {
		return
	}
	close(sp.stop)
	sp.stop = nil
	sp.gen++
	if sp.drawn {
		io.WriteString(sp.w, "\r"+eraseLine)
		sp.drawn = false
	}
}

// Active reports whether the spinner is running. Call it with mu held.
func (sp *Spinner) Active() bool {
	return sp.stop != nil
}

// run draws a frame per tick until Stop. The stop channel ends it promptly
// when idle; the generation check under mu covers a tick that raced Stop.
func (sp *Spinner) run(gen uint64, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(sp.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		sp.mu.Lock()
		if sp.gen != gen {
			sp.mu.Unlock()
			return
		}
		sp.frame++
		sp.draw()
		sp.mu.Unlock()
	}
}

// draw writes the current frame over the line; mu is held. Write errors are
// ignored: a spinner that cannot draw must not stop the chat.
func (sp *Spinner) draw() {
	label := sp.label
	if d := sp.now().Sub(sp.started); d >= showElapsed {
		label += " " + strconv.Itoa(int(d/time.Second)) + "s"
	}
	f := sp.frames[sp.frame%len(sp.frames)]
	io.WriteString(sp.w, "\r"+sp.st.AccentText(f)+" "+sp.st.Dim(label)+eraseLine)
	sp.drawn = true
}
