package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

// fenceHelperEnv makes the test binary a lease holder driven by stdin, for
// the two-process fence tests.
const fenceHelperEnv = "OPENHEIM_SESSION_FENCE_HELPER"

// fenceHelper holds the lease of session arg ("dir|id") in its own process
// and answers one line per command line: "append TEXT" stores a message
// under the fence, "loop" appends until refused, "renew" renews the lease
// as the heartbeat does (which runs every 5 minutes: never, here, so a
// SIGSTOP never lands while it holds the guard) and tells whether it is
// lost.
func fenceHelper(arg string) int {
	dir, id, _ := strings.Cut(arg, "|")
	held, err := (&Locker{Dir: dir}).Acquire(id)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	lease := held.(*fileLease)
	defer lease.Release()
	store := Fenced(&FileStore{Dir: dir}, id, lease)
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, text, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "append":
			if err := store.Append(id, textMsg(text)); err != nil {
				fmt.Println("refused:", err)
			} else {
				fmt.Println("ok")
			}
		case "loop":
			for n := 0; ; n++ {
				if err := store.Append(id, textMsg(fmt.Sprint("a-", n))); err != nil {
					fmt.Printf("stopped after %d: %v\n", n, err)
					break
				}
			}
		case "renew":
			if lease.renew() {
				fmt.Println("lost:", lease.Err())
			} else {
				fmt.Println("renewed")
			}
		}
	}
	return 0
}

func textMsg(s string) message.Message {
	return message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(s)}}
}

func texts(t *testing.T, s *FileStore, id string) []string {
	t.Helper()
	conv, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range conv.Messages {
		out = append(out, m.JoinText())
	}
	return out
}

func newLeaseStore(t *testing.T) *FileStore {
	t.Helper()
	s, err := NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := NewMeta(time.Now())
	m.ID = lockID
	if err := s.Create(m); err != nil {
		t.Fatal(err)
	}
	return s
}

// taker is another process in all but pid: it sees every lease as an hour
// old, so it takes them over as stale.
func taker(dir string) *Locker {
	return &Locker{Dir: dir, Host: "b", Now: func() time.Time { return time.Now().Add(time.Hour) }, Warn: func(string) {}}
}

// TestLeasePausedHolderIsFenced: A holds the session and is paused (its
// renewals are 5 minutes apart, so none runs); B takes it over as stale and
// appends; A's next append is refused with the typed error naming B, and
// nothing of A's is stored after B's step, nor is B's meta overwritten.
func TestLeasePausedHolderIsFenced(t *testing.T) {
	s := newLeaseStore(t)
	a, err := (&Locker{Dir: s.Dir, Host: "a"}).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	storeA := Fenced(s, lockID, a)
	if err := storeA.Append(lockID, textMsg("a1")); err != nil {
		t.Fatal(err)
	}
	b, err := taker(s.Dir).Acquire(lockID)
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	defer b.Release()
	if b.Epoch() <= a.Epoch() {
		t.Errorf("epochs: a %d, b %d", a.Epoch(), b.Epoch())
	}
	storeB := Fenced(s, lockID, b)
	if err := storeB.Append(lockID, textMsg("b1")); err != nil {
		t.Fatal(err)
	}
	metaB, _ := s.LoadMeta(lockID)
	metaB.Title = Str("b's")
	if err := storeB.SaveMeta(*metaB); err != nil {
		t.Fatal(err)
	}

	err = storeA.Append(lockID, textMsg("a2"))
	var lost *LeaseLostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrLeaseLost) || lost.PID != os.Getpid() || lost.Host != "b" {
		t.Fatalf("a's append after the takeover: %v", err)
	}
	want := fmt.Sprintf("the session's lease was taken over by pid %d on host b; this turn was stopped", os.Getpid())
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	select {
	case <-a.Lost():
	default:
		t.Error("a refused append left the lease not lost")
	}
	if a.Err() != err {
		t.Errorf("Err() = %v", a.Err())
	}
	metaA := *metaB
	metaA.Title = Str("a's")
	if err := storeA.SaveMeta(metaA); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a's meta after the takeover: %v", err)
	}
	if got := texts(t, s, lockID); strings.Join(got, ",") != "a1,b1" {
		t.Errorf("stored %q, want a1,b1", got)
	}
	if m, _ := s.LoadMeta(lockID); *m.Title != "b's" {
		t.Errorf("title %q: a's meta overwrote b's", *m.Title)
	}
	// Appends to other sessions are not the lease's business.
	other := NewMeta(time.Now())
	s.Create(other)
	if err := storeA.Append(other.ID, textMsg("x")); err != nil {
		t.Errorf("another session's append: %v", err)
	}
}

