package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

func created(t *testing.T, s *FileStore, msgs ...message.Message) Meta {
	t.Helper()
	m := NewMeta(time.Now())
	if err := s.Create(m); err != nil {
		t.Fatal(err)
	}
	if len(msgs) > 0 {
		if err := s.Append(m.ID, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestTrash(t *testing.T) {
	s, warns := newStore(t)
	keep := created(t, s, user("a"))
	gone := created(t, s, user("b"), user("c"))
	// A lease left by a dead process must not survive the session, nor
	// the fence file of its turns.
	os.WriteFile(fencePath(s.Dir, gone.ID), nil, 0o600) // the lease file itself on unix
	writeLease(LockPath(s.Dir, gone.ID), lease{PID: deadPID(t), Host: mustHost(t), AcquiredAt: time.Now()})
	if err := s.Trash(gone.ID); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.metaPath(gone.ID), s.msgsPath(gone.ID), LockPath(s.Dir, gone.ID), fencePath(s.Dir, gone.ID)} {
		if exists(p) {
			t.Errorf("%s still there", p)
		}
	}
	for _, n := range []string{gone.ID + ".json", gone.ID + ".jsonl"} {
		if !exists(filepath.Join(s.Dir, TrashDir, n)) {
			t.Errorf("trash lacks %s", n)
		}
	}
	if len(*warns) != 1 {
		t.Errorf("warnings: %q", *warns)
	}
	all, err := s.List()
	if err != nil || len(all) != 1 || all[0].ID != keep.ID {
		t.Fatalf("list = %v %v", all, err)
	}
	if err := s.Trash(gone.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second trash: %v", err)
	}
	if _, err := s.Load(gone.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("load trashed: %v", err)
	}
}

func mustHost(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		t.Skip("no hostname")
	}
	return h
}

func TestTrashAndPurgeRespectRunningTurn(t *testing.T) {
	s, _ := newStore(t)
	m := created(t, s, user("a"))
	held, err := (&Locker{Dir: s.Dir}).Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	if err := s.Trash(m.ID); !errors.As(err, &busy) {
		t.Errorf("trash during a turn: %v", err)
	}
	if err := s.Purge(m.ID); !errors.As(err, &busy) {
		t.Errorf("purge during a turn: %v", err)
	}
	held.Release()
	if err := s.Trash(m.ID); err != nil {
		t.Fatal(err)
	}
}

func TestPurge(t *testing.T) {
	s, _ := newStore(t)
	live := created(t, s, user("a"))
	trashed := created(t, s, user("b"))
	if err := s.Trash(trashed.ID); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(fencePath(s.Dir, live.ID), nil, 0o600) // its turns' fence file
	for _, id := range []string{live.ID, trashed.ID} {
		if err := s.Purge(id); err != nil {
			t.Fatalf("purge %s: %v", id, err)
		}
		if err := s.Purge(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("purge again: %v", err)
		}
	}
	entries, _ := os.ReadDir(s.Dir)
	trash, _ := os.ReadDir(filepath.Join(s.Dir, TrashDir))
	for _, e := range append(entries, trash...) {
		if strings.HasPrefix(e.Name(), live.ID) || strings.HasPrefix(e.Name(), trashed.ID) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestMessageCount(t *testing.T) {
	s, _ := newStore(t)
	cases := []struct {
		name string
		msgs int
		tail string // bytes appended after the messages
		want int
	}{
		{"empty", 0, "", 0},
		{"three", 3, "", 3},
		{"torn tail", 2, `{"role":"user","con`, 2},
		{"many", 5000, "", 5000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []message.Message
			for range tc.msgs {
				msgs = append(msgs, user(strings.Repeat("x", 50)))
			}
			m := created(t, s, msgs...)
			if tc.tail != "" {
				f, _ := os.OpenFile(s.msgsPath(m.ID), os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString(tc.tail)
				f.Close()
			}
			if n, err := s.MessageCount(m.ID); err != nil || n != tc.want {
				t.Fatalf("count = %d %v, want %d", n, err, tc.want)
			}
		})
	}
	m := created(t, s)
	os.Remove(s.msgsPath(m.ID))
	if n, err := s.MessageCount(m.ID); n != 0 || err != nil {
		t.Errorf("no jsonl: %d %v", n, err)
	}
	if _, err := s.MessageCount(lockID); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

func toolTurn(id string) []message.Message {
	return []message.Message{
		{Role: message.RoleAssistant, Content: []message.Block{message.Text("let me look"),
			{Type: message.TypeToolUse, ID: id, Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: message.RoleTool, Content: []message.Block{message.ToolResult(id, "read_file", "data", false)}},
	}
}

func TestFork(t *testing.T) {
	s, _ := newStore(t)
	// 0 user, 1 assistant(tool_use), 2 tool, 3 assistant, 4 user
	msgs := append(append([]message.Message{user("q")}, toolTurn("c1")...),
		message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text("done")}}, user("more"))
	src := NewMeta(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	src.Title, src.Model, src.Provider, src.Cwd = Str("work"), Str("m"), Str("p"), Str("/w")
	src.Skills = []string{"go"}
	s.Create(src)
	s.Append(src.ID, msgs...)
	untitled := created(t, s, user("x"))

	now := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		src   string
		upTo  int
		want  int
		title *string
	}{
		{"all (negative)", src.ID, -1, 5, Str("work (fork)")},
		{"all (past end)", src.ID, 99, 5, Str("work (fork)")},
		{"none", src.ID, 0, 0, Str("work (fork)")},
		{"first", src.ID, 1, 1, Str("work (fork)")},
		{"after tool_use keeps its results", src.ID, 2, 3, Str("work (fork)")},
		{"after results", src.ID, 3, 3, Str("work (fork)")},
		{"middle", src.ID, 4, 4, Str("work (fork)")},
		{"untitled stays untitled", untitled.ID, -1, 1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Fork(s, tc.src, tc.upTo, now)
			if err != nil {
				t.Fatal(err)
			}
			conv, err := s.Load(m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(conv.Messages) != tc.want {
				t.Fatalf("%d messages, want %d", len(conv.Messages), tc.want)
			}
			if (tc.title == nil) != (m.Title == nil) || (tc.title != nil && *m.Title != *tc.title) {
				t.Errorf("title = %v", m.Title)
			}
			if m.ID == tc.src || !m.CreatedAt.Equal(now) || !m.UpdatedAt.Equal(now) {
				t.Errorf("meta = %+v", m)
			}
			if tc.src == src.ID && (*m.Model != "m" || *m.Provider != "p" || *m.Cwd != "/w" || len(m.Skills) != 1) {
				t.Errorf("settings not copied: %+v", m)
			}
		})
	}
	if _, err := Fork(s, lockID, -1, now); !errors.Is(err, ErrNotFound) {
		t.Errorf("fork missing: %v", err)
	}
}

func TestForkCutParallelToolMessages(t *testing.T) {
	// Some providers' results arrive as one tool message per call.
	msgs := []message.Message{
		user("q"),
		{Role: message.RoleAssistant, Content: []message.Block{
			{Type: message.TypeToolUse, ID: "a", Name: "x"}, {Type: message.TypeToolUse, ID: "b", Name: "x"}}},
		{Role: message.RoleTool, Content: []message.Block{message.ToolResult("a", "x", "", false)}},
		{Role: message.RoleTool, Content: []message.Block{message.ToolResult("b", "x", "", false)}},
		user("next"),
	}
	for upTo, want := range map[int]int{1: 1, 2: 4, 3: 4, 4: 4, 5: 5} {
		if got := forkCut(msgs, upTo); got != want {
			t.Errorf("forkCut(%d) = %d, want %d", upTo, got, want)
		}
	}
}

// TestLeaseFilesGoWithTheSession: trashing a session that is not there
// leaves no lease file behind, and a holder whose session was removed
// under it is refused by its next fence without recreating the file.
func TestLeaseFilesGoWithTheSession(t *testing.T) {
	s, _ := newStore(t)
	missing := NewMeta(time.Now()).ID
	if err := s.Trash(missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("trash of a missing session: %v", err)
	}
	if exists(LockPath(s.Dir, missing)) || exists(fencePath(s.Dir, missing)) {
		t.Error("trashing a missing session left its lease file")
	}
	m := created(t, s, user("a"))
	held, err := (&Locker{Dir: s.Dir}).Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	removeLease(s.Dir, m.ID) // as Trash or Purge by another process would
	if err := held.Fence(func() error { t.Error("wrote without a lease"); return nil }); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("fence after the lease file went: %v", err)
	}
	if exists(LockPath(s.Dir, m.ID)) {
		t.Error("the fence recreated the lease file")
	}
}
