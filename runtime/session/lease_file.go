package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// fileLease is a Locker's lease on one session.
type fileLease struct {
	l       *Locker
	dir, id string
	ours    lease
	forget  func()

	// The heartbeat is a timer, not a goroutine: a server holds a lease
	// per running turn. beatMu orders a renewal with Release.
	beatMu  sync.Mutex
	beat    *time.Timer
	stopped bool

	lost        chan struct{}
	lostCtx     context.Context // done once lost (LostContext)
	loseCtx     context.CancelFunc
	loseOnce    sync.Once
	releaseOnce sync.Once

	mu  sync.Mutex
	err error // why the lease was lost

	// fenceMu makes fences one at a time: they share fence, and one's
	// unlock would drop the lock under another's write.
	fenceMu  sync.Mutex
	fence    *flock.Flock // the session's fence lock
	released bool
}

func startLease(l *Locker, dir, id string, ours lease, forget func()) *fileLease {
	fl := &fileLease{l: l, dir: dir, id: id, ours: ours, forget: forget, fence: lockOf(fencePath(dir, id)),
		lost: make(chan struct{})}
	fl.lostCtx, fl.loseCtx = context.WithCancel(context.Background())
	fl.beatMu.Lock()
	fl.beat = time.AfterFunc(fl.period(), fl.heartbeat)
	fl.beatMu.Unlock()
	return fl
}

// LostContext implements LossContext.
func (fl *fileLease) LostContext() context.Context { return fl.lostCtx }

// Epoch implements Lease.
func (fl *fileLease) Epoch() uint64 { return fl.ours.Epoch }

// Lost implements Lease.
func (fl *fileLease) Lost() <-chan struct{} { return fl.lost }

// Err implements Lease.
func (fl *fileLease) Err() error {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.err
}

// lose records why the lease was lost, once, and returns that first reason.
func (fl *fileLease) lose(err error) error {
	fl.loseOnce.Do(func() {
		fl.mu.Lock()
		fl.err = err
		fl.mu.Unlock()
		close(fl.lost)
		fl.loseCtx()
	})
	return fl.Err()
}

// Fence implements Lease. The check and write run under the session's
// fence lock, which a takeover also waits on after writing its lease
// (waitOutFences): a write that passed the check ends before the new
// holder goes on.
func (fl *fileLease) Fence(write func() error) error {
	if err := fl.Err(); err != nil {
		return err
	}
	fl.fenceMu.Lock()
	defer fl.fenceMu.Unlock()
	if fl.released {
		return fmt.Errorf("session %s: the turn's lease was released", fl.id)
	}
	// Without creating it: a lock file gone went with its session (Trash,
	// Purge), and with it the lease.
	if err := fl.fence.Lock(); errors.Is(err, fs.ErrNotExist) {
		return fl.lose(&LeaseLostError{SessionID: fl.id})
	} else if err != nil {
		return fmt.Errorf("session %s: locking for the lease check: %w", fl.id, err)
	}
	defer fl.fence.Unlock()
	data, err := os.ReadFile(LockPath(fl.dir, fl.id))
	if err := verdict(fl.id, fl.ours, data, err); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return fl.lose(err)
		}
		return err
	}
	return write()
}

// Release implements Lease: it stops the heartbeat and marks the lease
// released if it is still ours (if someone took it over meanwhile, it is
// theirs now). The file stays, keeping the epoch the next turn goes on
// from: taking and giving back a lease change no entry of the history
// directory.
func (fl *fileLease) Release() {
	fl.releaseOnce.Do(func() {
		fl.beatMu.Lock() // waits out a renewal in flight
		fl.stopped = true
		fl.beat.Stop()
		fl.beatMu.Unlock()
		fl.fenceMu.Lock()
		fl.released = true
		fl.fenceMu.Unlock()
		err := fl.l.ifOurs(fl.dir, fl.id, fl.ours, func(path string) error {
			return writeLease(path, lease{Epoch: fl.ours.Epoch, ReleasedAt: fl.l.now()})
		})
		if err != nil && !errors.Is(err, ErrLeaseLost) {
			fl.l.warn(fmt.Sprintf("session %s: releasing lease: %v", fl.id, err))
		}
		fl.forget()
	})
}

// heartbeat renews the lease every Stale/6 until Release, so other
// processes can tell a long turn from a dead one, and stops once a renewal
// finds the lease lost.
func (fl *fileLease) heartbeat() {
	fl.beatMu.Lock()
	defer fl.beatMu.Unlock()
	if fl.stopped || fl.renew() {
		return
	}
	fl.beat.Reset(fl.period())
}

