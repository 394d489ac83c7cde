package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/replay"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

func load(t *testing.T, toml string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(toml), 0o600)
	cfg, err := config.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Getenv = func(string) string { return "" }
	cfg.WorkDir = dir
	return cfg
}

func TestNewProviderPerKind(t *testing.T) {
	cfg := load(t, `
[providers.openai]
default_model = "m"
api_key = "k"
[providers.anthropic]
default_model = "m"
[providers.gemini]
default_model = "m"
api_key = "k"
[providers.local]
api_base = "http://127.0.0.1:1/v1"
default_model = "m"
[providers.replay]
kind = "replay"
cassette = "missing.json"
`)
	for name, wantErr := range map[string]string{
		"openai": "", "gemini": "", "local": "",
		"anthropic": `provider "anthropic" has no API key: set $ANTHROPIC_API_KEY or api_key`,
		"replay":    "missing.json",
	} {
		r, err := cfg.Resolve(name, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewProvider(r)
		if (wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: err = %v, want %q", name, err, wantErr)
		}
	}
}

func TestNewEmbedder(t *testing.T) {
	if _, err := NewEmbedder(load(t, "")); !errors.Is(err, ErrNoEmbeddings) {
		t.Fatalf("err = %v", err)
	}
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	cfg := load(t, `
[providers.local]
api_base = "`+srv.URL()+`"
default_model = "m"
[memory]
embedding_provider = "local"
embedding_model = "emb"
`)
	e, err := NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.Embed(context.Background(), []string{"a", "b"})
	if err != nil || len(vs) != 2 {
		t.Fatalf("%v %v", vs, err)
	}
}

// TestPromptRecordsAndContinues runs two turns through the engine against
// the fake server, recording the first.
func TestPromptRecordsAndContinues(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Text: []string{"one"}}, llmtest.Reply{Text: []string{"two"}})
	cfg := load(t, `
[providers.local]
api_base = "`+srv.URL()+`"
default_model = "m"
`)
	store, _ := session.NewFileStore(t.TempDir())
	e := &Engine{Config: cfg, Store: store}
	rec := filepath.Join(t.TempDir(), "run.json")
	var started event.Event
	meta, end, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("hi")}, Record: rec,
		Sink: event.SinkFunc(func(ev event.Event) {
			if started.Kind == "" {
				started = ev
			}
		})})
	if err != nil || end.StopReason != "end_turn" || started.Kind != event.SessionInfoUpdate || started.SessionID != meta.ID || *meta.Title != "hi" {
		t.Fatalf("%+v %+v %v", meta, end, err)
	}
	if c, err := replay.LoadCassette(rec); err != nil || len(c.Replies) != 1 {
		t.Fatalf("cassette: %+v %v", c, err)
	}
	var sink []event.Event
	meta2, _, err := e.Prompt(context.Background(), Request{SessionID: meta.ID, Input: []message.Block{message.Text("more")},
		Sink: event.SinkFunc(func(ev event.Event) { sink = append(sink, ev) })})
	if err != nil || meta2.ID != meta.ID || *meta2.Title != "hi" {
		t.Fatalf("%+v %v", meta2, err)
	}
	conv, _ := store.Load(meta.ID)
	if len(conv.Messages) != 4 {
		t.Fatalf("messages = %d", len(conv.Messages))
	}
	if _, _, err := e.Prompt(context.Background(), Request{SessionID: "nope", Input: []message.Block{message.Text("x")}}); !errors.As(err, new(*UsageError)) {
		t.Fatalf("unknown session: %v", err)
	}
}

// TestTitleFromFirstMessage: an existing session is not rewritten when a
// turn starts; one whose title was never stored (a session/new'd session
// whose first turn died) is named after its first user message, and the
// end of the turn stores it.
func TestTitleFromFirstMessage(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Text: []string{"ok"}})
	cfg := load(t, "[providers.local]\napi_base = \""+srv.URL()+"\"\ndefault_model = \"m\"\n")
	store, _ := session.NewFileStore(t.TempDir())
	e := &Engine{Config: cfg, Store: store}
	m, err := e.NewSession(cfg.WorkDir, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// What a turn that died after its first step leaves: messages, no title.
	store.Append(m.ID, message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("Fix the login bug")}},
		message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text("Looking.")}})
	var during *session.Meta
	meta, _, err := e.Prompt(context.Background(), Request{SessionID: m.ID, Input: []message.Block{message.Text("go on")},
		Sink: event.SinkFunc(func(ev event.Event) {
			if ev.Kind == event.SessionInfoUpdate {
				during, _ = store.LoadMeta(m.ID)
			}
		})})
	if err != nil || meta.Title == nil || *meta.Title != "Fix the login bug" {
		t.Fatalf("title %v, %v", meta.Title, err)
	}
	if during == nil || during.Title != nil {
		t.Errorf("the meta was rewritten when the turn started: %+v", during)
	}
	stored, _ := store.LoadMeta(m.ID)
	if stored.Title == nil || *stored.Title != "Fix the login bug" {
		t.Errorf("stored title %v", stored.Title)
	}
}
