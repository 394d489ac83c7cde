package backendtest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

func testSessions(t *testing.T, h Harness) {
	t.Run("CreateAppendLoad", func(t *testing.T) {
		first, peer := h.Open(t)
		s := first.Sessions()
		m := newSession(t, s, "one")
		if err := s.Append(m.ID, text(message.RoleUser, "a"), text(message.RoleAssistant, "b")); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(m.ID, text(message.RoleUser, "c")); err != nil {
			t.Fatal(err)
		}
		// The peer sees every acked write.
		ps := peer.Sessions()
		if got := texts(t, ps, m.ID); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("peer loaded %q", got)
		}
		if n, err := ps.MessageCount(m.ID); err != nil || n != 3 {
			t.Fatalf("count %d %v", n, err)
		}
		if msg, err := ps.LoadMessage(m.ID, 1); err != nil || msg.JoinText() != "b" {
			t.Fatalf("message 1: %+v %v", msg, err)
		}
		if err := s.Create(m); err == nil {
			t.Fatal("creating a session twice succeeded")
		}
		if conv, _ := ps.Load(m.ID); conv.Meta.Title == nil || *conv.Meta.Title != "one" {
			t.Fatalf("meta %+v", conv.Meta)
		}
	})
	t.Run("Refusals", func(t *testing.T) {
		first, _ := h.Open(t)
		s := first.Sessions()
		unknown := session.NewMeta(time.Now()).ID
		if _, err := s.LoadMeta(unknown); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("LoadMeta unknown: %v", err)
		}
		if _, err := s.Load(unknown); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Load unknown: %v", err)
		}
		if _, err := s.MessageCount(unknown); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("MessageCount unknown: %v", err)
		}
		if _, err := s.LoadMeta("../etc/passwd"); !errors.Is(err, session.ErrInvalidID) {
			t.Fatalf("LoadMeta bad id: %v", err)
		}
		if err := s.Purge(unknown); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Purge unknown: %v", err)
		}
		if _, err := s.LoadMessage(newSession(t, s, "empty").ID, 0); err == nil {
			t.Fatal("message 0 of an empty session")
		}
	})
	t.Run("MetaListTrashPurge", func(t *testing.T) { testLifecycle(t, h) })
	t.Run("LargeMessage", func(t *testing.T) {
		// Past NATS's default max_payload (1 MiB): files are inlined in
		// messages up to 20 MiB.
		first, peer := h.Open(t)
		s := first.Sessions()
		m := newSession(t, s, "big")
		big := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
		if err := s.Append(m.ID, text(message.RoleUser, big), text(message.RoleAssistant, "ok")); err != nil {
			t.Fatal(err)
		}
		got := texts(t, peer.Sessions(), m.ID)
		if len(got) != 2 || got[0] != big || got[1] != "ok" {
			t.Fatalf("loaded %d messages, first %d bytes", len(got), len(got[0]))
		}
		if msg, err := peer.Sessions().LoadMessage(m.ID, 0); err != nil || msg.JoinText() != big {
			t.Fatalf("LoadMessage: %v", err)
		}
	})
}

func testLifecycle(t *testing.T, h Harness) {
	first, peer := h.Open(t)
	s := first.Sessions()
	v0 := s.Version()
	old := newSession(t, s, "old")
	time.Sleep(5 * time.Millisecond)
	young := newSession(t, s, "young")
	if v := s.Version(); v != "" && v == v0 {
		t.Fatal("version unchanged by a new session")
	}
	old.UpdatedAt = time.Now().Add(time.Hour).UTC()
	old.Title = session.Str("renamed")
	if err := s.SaveMeta(old); err != nil {
		t.Fatal(err)
	}
	list, err := peer.Sessions().List()
	if err != nil || len(list) != 2 || list[0].ID != old.ID || *list[0].Title != "renamed" {
		t.Fatalf("list %+v %v", list, err)
	}
	ids, err := peer.Sessions().IDs()
	want := []string{old.ID, young.ID}
	slices.Sort(want)
	if err != nil || !slices.Equal(ids, want) {
		t.Fatalf("ids %v %v", ids, err)
	}
	if err := s.Trash(young.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := peer.Sessions().List(); len(list) != 1 || list[0].ID != old.ID {
		t.Fatalf("trashed session listed: %+v", list)
	}
	if _, err := peer.Sessions().LoadMeta(young.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("trashed session loads: %v", err)
	}
	if err := s.Purge(young.ID); err != nil {
		t.Fatalf("purging a trashed session: %v", err)
	}
	if err := s.Purge(old.ID); err != nil {
		t.Fatal(err)
	}
	if ids, _ := peer.Sessions().IDs(); len(ids) != 0 {
		t.Fatalf("ids after purge %v", ids)
	}
	// A purged id can be used again (migrate back and forth).
	if err := s.Create(old); err != nil {
		t.Fatalf("re-creating a purged session: %v", err)
	}
	if n, err := s.MessageCount(old.ID); err != nil || n != 0 {
		t.Fatalf("re-created session has %d messages (%v)", n, err)
	}
}
