package session

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// BusyError says a turn is already running on the session: in this
// process, or (Holder set) on another replica of a cluster.
type BusyError struct {
	SessionID string
	Holder    string // the replica running it; "" for this process
}

func (e *BusyError) Error() string {
	if e.Holder != "" {
		return "session " + e.SessionID + " is busy: a turn is already running on it on replica " + e.Holder
	}
	return "session " + e.SessionID + " is busy: a turn is already running on it in this process"
}

// LockedError says another process holds the session's lease. PID is 0 and
// Host "unknown" when the lease exists but could not be read.
type LockedError struct {
	SessionID  string
	PID        int
	Host       string
	AcquiredAt time.Time
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("session %s is locked by pid %d on %s since %s: another openheim is running a turn on it",
		e.SessionID, e.PID, e.Host, e.AcquiredAt.Format(time.RFC3339))
}

// Default lease timings; see Locker.
const (
	DefaultStale           = 30 * time.Minute
	DefaultUnreadableGrace = 10 * time.Second
)

// Locker grants one turn at a time per session, within this process and
// across processes (history/<id>.lock). Only turns take the lease: reading a
// session never does, so listing and loading never wait on a running turn.
//
// Its leases fence the FileStore in the same dir: Fence locks the session's
// fence file (see fencePath), which taking, renewing and releasing the lease
// also lock (see take).
type Locker struct {
	Dir  string // the history dir
	Now  func() time.Time
	Warn func(string)
	// Stale is how long a lease may go without its heartbeat before it is
	// taken over: a remote pid cannot be probed, and a local pid may have
	// been reused by an unrelated process, so silence is the sign of death.
	Stale time.Duration
	// UnreadableGrace is how long a lease that cannot be parsed still counts
	// as held, covering writers that do not replace it atomically.
	UnreadableGrace time.Duration
	// Host and PID identify the holder; they are fields so tests can stand
	// in for another process.
	Host string
	PID  int
}

type lease struct {
	PID        int       `json:"pid,omitempty"` // these three are empty only in a released lease
	Host       string    `json:"host,omitempty"`
	AcquiredAt time.Time `json:"acquired_at,omitzero"`
	// RenewedAt is the holder's last heartbeat: a running turn rewrites it
	// every Stale/6, so only a dead or hung holder's lease grows old.
	RenewedAt time.Time `json:"renewed_at,omitzero"`
	// Epoch is the fencing token (see Lease.Epoch); 0 in the leases of
	// versions before it, which then match no holder of this one.
	Epoch uint64 `json:"epoch,omitempty"`
	// ReleasedAt marks a lease given back: the session is free, and its
	// next turn's epoch follows this one's.
	ReleasedAt time.Time `json:"released_at,omitzero"`
}

// released reports whether a is the mark of a lease given back.
func (a lease) released() bool { return !a.ReleasedAt.IsZero() && a.PID == 0 && a.Host == "" }

// lastSeen is when the holder last proved it was alive.
func (a lease) lastSeen() time.Time {
	if a.RenewedAt.After(a.AcquiredAt) {
		return a.RenewedAt
	}
	return a.AcquiredAt
}

// is reports whether a and b are the same holding of the lease.
func (a lease) is(b lease) bool {
	return a.Epoch == b.Epoch && a.PID == b.PID && a.Host == b.Host && a.AcquiredAt.Equal(b.AcquiredAt)
}

// inProcess holds the sessions with a turn running here. The key includes
// host and pid so a Locker simulating another process has its own table.
var inProcess = struct {
	sync.Mutex
	held map[string]bool
}{held: map[string]bool{}}

// LockPath is the lease file of session id in the history dir.
func LockPath(dir, id string) string { return filepath.Join(dir, id+".lock") }

func (l *Locker) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

func (l *Locker) warn(msg string) {
	if l.Warn != nil {
		l.Warn(msg)
		return
	}
	slog.Warn(msg)
}

func (l *Locker) self() (host string, pid int) {
	host, pid = l.Host, l.PID
	if host == "" {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		} else {
			host = "localhost"
		}
	}
	if pid == 0 {
		pid = os.Getpid()
	}
	return host, pid
}

var _ Leaser = (*Locker)(nil)

