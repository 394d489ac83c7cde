package sessions

import (
	"errors"
	"testing"
	"time"
)

const shortWait = 300 * time.Millisecond

// openBusy asserts Open fails with ErrBusy after about timeout: not at once
// (it must wait for the holder) and not much later (it must not hang).
func openBusy(t *testing.T, dir string, opts Options) {
	t.Helper()
	start := time.Now()
	x, err := Open(dir, opts)
	took := time.Since(start)
	if err == nil {
		_ = x.Close()
	}
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("Open(%+v) = %v, want ErrBusy", opts, err)
	}
	if took < opts.Timeout-100*time.Millisecond || took > opts.Timeout+time.Second {
		t.Errorf("Open(%+v) gave up after %v", opts, took)
	}
}

func TestBusyAcrossProcesses(t *testing.T) {
	x, dir := newIndex(t)
	must(t, x.PutSession(sess("s1", 0)))
	must(t, x.Close())

	t.Run("writer blocks writers and readers", func(t *testing.T) {
		h := startHolder(t, "rw", dir)
		openBusy(t, dir, Options{Timeout: shortWait})
		openBusy(t, dir, Options{ReadOnly: true, Timeout: shortWait})
		h.release()
		// Once the holder exits, the lock is free again.
		y := openT(t, dir, Options{Timeout: shortWait})
		must(t, y.Close())
	})

	t.Run("readers share, block writers", func(t *testing.T) {
		h := startHolder(t, "ro", dir)
		y := openT(t, dir, Options{ReadOnly: true, Timeout: shortWait})
		if n, err := y.Count(); err != nil || n != 1 {
			t.Errorf("Count beside another reader = %d, %v", n, err)
		}
		openBusy(t, dir, Options{Timeout: shortWait})
		must(t, y.Close())
		h.release()
	})

	t.Run("waits for a holder that lets go in time", func(t *testing.T) {
		h := startHolder(t, "rw", dir)
		go func() {
			time.Sleep(200 * time.Millisecond)
			h.release()
		}()
		y, err := Open(dir, Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("Open while holder exits: %v", err)
		}
		must(t, y.Close())
	})
}

// A second Open in the same process behaves exactly like one from another
// process: bolt's flock is per open file description, not per process.
func TestBusyInSameProcess(t *testing.T) {
	_, dir := newIndex(t)
	openBusy(t, dir, Options{Timeout: shortWait})
	openBusy(t, dir, Options{ReadOnly: true, Timeout: shortWait})
}

func TestDefaultTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits the full default timeout")
	}
	_, dir := newIndex(t)
	start := time.Now()
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took < DefaultTimeout-100*time.Millisecond {
		t.Errorf("zero Timeout gave up after %v, want ~%v", took, DefaultTimeout)
	}
}