// TestLeaseFenceWhenGone: a lease removed from under its holder (taken over
// and released since) refuses too, and says so.
func TestLeaseFenceWhenGone(t *testing.T) {
	s := newLeaseStore(t)
	a, err := (&Locker{Dir: s.Dir, Host: "a"}).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := taker(s.Dir).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	ran := false
	err = a.Fence(func() error { ran = true; return nil })
	var lost *LeaseLostError
	if !errors.As(err, &lost) || lost.PID != 0 || ran || !strings.Contains(err.Error(), "lease is gone") {
		t.Fatalf("fence after takeover and release: %v (ran %v)", err, ran)
	}
}

// TestLeaseRenewalFindsTakeover: a holder whose renewal finds the lease
// taken over learns it at once, without appending, and a turn context
// watching the lease is cancelled with that error as its cause.
func TestLeaseRenewalFindsTakeover(t *testing.T) {
	s := newLeaseStore(t)
	a, err := (&Locker{Dir: s.Dir, Host: "a", Stale: 60 * time.Millisecond}).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	ctx, stop := LeaseContext(context.Background(), a)
	defer stop()
	b, err := taker(s.Dir).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the turn context was not cancelled")
	}
	var lost *LeaseLostError
	if !errors.As(context.Cause(ctx), &lost) || lost.Host != "b" || a.Err() != context.Cause(ctx) {
		t.Fatalf("cause %v, Err %v", context.Cause(ctx), a.Err())
	}
	a.Release()
	if cur, _, err := readLease(LockPath(s.Dir, lockID)); err != nil || cur.Host != "b" {
		t.Fatalf("a's release touched b's lease: %+v %v", cur, err)
	}
}

// TestLeaseTakeoverWaitsForFencedWrite: a write that passed the check
// before the takeover ends before the new holder's Acquire returns, so the
// old holder's step cannot land after the new holder's.
func TestLeaseTakeoverWaitsForFencedWrite(t *testing.T) {
	s := newLeaseStore(t)
	a, err := (&Locker{Dir: s.Dir, Host: "a"}).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	inWrite, finish := make(chan struct{}), make(chan struct{})
	var written atomic.Bool
	go a.Fence(func() error {
		close(inWrite)
		<-finish
		written.Store(true)
		return nil
	})
	<-inWrite
	acquired := make(chan Lease)
	warns := make(chan string, 4)
	bl := taker(s.Dir)
	bl.Warn = func(w string) { warns <- w }
	go func() {
		b, err := bl.Acquire(lockID)
		if err != nil {
			t.Error(err)
		}
		acquired <- b
	}()
	select {
	case <-acquired:
		t.Fatal("the takeover returned while a checked write was in flight")
	case <-time.After(200 * time.Millisecond):
	}
	close(finish)
	b := <-acquired
	defer b.Release()
	if !written.Load() {
		t.Fatal("the takeover returned before the write ended")
	}
	// Said before waiting, then the takeover itself.
	if w := <-warns; !strings.Contains(w, "waiting for the previous holder's write in progress to end") {
		t.Errorf("warning %q", w)
	}
	if w := <-warns; !strings.Contains(w, "taking over the lease") {
		t.Errorf("warning %q", w)
	}
	if err := a.Fence(func() error { return nil }); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's next fence: %v", err)
	}
}

