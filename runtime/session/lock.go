package session

import (
	"encoding/json"
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

// BusyError says this process is already running a turn on the session.
type BusyError struct{ SessionID string }

func (e *BusyError) Error() string {
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
	PID        int       `json:"pid"`
	Host       string    `json:"host"`
	AcquiredAt time.Time `json:"acquired_at"`
	// RenewedAt is the holder's last heartbeat: a running turn rewrites it
	// every Stale/6, so only a dead or hung holder's lease grows old.
	RenewedAt time.Time `json:"renewed_at,omitzero"`
}

// lastSeen is when the holder last proved it was alive.
func (a lease) lastSeen() time.Time {
	if a.RenewedAt.After(a.AcquiredAt) {
		return a.RenewedAt
	}
	return a.AcquiredAt
}

func (a lease) same(b lease) bool {
	return a.PID == b.PID && a.Host == b.Host && a.AcquiredAt.Equal(b.AcquiredAt)
}

// inProcess holds the sessions with a turn running here. The key includes
// host and pid so a Locker simulating another process has its own table.
var inProcess = struct {
	sync.Mutex
	held map[string]bool
}{held: map[string]bool{}}

// LockPath is the lease file of session id in the history dir.
func LockPath(dir, id string) string { return filepath.Join(dir, id+".lock") }

const guardName = ".lock-guard"

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

// Acquire takes session id for one turn. The error is a *BusyError when this
// process already runs a turn on it, a *LockedError when another process does.
// release is idempotent and removes the lease only while it is still ours.
func (l *Locker) Acquire(id string) (release func(), err error) {
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
	if err := l.take(dir, id, ours); err != nil {
		forget()
		return nil, err
	}
	stop := make(chan struct{})
	go l.heartbeat(dir, id, ours, stop)
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			if err := l.drop(dir, id, ours); err != nil {
				l.warn(fmt.Sprintf("session %s: releasing lease: %v", id, err))
			}
			forget()
		})
	}, nil
}

// take writes our lease unless a live one is there, under the guard so two
// processes cannot both see "no lease" and both write theirs.
func (l *Locker) take(dir, id string, ours lease) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session lock: %w", err)
	}
	unlock, err := lockGuard(filepath.Join(dir, guardName))
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
	default:
		reason, stale := l.stale(old, ours)
		if !stale {
			return &LockedError{SessionID: id, PID: old.PID, Host: old.Host, AcquiredAt: old.AcquiredAt}
		}
		l.warn(fmt.Sprintf("session %s: taking over the lease of pid %d on %s since %s: %s",
			id, old.PID, old.Host, old.AcquiredAt.Format(time.RFC3339), reason))
	}
	return writeLease(path, ours)
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

// heartbeat renews our lease until stop is closed, so other processes can
// tell a long turn from a dead one.
func (l *Locker) heartbeat(dir, id string, ours lease, stop <-chan struct{}) {
	t := time.NewTicker(l.staleAfter() / 6)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if err := l.renew(dir, id, ours); err != nil {
			l.warn(fmt.Sprintf("session %s: renewing lease: %v", id, err))
		}
	}
}

// renew rewrites our lease with a fresh RenewedAt, if it is still ours.
func (l *Locker) renew(dir, id string, ours lease) error {
	return l.ifOurs(dir, id, ours, func(path string) error {
		ours.RenewedAt = l.now()
		return writeLease(path, ours)
	})
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

// drop removes our lease; if someone took it over meanwhile it is theirs now.
func (l *Locker) drop(dir, id string, ours lease) error {
	return l.ifOurs(dir, id, ours, func(path string) error {
		if err := removeFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// ifOurs runs f on the lease file under the guard, only while the lease is
// still ours: released or taken over, there is nothing of ours to touch.
func (l *Locker) ifOurs(dir, id string, ours lease, f func(path string) error) error {
	unlock, err := lockGuard(filepath.Join(dir, guardName))
	if err != nil {
		return err
	}
	defer unlock()
	path := LockPath(dir, id)
	cur, _, err := readLease(path)
	if err != nil || !cur.same(ours) {
		return nil
	}
	return f(path)
}

// readLease returns the lease and its mtime; the mtime is valid whenever the
// file exists, so an unparsable lease can still be aged.
func readLease(path string) (lease, time.Time, error) {
	var ls lease
	st, err := os.Stat(path)
	if err != nil {
		return ls, time.Time{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ls, st.ModTime(), err
	}
	if err := json.Unmarshal(data, &ls); err != nil {
		return ls, st.ModTime(), err
	}
	if ls.PID <= 0 || ls.Host == "" || ls.AcquiredAt.IsZero() {
		return ls, st.ModTime(), fmt.Errorf("incomplete lease %s", data)
	}
	return ls, st.ModTime(), nil
}

// writeLease replaces the lease by rename so no reader, and no process
// killed mid-write, ever leaves half of one (an unreadable lease blocks the
// session for UnreadableGrace). No fsync: a lease lost in a crash belonged
// to a turn that died with it.
func writeLease(path string, ls lease) error {
	data, err := json.Marshal(ls)
	if err != nil {
		return err
	}
	return replaceFile(path, append(data, '\n'), replacement{reuseOld: true})
}
