package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockHelperEnv makes the test binary a lease holder for the two-process test.
const lockHelperEnv = "OPENHEIM_SESSION_LOCK_HELPER"

func TestMain(m *testing.M) {
	if arg := os.Getenv(lockHelperEnv); arg != "" {
		dir, id, _ := strings.Cut(arg, "|")
		lease, err := (&Locker{Dir: dir}).Acquire(id)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin) // hold until killed or the parent goes away
		lease.Release()
		os.Exit(0)
	}
	if arg := os.Getenv(fenceHelperEnv); arg != "" {
		os.Exit(fenceHelper(arg))
	}
	os.Exit(m.Run())
}

const lockID = "550e8400-e29b-41d4-a716-446655440000"

func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	return cmd.Process.Pid
}

func writeRawLease(t *testing.T, dir string, ls lease) {
	t.Helper()
	if err := writeLease(LockPath(dir, lockID), ls); err != nil {
		t.Fatal(err)
	}
}

func TestLockerInProcessBusy(t *testing.T) {
	dir := t.TempDir()
	a, b := &Locker{Dir: dir}, &Locker{Dir: dir + "/./"}
	lease, err := a.Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	if _, err := b.Acquire(lockID); !errors.As(err, &busy) || busy.SessionID != lockID {
		t.Fatalf("second acquire: %v", err)
	}
	if !strings.Contains(busy.Error(), "is busy: a turn is already running on it in this process") {
		t.Errorf("message: %s", busy)
	}
	data, _ := os.ReadFile(LockPath(dir, lockID))
	var raw map[string]any
	if json.Unmarshal(data, &raw) != nil || raw["pid"] != float64(os.Getpid()) || raw["host"] == nil || raw["acquired_at"] == nil ||
		raw["epoch"] != float64(lease.Epoch()) || lease.Epoch() == 0 {
		t.Errorf("lease = %s, epoch %d", data, lease.Epoch())
	}
	lease.Release()
	lease.Release() // harmless
	if isHeld(t, dir) {
		t.Errorf("lease held after release")
	}
	r2, err := b.Acquire(lockID)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if r2.Epoch() <= lease.Epoch() {
		t.Errorf("epoch after release %d, before %d: want it greater", r2.Epoch(), lease.Epoch())
	}
	r2.Release()
	if _, err := a.Acquire("nope"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("bad id: %v", err)
	}
}

func TestLockerSecondProcessLocked(t *testing.T) {
	dir := t.TempDir()
	lease, err := (&Locker{Dir: dir}).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	other := &Locker{Dir: dir, PID: os.Getppid()}
	var locked *LockedError
	if _, err := other.Acquire(lockID); !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("other process: %v", err)
	}
	want := fmt.Sprintf("session %s is locked by pid %d on %s since ", lockID, os.Getpid(), locked.Host)
	if !strings.HasPrefix(locked.Error(), want) || !strings.HasSuffix(locked.Error(), ": another openheim is running a turn on it") {
		t.Errorf("message: %s", locked)
	}
}

