package session

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

func newStore(t *testing.T) (*FileStore, *[]string) {
	t.Helper()
	s, err := NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	s.Warn = func(m string) { warnings = append(warnings, m) }
	return s, &warnings
}

func user(s string) message.Message {
	return message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(s)}}
}

func TestRoundTrip(t *testing.T) {
	s, _ := newStore(t)
	m := NewMeta(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	m.Title = Str("hello")
	if err := s.Create(m); err != nil {
		t.Fatal(err)
	}
	sig := "sig"
	msgs := []message.Message{
		user("hi"),
		{Role: message.RoleAssistant, Content: []message.Block{{Type: message.TypeThinking, Thinking: "hmm", Signature: &sig},
			{Type: message.TypeToolUse, ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: message.RoleTool, Content: []message.Block{message.ToolResult("c1", "read_file", "", false)}},
	}
	if err := s.Append(m.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	conv, err := s.Load(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Messages) != 3 || *conv.Meta.Title != "hello" || conv.Messages[1].Content[0].Thinking != "hmm" {
		t.Fatalf("conv = %+v", conv)
	}
	raw, _ := os.ReadFile(s.msgsPath(m.ID))
	for _, want := range []string{`"arguments":"{\"path\":\"a\"}"`, `"content":""`, `"signature":"sig"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("jsonl lacks %s: %s", want, raw)
		}
	}
	if strings.Contains(string(raw), "is_error") {
		t.Error("is_error must be omitted when false")
	}
	meta, _ := os.ReadFile(s.metaPath(m.ID))
	if strings.Contains(string(meta), "context_usage") || !strings.Contains(string(meta), `"skills": []`) {
		t.Errorf("meta shape: %s", meta)
	}
}

func TestTornLastLineDroppedAndRepairedOnAppend(t *testing.T) {
	s, warnings := newStore(t)
	m := NewMeta(time.Now())
	s.Create(m)
	s.Append(m.ID, user("one"))
	f, _ := os.OpenFile(s.msgsPath(m.ID), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"role":"user","content":[{"type":"te`)
	f.Close()
	conv, err := s.Load(m.ID)
	if err != nil || len(conv.Messages) != 1 || len(*warnings) != 1 {
		t.Fatalf("load: %v, %d msgs, warnings %v", err, len(conv.Messages), *warnings)
	}
	if err := s.Append(m.ID, user("two")); err != nil {
		t.Fatal(err)
	}
	conv, err = s.Load(m.ID)
	if err != nil || len(conv.Messages) != 2 || conv.Messages[1].JoinText() != "two" {
		t.Fatalf("after append: %v %+v", err, conv)
	}
}

func TestCorruptMiddleLineFails(t *testing.T) {
	s, _ := newStore(t)
	m := NewMeta(time.Now())
	s.Create(m)
	os.WriteFile(s.msgsPath(m.ID), []byte("{\"role\":\"user\",\"content\":[]}\nGARBAGE\n{\"role\":\"user\",\"content\":[]}\n"), 0o600)
	_, err := s.Load(m.ID)
	if err == nil || !strings.Contains(err.Error(), ".jsonl:2") {
		t.Fatalf("err = %v", err)
	}
}

func TestIDsValidated(t *testing.T) {
	s, _ := newStore(t)
	for _, id := range []string{"../etc/passwd", "x", "550E8400-E29B-41D4-A716-446655440000"} {
		if _, err := s.Load(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("%q: err = %v", id, err)
		}
	}
	if _, err := s.Load("550e8400-e29b-41d4-a716-446655440000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v", err)
	}
}

func TestListNewestFirstAndLatest(t *testing.T) {
	s, _ := newStore(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i, cwd := range []string{"/a", "/b", "/a"} {
		m := NewMeta(base)
		m.UpdatedAt = base.Add(time.Duration(i) * time.Hour)
		m.Cwd = Str(cwd)
		s.Create(m)
		ids = append(ids, m.ID)
	}
	all, _ := s.List()
	if len(all) != 3 || all[0].ID != ids[2] || all[2].ID != ids[0] {
		t.Fatalf("order wrong")
	}
	l, err := Latest(s, "/b")
	if err != nil || l.ID != ids[1] {
		t.Fatalf("latest = %v %v", l, err)
	}
	if _, err := Latest(s, "/c"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

func TestTitle(t *testing.T) {
	cases := map[string]string{
		"  hello\n\n world  ":     "hello world",
		strings.Repeat("ab", 100): strings.Repeat("ab", 40),
		strings.Repeat("é", 90):   strings.Repeat("é", 80),
		"":                        "",
	}
	for in, want := range cases {
		if got := Title(in); got != want {
			t.Errorf("Title(%q) = %q, want %q", in, got, want)
		}
	}
}