// TestLeaseEpochCounter: a session's epochs grow across releases (a
// released lease stays in its file, marked, with its epoch) and over a
// lease taken over; each session counts on its own, so turns of
// different sessions share no file.
func TestLeaseEpochCounter(t *testing.T) {
	dir := t.TempDir()
	l := &Locker{Dir: dir}
	var last uint64
	for range 3 {
		held, err := l.Acquire(lockID)
		if err != nil {
			t.Fatal(err)
		}
		if held.Epoch() <= last {
			t.Fatalf("epoch %d after %d", held.Epoch(), last)
		}
		last = held.Epoch()
		held.Release()
		cur, _, err := readLease(LockPath(dir, lockID))
		if err != nil || !cur.released() || cur.Epoch != last {
			t.Fatalf("after release: %+v %v", cur, err)
		}
	}
	other, err := l.Acquire("650e8400-e29b-41d4-a716-446655440000")
	if err != nil {
		t.Fatal(err)
	}
	if other.Epoch() != 1 {
		t.Errorf("another session's first epoch %d", other.Epoch())
	}
	other.Release()
	writeRawLease(t, dir, lease{PID: 4242, Host: "far", AcquiredAt: time.Now().Add(-time.Hour), Epoch: 99})
	held, err := (&Locker{Dir: dir, Warn: func(string) {}}).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	if held.Epoch() != 100 {
		t.Fatalf("epoch %d after taking over a lease of epoch 99", held.Epoch())
	}
}

// TestLeaseWrittenInPlace: a turn changes no entry of the history dir once
// its session has run one: the lease file keeps its inode through
// acquire, renewal and release, a shorter lease leaves no tail of a
// longer one, and a lease of any length is read back.
func TestLeaseWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	l := &Locker{Dir: dir, Host: strings.Repeat("h", 255)}
	held, err := l.Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	path := LockPath(dir, lockID)
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		entries, _ := os.ReadDir(dir)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	before := names()
	held.Release()
	for range 3 {
		held, err = (&Locker{Dir: dir}).Acquire(lockID)
		if err != nil {
			t.Fatal(err)
		}
		if err := held.Fence(func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		held.Release()
	}
	now, err := os.Stat(path)
	if got := names(); err != nil || !slices.Equal(got, before) || !os.SameFile(first, now) {
		t.Fatalf("entries %v -> %v, same file %v (%v)", before, got, err == nil && os.SameFile(first, now), err)
	}
	data, _ := os.ReadFile(path)
	if len(data) != leaseRecord {
		t.Errorf("lease file %d bytes, want %d", len(data), leaseRecord)
	}
	cur, err := parseLease(data)
	if err != nil || !cur.released() || cur.Epoch != 4 {
		t.Fatalf("%+v %v", cur, err)
	}
}

// TestFenceLocksItsOwnFile: a fence holds the lock of the session's fence
// file, never of its data: on Windows a locked byte cannot be read through
// another handle, and readers of the messages must never fail because a
// turn is appending.
func TestFenceLocksItsOwnFile(t *testing.T) {
	s := newLeaseStore(t)
	if err := s.Append(lockID, textMsg("x")); err != nil {
		t.Fatal(err)
	}
	a, err := (&Locker{Dir: s.Dir}).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	err = a.Fence(func() error {
		for path, wantFree := range map[string]bool{
			fencePath(s.Dir, lockID): false,
			s.msgsPath(lockID):       true,
			s.metaPath(lockID):       true,
		} {
			fl := lockOf(path)
			ok, err := fl.TryLock()
			if err != nil || ok != wantFree {
				t.Errorf("%s: lock taken %v (%v) during a fence, want %v", path, ok, err, wantFree)
			}
			fl.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