func TestLockerExistingLease(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const host = "box"
	cases := []struct {
		name       string
		lease      *lease // nil: write garbage instead
		garbageAge time.Duration
		wantPID    int    // LockedError with this pid; -1: acquired
		wantHost   string // LockedError host
		wantWarn   string // acquired with a warning containing this
	}{
		{name: "live pid here", lease: &lease{PID: os.Getppid(), Host: host, AcquiredAt: now.Add(-time.Minute)}, wantPID: os.Getppid(), wantHost: host},
		// A long turn renews its lease and keeps it; a live pid whose lease
		// went silent is a reused pid or a hung holder.
		{name: "live pid here, old but renewed", lease: &lease{PID: os.Getppid(), Host: host, AcquiredAt: now.Add(-2 * time.Hour), RenewedAt: now.Add(-time.Minute)}, wantPID: os.Getppid(), wantHost: host},
		{name: "live pid here, silent", lease: &lease{PID: os.Getppid(), Host: host, AcquiredAt: now.Add(-2 * time.Hour)}, wantPID: -1, wantWarn: "not renewed for over 30m0s"},
		{name: "dead pid here", lease: &lease{PID: deadPID(t), Host: host, AcquiredAt: now.Add(-time.Minute)}, wantPID: -1, wantWarn: "its process is gone"},
		{name: "our pid left over", lease: &lease{PID: os.Getpid(), Host: host, AcquiredAt: now.Add(-time.Minute)}, wantPID: -1, wantWarn: "earlier holder"},
		{name: "other host young", lease: &lease{PID: 4242, Host: "far", AcquiredAt: now.Add(-29 * time.Minute)}, wantPID: 4242, wantHost: "far"},
		{name: "other host stale", lease: &lease{PID: 4242, Host: "far", AcquiredAt: now.Add(-31 * time.Minute)}, wantPID: -1, wantWarn: "pid 4242 on far"},
		// The new epoch is above the old lease's even with no counter.
		{name: "other host stale, epoch 41", lease: &lease{PID: 4242, Host: "far", AcquiredAt: now.Add(-31 * time.Minute), Epoch: 41}, wantPID: -1, wantWarn: "pid 4242 on far"},
		{name: "other host renewed", lease: &lease{PID: 4242, Host: "far", AcquiredAt: now.Add(-3 * time.Hour), RenewedAt: now.Add(-5 * time.Minute)}, wantPID: 4242, wantHost: "far"},
		{name: "unreadable young", garbageAge: 2 * time.Second, wantPID: 0, wantHost: "unknown"},
		{name: "unreadable old", garbageAge: time.Minute, wantPID: -1, wantWarn: "unreadable lease"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := LockPath(dir, lockID)
			if tc.lease != nil {
				writeRawLease(t, dir, *tc.lease)
			} else {
				os.WriteFile(path, []byte(`{"pid":12`), 0o600)
				mt := now.Add(-tc.garbageAge)
				os.Chtimes(path, mt, mt)
			}
			var warns []string
			l := &Locker{Dir: dir, Host: host, Now: func() time.Time { return now }, Warn: func(s string) { warns = append(warns, s) }}
			lease, err := l.Acquire(lockID)
			if tc.wantPID >= 0 {
				var locked *LockedError
				if !errors.As(err, &locked) || locked.PID != tc.wantPID || locked.Host != tc.wantHost {
					t.Fatalf("want locked by %d@%s, got %v", tc.wantPID, tc.wantHost, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer lease.Release()
			if len(warns) != 1 || !strings.Contains(warns[0], tc.wantWarn) {
				t.Errorf("warnings %q, want %q", warns, tc.wantWarn)
			}
			cur, _, err := readLease(path)
			if err != nil || cur.PID != os.Getpid() || cur.Host != host || cur.Epoch != lease.Epoch() ||
				(tc.lease != nil && cur.Epoch <= tc.lease.Epoch) {
				t.Errorf("lease after takeover: %+v %v", cur, err)
			}
		})
	}
}

func TestLockerReleaseKeepsTakenOverLease(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := &Locker{Dir: dir, Host: "a", Now: func() time.Time { return t0 }}
	b := &Locker{Dir: dir, Host: "b", Now: func() time.Time { return t0.Add(time.Hour) }, Warn: func(string) {}}
	relA, err := a.Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	relB, err := b.Acquire(lockID)
	if err != nil {
		t.Fatalf("stale takeover: %v", err)
	}
	relA.Release()
	if cur, _, err := readLease(LockPath(dir, lockID)); err != nil || cur.Host != "b" {
		t.Fatalf("a's release touched b's lease: %+v %v", cur, err)
	}
	relB.Release()
	if isHeld(t, dir) {
		t.Fatalf("b's release left the lease held")
	}
}

// TestLockerTwoProcesses runs a real second process holding the lease, then
// kills it without a chance to clean up, as a crash would.
func TestLockerTwoProcesses(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs unix processes")
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe)
	child.Env = append(os.Environ(), lockHelperEnv+"="+dir+"|"+lockID)
	stdin, _ := child.StdinPipe()
	defer stdin.Close()
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("child said %q", line)
	}

	var warns []string
	l := &Locker{Dir: dir, Warn: func(s string) { warns = append(warns, s) }}
	var locked *LockedError
	if _, err := l.Acquire(lockID); !errors.As(err, &locked) || locked.PID != child.Process.Pid {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("want locked by child %d, got %v", child.Process.Pid, err)
	}

	if err := child.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	child.Wait() // reaped, so kill(pid, 0) now reports ESRCH
	lease, err := l.Acquire(lockID)
	if err != nil {
		t.Fatalf("after kill -9: %v", err)
	}
	defer lease.Release()
	if len(warns) != 1 || !strings.Contains(warns[0], "pid "+strconv.Itoa(child.Process.Pid)) {
		t.Errorf("warnings: %q", warns)
	}
}

// TestLockerRace has many "processes" (distinct hosts, so none is stale)
// race for one session: the fence lock must let exactly one of them in.
func TestLockerRace(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = (&Locker{Dir: dir, Host: fmt.Sprint("h", i)}).Acquire(lockID)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var locked *LockedError
		switch {
		case err == nil:
			won++
		case !errors.As(err, &locked):
			t.Errorf("unexpected: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d winners", won)
	}
}

// TestLockerHeartbeat: a turn silent for longer than Stale keeps its lease
// because it renews it; once released, nothing renews it any more. The
// clock is the test's, so only the renewal itself is waited for.
func TestLockerHeartbeat(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	// Renewals every 10 ms of real time.
	a := &Locker{Dir: dir, Host: "a", Stale: 60 * time.Millisecond, Now: clock}
	held, err := a.Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	waitLease(t, dir, func(cur lease) bool { return cur.RenewedAt.Equal(clock()) })
	b := &Locker{Dir: dir, Host: "b", Stale: 60 * time.Millisecond, Now: clock, Warn: func(string) {}}
	var locked *LockedError
	if _, err := b.Acquire(lockID); !errors.As(err, &locked) || locked.Host != "a" {
		t.Fatalf("a renewed lease was taken over: %v", err)
	}
	held.Release()
	if isHeld(t, dir) {
		t.Fatal("released lease still held")
	}
	time.Sleep(50 * time.Millisecond) // five renewal periods
	if isHeld(t, dir) {
		t.Fatal("a released lease came back")
	}
	if held.Err() != nil {
		t.Fatalf("a released lease is not lost: %v", held.Err())
	}
}

// waitLease polls the lease file, read under the session's fence lock as
// the locker reads it, until ok says yes (at most 10 s).
func waitLease(t *testing.T, dir string, ok func(lease) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fl := lockOf(fencePath(dir, lockID))
		if err := lock(fl); err != nil {
			t.Fatal(err)
		}
		cur, _, err := readLease(LockPath(dir, lockID))
		fl.Unlock()
		if err == nil && ok(cur) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease never became as wanted: %+v %v", cur, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// isHeld tells whether lockID's lease file holds a lease (not one
// released, not none).
func isHeld(t *testing.T, dir string) bool {
	t.Helper()
	cur, _, err := readLease(LockPath(dir, lockID))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return !cur.released()
}
