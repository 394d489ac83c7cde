package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/openheim/openheim/runtime/atomicfile"
)

// fileLease is a Locker's lease on one session.
type fileLease struct {
	l       *Locker
	dir, id string
	ours    lease
	forget  func()

	stop, beatDone chan struct{}
	lost           chan struct{}
	loseOnce       sync.Once
	releaseOnce    sync.Once

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
		stop: make(chan struct{}), beatDone: make(chan struct{}), lost: make(chan struct{})}
	go fl.heartbeat()
	return fl
}

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
	if err := lock(fl.fence); err != nil {
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

// Release implements Lease: it stops the heartbeat and removes the lease if
// it is still ours (if someone took it over meanwhile, it is theirs now).
func (fl *fileLease) Release() {
	fl.releaseOnce.Do(func() {
		close(fl.stop)
		<-fl.beatDone
		fl.fenceMu.Lock()
		fl.released = true
		fl.fenceMu.Unlock()
		err := fl.l.ifOurs(fl.dir, fl.id, fl.ours, func(path string) error {
			if err := removeFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
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
	defer close(fl.beatDone)
	t := time.NewTicker(fl.l.staleAfter() / 6)
	defer t.Stop()
	for {
		select {
		case <-fl.stop:
			return
		case <-t.C:
		}
		if fl.renew() {
			return
		}
	}
}

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
	ls, err := parseLease(data)
	return ls, st.ModTime(), err
}

func parseLease(data []byte) (lease, error) {
	var ls lease
	if err := json.Unmarshal(data, &ls); err != nil {
		return lease{}, err
	}
	if ls.PID <= 0 || ls.Host == "" || ls.AcquiredAt.IsZero() {
		return lease{}, fmt.Errorf("incomplete lease %s", data)
	}
	return ls, nil
}

// writeLease replaces the lease by rename so no reader, and no process
// killed mid-write, ever leaves half of one (an unreadable lease blocks the
// session for UnreadableGrace). The replaced file is not reused: fences
// read the lease without the guard, and may still be reading it. No fsync:
// a lease lost in a crash belonged to a turn that died with it.
func writeLease(path string, ls lease) error {
	data, err := json.Marshal(ls)
	if err != nil {
		return err
	}
	return replaceFile(path, append(data, '\n'), atomicfile.SyncNone)
}

// epochFormat keeps the history dir's lease counter (.lock-epoch) at a
// fixed width, rewritten in place: a reader never sees it shortened.
const epochFormat = "%020d\n"

// lockedEpoch is nextEpoch under the history dir's guard, which orders the
// counter's read and write among every process's takers.
func lockedEpoch(dir string, floor uint64) (uint64, error) {
	unlock, err := lockGuard(filepath.Join(dir, guardName))
	if err != nil {
		return 0, err
	}
	defer unlock()
	return nextEpoch(dir, floor)
}

// nextEpoch hands out the history dir's next fencing token, called under
// the guard. floor is the epoch of the lease being replaced: should the
// counter have been lost, no token is given twice to a session. The
// counter is not synced: after a crash no holder is left to fence, and
// floor covers a lease that outlived its counter.
func nextEpoch(dir string, floor uint64) (uint64, error) {
	f, err := os.OpenFile(filepath.Join(dir, epochName), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		err = inDir(dir, func() (err error) {
			f, err = os.OpenFile(filepath.Join(dir, epochName), os.O_RDWR|os.O_CREATE, 0o600)
			return err
		})
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, len(fmt.Sprintf(epochFormat, 0)))
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return 0, err
	}
	counter := buf[:n]
	if n == 0 {
		// A new counter: carry on from the one versions before gofrs/flock
		// kept in the guard file (unreadable on Windows, where it is locked;
		// floor covers that).
		counter, _ = os.ReadFile(filepath.Join(dir, guardName))
	}
	last, _ := strconv.ParseUint(strings.TrimSpace(string(counter)), 10, 64)
	next := max(last, floor) + 1
	if _, err := f.WriteAt(fmt.Appendf(nil, epochFormat, next), 0); err != nil {
		return 0, err
	}
	return next, nil
}