// Acquire takes session id for one turn. The error is a *BusyError when this
// process already runs a turn on it, a *LockedError when another process does.
// The lease renews itself until Release.
func (l *Locker) Acquire(id string) (Lease, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(l.Dir)
	if err != nil {
		return nil, err
	}
	host, pid := l.self()
	key := host + "\x00" + strconv.Itoa(pid) + "\x00" + filepath.Join(dir, id)
	inProcess.Lock()
	if inProcess.held[key] {
		inProcess.Unlock()
		return nil, &BusyError{SessionID: id}
	}
	inProcess.held[key] = true
	inProcess.Unlock()
	forget := func() {
		inProcess.Lock()
		delete(inProcess.held, key)
		inProcess.Unlock()
	}

	ours := lease{PID: pid, Host: host, AcquiredAt: l.now()}
	if err := l.take(dir, id, &ours); err != nil {
		forget()
		return nil, err
	}
	return startLease(l, dir, id, ours, forget), nil
}

// take writes our lease, with the next epoch, unless a live one is there.
// It runs under the session's fence lock, the lock every check of the
// lease takes (a holder's Fence, renewal and release, another taker): two
// processes cannot both see "no lease" and both write theirs, and a write
// that a displaced holder checked before our lease replaced it has ended
// before ours is written (a holder stopped mid-write, SIGSTOP, is waited
// for until it resumes). The epoch is the session's own counter, kept in
// its lease file (released leases stay, marked), so turns of different
// sessions share no lock and no file.
func (l *Locker) take(dir, id string, ours *lease) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session lock: %w", err)
	}
	unlock, err := l.lockFence(dir, id, *ours)
	if err != nil {
		return fmt.Errorf("session lock: %w", err)
	}
	defer unlock()

	path := LockPath(dir, id)
	old, mtime, err := readLease(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		if age := ours.AcquiredAt.Sub(mtime); age < l.grace() {
			return &LockedError{SessionID: id, Host: "unknown", AcquiredAt: mtime.UTC()}
		}
		l.warn(fmt.Sprintf("session %s: taking over an unreadable lease from %s (%v)",
			id, mtime.UTC().Format(time.RFC3339), err))
	case old.released():
	default:
		reason, stale := l.stale(old, *ours)
		if !stale {
			return &LockedError{SessionID: id, PID: old.PID, Host: old.Host, AcquiredAt: old.AcquiredAt}
		}
		l.warn(fmt.Sprintf("session %s: taking over the lease of pid %d on %s since %s: %s",
			id, old.PID, old.Host, old.AcquiredAt.Format(time.RFC3339), reason))
	}
	ours.Epoch = old.Epoch + 1
	if err := writeLease(path, *ours); err != nil {
		return fmt.Errorf("session lock: %w", err)
	}
	return nil
}

// lockFence takes the session's fence lock for take. When a holder has a
// write in flight and its lease is one we would take over, it says so
// before waiting: a holder stopped mid-write is waited for until it
// resumes.
func (l *Locker) lockFence(dir, id string, ours lease) (unlock func(), err error) {
	fl := lockOf(fencePath(dir, id))
	ok, err := fl.TryLock()
	if errors.Is(err, fs.ErrNotExist) {
		err = lock(fl) // creates it
		ok = err == nil
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		if old, _, err := readLease(LockPath(dir, id)); err == nil && !old.released() {
			if _, stale := l.stale(old, ours); stale {
				l.warn(fmt.Sprintf("session %s: waiting for the previous holder's write in progress to end", id))
			}
		}
		if err := fl.Lock(); err != nil {
			return nil, err
		}
	}
	return func() { fl.Unlock() }, nil
}

// stale decides whether old may be taken over: its process is gone, or it
// has not renewed the lease for Stale (a long turn keeps renewing, so age
// alone never steals a live turn's session).
func (l *Locker) stale(old, ours lease) (reason string, stale bool) {
	if old.Host == ours.Host && old.PID == ours.PID {
		// Our pid but not in our table: a process that had this pid before
		// us died holding it, or a release was skipped.
		return "left over by an earlier holder of this pid", true
	}
	if old.Host == ours.Host && canProbePIDs && !pidAlive(old.PID) {
		return "its process is gone", true
	}
	if silent := ours.AcquiredAt.Sub(old.lastSeen()); silent > l.staleAfter() {
		return fmt.Sprintf("not renewed for over %s", l.staleAfter()), true
	}
	return "", false
}

func (l *Locker) staleAfter() time.Duration {
	if l.Stale > 0 {
		return l.Stale
	}
	return DefaultStale
}

func (l *Locker) grace() time.Duration {
	if l.UnreadableGrace > 0 {
		return l.UnreadableGrace
	}
	return DefaultUnreadableGrace
}