func (fl *fileLease) period() time.Duration { return fl.l.staleAfter() / 6 }

// renew rewrites the lease with a fresh renewed_at if it is still ours;
// when it is taken over or gone, it marks the lease lost (the turn then
// reports it) and says so.
func (fl *fileLease) renew() (lost bool) {
	err := fl.l.ifOurs(fl.dir, fl.id, fl.ours, func(path string) error {
		renewed := fl.ours
		renewed.RenewedAt = fl.l.now()
		return writeLease(path, renewed)
	})
	if errors.Is(err, ErrLeaseLost) {
		fl.lose(err)
		return true
	}
	if err != nil {
		fl.l.warn(fmt.Sprintf("session %s: renewing lease: %v", fl.id, err))
	}
	return false
}

// ifOurs runs f on the lease file under the session's fence lock (the lock
// take writes it under), only while the lease is still ours; otherwise the
// error is a *LeaseLostError.
func (l *Locker) ifOurs(dir, id string, ours lease, f func(path string) error) error {
	// take made the fence file; only the holder removes it, with the
	// session (Trash, Purge): a lease of a removed session is checked
	// without recreating it, as no taker can find the live lease stale.
	fence := lockOf(fencePath(dir, id))
	switch err := fence.Lock(); {
	case err == nil:
		defer fence.Unlock()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	path := LockPath(dir, id)
	data, err := os.ReadFile(path)
	if err := verdict(id, ours, data, err); err != nil {
		return err
	}
	return f(path)
}

// verdict tells from the lease file's content (or the error reading it)
// whether the lease is still ours: nil, a *LeaseLostError, or another error
// when the file could not be read at all (then nothing is known).
func verdict(id string, ours lease, data []byte, err error) error {
	if err == nil && len(bytes.TrimSpace(data)) == 0 {
		err = fs.ErrNotExist // made by a fence lock, never written
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &LeaseLostError{SessionID: id}
	}
	if err != nil {
		return fmt.Errorf("reading the lease: %w", err)
	}
	cur, err := parseLease(data)
	switch {
	case err != nil:
		return &LeaseLostError{SessionID: id, Unreadable: true}
	case cur.released():
		return &LeaseLostError{SessionID: id}
	case !cur.is(ours):
		return &LeaseLostError{SessionID: id, PID: cur.PID, Host: cur.Host}
	}
	return nil
}

// readLease returns the lease and its mtime; the mtime is valid whenever the
// file exists, so an unparsable lease can still be aged.
func readLease(path string) (lease, time.Time, error) {
	st, err := os.Stat(path)
	if err != nil {
		return lease{}, time.Time{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return lease{}, st.ModTime(), err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		// Made by a fence lock (see fencePath), never written.
		return lease{}, st.ModTime(), fs.ErrNotExist
	}
	ls, err := parseLease(data)
	return ls, st.ModTime(), err
}

func parseLease(data []byte) (lease, error) {
	var ls lease
	if err := json.Unmarshal(data, &ls); err != nil {
		return lease{}, err
	}
	if ls.released() {
		return ls, nil
	}
	if ls.PID <= 0 || ls.Host == "" || ls.AcquiredAt.IsZero() {
		return lease{}, fmt.Errorf("incomplete lease %s", data)
	}
	return ls, nil
}

// writeLease writes the lease in place, over the file's whole length with
// one write (padded with spaces, which JSON ignores), so no reader sees
// half of one and a process killed mid-write cannot leave one: a write
// call ends before its process does. Every writer and every check holds
// the session's fence lock. The file is created by the session's first
// turn and never replaced, so a turn allocates no inode and renames
// nothing. No fsync: a lease lost in a crash belonged to a turn that died
// with it.
func writeLease(path string, ls lease) error {
	data, err := json.Marshal(ls)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		err = inDir(filepath.Dir(path), func() (err error) {
			f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
			return err
		})
	}
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	rec := padLease(data, st.Size())
	if _, err := f.WriteAt(rec, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// leaseRecord is the size a lease is padded to: every lease fits (a host
// name is at most 255 bytes), so the file never changes size.
const leaseRecord = 512

// padLease is data padded with spaces to the record size, or to the
// file's size if something longer was there, ending in a newline.
func padLease(data []byte, size int64) []byte {
	n := max(int64(leaseRecord), size, int64(len(data)+1))
	rec := make([]byte, n)
	copy(rec, data)
	for i := len(data); i < len(rec)-1; i++ {
		rec[i] = ' '
	}
	rec[n-1] = '\n'
	return rec
}
