package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
)

func TestDecide(t *testing.T) {
	rules := Rules{
		Allow: []string{"read_*", "github__*", "write_file", "execute_command"},
		Deny:  []string{"github__delete_*", "write_file"},
		Ask:   []string{"github__create_*", "read_secret", "execute_command", "{fetch,web}_*"},
	}
	tests := []struct {
		name       string
		rules      Rules
		tool, kind string
		want       Decision
	}{
		// Precedence: the most cautious matching rule wins.
		{"deny beats allow", rules, "write_file", "edit", Deny},
		{"deny beats allow by glob", rules, "github__delete_repo", "delete", Deny},
		{"ask beats allow", rules, "github__create_issue", "edit", Ask},
		{"ask beats allow for read kind", rules, "read_secret", "read", Ask},
		{"ask beats allow exact", rules, "execute_command", "execute", Ask},
		{"allow by glob", rules, "github__list_issues", "other", Allow},
		{"allow by glob, read kind", rules, "read_file", "read", Allow},
		{"deny beats ask", Rules{Deny: []string{"*"}, Ask: []string{"*"}, Allow: []string{"*"}}, "list_dir", "read", Deny},
		{"deny a read-only tool", Rules{Deny: []string{"list_dir"}}, "list_dir", "read", Deny},
		{"allow overrides ask default", Rules{Allow: []string{"edit_file"}}, "edit_file", "edit", Allow},
		{"braces", rules, "web_fetch", "fetch", Ask},
		{"no partial match", Rules{Allow: []string{"read"}}, "read_file", "edit", Ask},
		{"question mark", Rules{Deny: []string{"tool_?"}}, "tool_a", "read", Deny},
		{"question mark is one char", Rules{Deny: []string{"tool_?"}}, "tool_ab", "read", Allow},
		{"invalid pattern never matches", Rules{Deny: []string{"read_["}}, "read_[", "read", Allow},
		// Defaults by kind when nothing matches.
		{"default read", Rules{}, "read_file", "read", Allow},
		{"default search", Rules{}, "search", "search", Allow},
		{"default think", Rules{}, "plan", "think", Allow},
		{"default edit", Rules{}, "write_file", "edit", Ask},
		{"default delete", Rules{}, "rm", "delete", Ask},
		{"default move", Rules{}, "mv", "move", Ask},
		{"default execute", Rules{}, "execute_command", "execute", Ask},
		{"default fetch", Rules{}, "web_fetch", "fetch", Ask},
		{"default other", Rules{}, "mystery", "other", Ask},
		{"default unknown kind", Rules{}, "mystery", "", Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rules.Decide(tt.tool, tt.kind); got != tt.want {
				t.Errorf("Decide(%q, %q) = %v, want %v", tt.tool, tt.kind, got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	if err := (Rules{Allow: []string{"read_*", "{a,b}"}, Deny: []string{"x"}}).Validate(); err != nil {
		t.Errorf("valid rules: %v", err)
	}
	for _, r := range []Rules{{Deny: []string{"read_["}}, {Ask: []string{""}}, {Allow: []string{"{a,b"}}} {
		if err := r.Validate(); err == nil {
			t.Errorf("%+v: want an error", r)
		}
	}
}

// answers is an Asker giving fixed outcomes per tool and counting questions.
type answers struct {
	mu    sync.Mutex
	by    map[string]Outcome
	err   error
	asked []Request
}

func (a *answers) Ask(_ context.Context, r Request) (Outcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r)
	if a.err != nil {
		return "", a.err
	}
	return a.by[r.Tool], nil
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

func check(t *testing.T, g *Gate, r Request) bool {
	t.Helper()
	ok, err := g.Check(context.Background(), r)
	if err != nil {
		t.Fatalf("Check(%+v): %v", r, err)
	}
	return ok
}

func TestGateRules(t *testing.T) {
	a := &answers{by: map[string]Outcome{"edit_file": AllowOnce}}
	g := NewGate(Rules{Deny: []string{"write_file"}, Allow: []string{"safe_*"}}, a)
	if check(t, g, Request{SessionID: "s", Tool: "write_file", Kind: "edit"}) {
		t.Error("denied tool allowed")
	}
	if !check(t, g, Request{SessionID: "s", Tool: "safe_run", Kind: "execute"}) {
		t.Error("allowed tool refused")
	}
	if !check(t, g, Request{SessionID: "s", Tool: "read_file", Kind: "read"}) {
		t.Error("read kind refused")
	}
	if a.count() != 0 {
		t.Fatalf("asked %d times before any ask rule", a.count())
	}
	if !check(t, g, Request{SessionID: "s", Tool: "edit_file", Kind: "edit"}) || a.count() != 1 {
		t.Errorf("ask not put to the asker (asked %d)", a.count())
	}
	if a.asked[0].Title != "edit_file" {
		t.Errorf("title defaults to the tool: %q", a.asked[0].Title)
	}
}

func TestGateNilAndFixedAskers(t *testing.T) {
	r := Request{SessionID: "s", Tool: "write_file", Kind: "edit"}
	if !check(t, NewGate(Rules{}, nil), r) {
		t.Error("nil asker should allow asks")
	}
	if check(t, NewGate(Rules{Deny: []string{"write_file"}}, nil), r) {
		t.Error("nil asker must not override deny")
	}
	if !check(t, NewGate(Rules{}, AllowAsker), r) {
		t.Error("AllowAsker refused")
	}
	if check(t, NewGate(Rules{}, DenyAsker), r) {
		t.Error("DenyAsker allowed")
	}
	if !check(t, NewGate(Rules{}, DenyAsker), Request{Tool: "read_file", Kind: "read"}) {
		t.Error("DenyAsker refused a call that needs no asking")
	}
}

func TestGateRemembersAlwaysPerSession(t *testing.T) {
	a := &answers{by: map[string]Outcome{"edit_file": AllowAlways, "delete_file": RejectAlways, "move_file": AllowOnce, "fetch": RejectOnce}}
	g := NewGate(Rules{}, a)
	for i := range 3 {
		if !check(t, g, Request{SessionID: "s1", Tool: "edit_file", Kind: "edit"}) {
			t.Errorf("edit_file #%d refused", i)
		}
		if check(t, g, Request{SessionID: "s1", Tool: "delete_file", Kind: "delete"}) {
			t.Errorf("delete_file #%d allowed", i)
		}
	}
	if a.count() != 2 {
		t.Errorf("always answers asked %d times, want 2", a.count())
	}
	for range 2 {
		check(t, g, Request{SessionID: "s1", Tool: "move_file", Kind: "move"})
		check(t, g, Request{SessionID: "s1", Tool: "fetch", Kind: "fetch"})
	}
	if a.count() != 6 {
		t.Errorf("once answers are not remembered: asked %d times, want 6", a.count())
	}
	// Another session starts afresh.
	a.by["edit_file"] = RejectOnce
	if check(t, g, Request{SessionID: "s2", Tool: "edit_file", Kind: "edit"}) {
		t.Error("s1's always answer leaked into s2")
	}
	// A gate with another asker shares what was remembered.
	if !check(t, g.WithAsker(DenyAsker), Request{SessionID: "s1", Tool: "edit_file", Kind: "edit"}) {
		t.Error("WithAsker lost the remembered answer")
	}
	g.Forget("s1")
	if check(t, g, Request{SessionID: "s1", Tool: "edit_file", Kind: "edit"}) {
		t.Error("Forget kept the answer")
	}
}

func TestGateExecuteKeyedByArgs(t *testing.T) {
	a := &answers{by: map[string]Outcome{"execute_command": AllowAlways, "run": AllowAlways}}
	g := NewGate(Rules{}, a)
	ls := Request{SessionID: "s", Tool: "execute_command", Kind: "execute", Args: json.RawMessage(`{"command": "ls"}`)}
	if !check(t, g, ls) {
		t.Fatal("ls refused")
	}
	// The same command, formatted differently, is remembered.
	ls.Args = json.RawMessage(`{ "command":"ls" }`)
	check(t, g, ls)
	if a.count() != 1 {
		t.Fatalf("same command asked %d times", a.count())
	}
	a.by["execute_command"] = RejectOnce
	if check(t, g, Request{SessionID: "s", Tool: "execute_command", Kind: "execute", Args: json.RawMessage(`{"command":"rm -rf /"}`)}) {
		t.Error("always allowing ls allowed rm -rf")
	}
	// Any tool of kind execute is keyed the same way.
	check(t, g, Request{SessionID: "s", Tool: "run", Kind: "execute", Args: json.RawMessage(`{"cmd":"ls"}`)})
	a.by["run"] = RejectOnce
	if check(t, g, Request{SessionID: "s", Tool: "run", Kind: "execute", Args: json.RawMessage(`{"cmd":"make"}`)}) {
		t.Error("execute-kind tool not keyed by arguments")
	}
	if !check(t, g, Request{SessionID: "s", Tool: "run", Kind: "execute", Args: json.RawMessage(`{"cmd":"ls"}`)}) {
		t.Error("execute-kind tool forgot its exact arguments")
	}
	// execute_command is keyed by arguments whatever kind it reports.
	a.by["execute_command"] = AllowAlways
	check(t, g, Request{SessionID: "t", Tool: "execute_command", Kind: "other", Args: json.RawMessage(`{"command":"ls"}`)})
	a.by["execute_command"] = RejectOnce
	if check(t, g, Request{SessionID: "t", Tool: "execute_command", Kind: "other", Args: json.RawMessage(`{"command":"rm"}`)}) {
		t.Error("execute_command of another kind not keyed by arguments")
	}
}

func TestGateAskerErrorRejects(t *testing.T) {
	boom := errors.New("client went away")
	g := NewGate(Rules{}, &answers{err: boom})
	ok, err := g.Check(context.Background(), Request{SessionID: "s", Tool: "write_file", Kind: "edit"})
	if ok || !errors.Is(err, boom) {
		t.Errorf("asker error: ok=%v err=%v", ok, err)
	}
	ok, err = NewGate(Rules{}, &answers{by: map[string]Outcome{"x": "maybe"}}).Check(context.Background(), Request{Tool: "x"})
	if ok || err == nil {
		t.Errorf("unknown outcome: ok=%v err=%v", ok, err)
	}
}

func TestGateCancelRejects(t *testing.T) {
	// Cancelled before asking: the asker is not bothered.
	a := &answers{by: map[string]Outcome{"w": AllowAlways}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok, err := NewGate(Rules{}, a).Check(ctx, Request{SessionID: "s", Tool: "w", Kind: "edit"})
	if ok || !errors.Is(err, context.Canceled) || a.count() != 0 {
		t.Errorf("cancelled ctx: ok=%v err=%v asked=%d", ok, err, a.count())
	}
	// Cancelled while asking: an allow that arrives too late still refuses
	// and is not remembered.
	ctx, cancel = context.WithCancel(context.Background())
	late := AskerFunc(func(ctx context.Context, r Request) (Outcome, error) {
		cancel()
		return AllowAlways, nil
	})
	g := NewGate(Rules{}, late)
	ok, err = g.Check(ctx, Request{SessionID: "s", Tool: "w", Kind: "edit"})
	if ok || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while asking: ok=%v err=%v", ok, err)
	}
	if check(t, g.WithAsker(DenyAsker), Request{SessionID: "s", Tool: "w", Kind: "edit"}) {
		t.Error("an answer given after cancellation was remembered")
	}
	// An asker that honours ctx.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	blocking := AskerFunc(func(ctx context.Context, r Request) (Outcome, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	if ok, err := NewGate(Rules{}, blocking).Check(ctx, Request{Tool: "w", Kind: "edit"}); ok || err == nil {
		t.Errorf("timed out ask: ok=%v err=%v", ok, err)
	}
}

func TestGateConcurrent(t *testing.T) {
	var asked atomic.Int32
	release := make(chan struct{})
	a := AskerFunc(func(ctx context.Context, r Request) (Outcome, error) {
		asked.Add(1)
		<-release
		if r.Tool == "deny_me" {
			return RejectAlways, nil
		}
		return AllowAlways, nil
	})
	g := NewGate(Rules{Deny: []string{"never"}}, a)
	var wg sync.WaitGroup
	var allowed, refused atomic.Int32
	tools := []string{"edit_file", "deny_me", "never", "read_file"}
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tool := tools[i%len(tools)]
			kind := "edit"
			if tool == "read_file" {
				kind = "read"
			}
			ok, err := g.Check(context.Background(), Request{SessionID: fmt.Sprint("s", (i/4)%2), Tool: tool, Kind: kind})
			if err != nil {
				t.Error(err)
			}
			if ok {
				allowed.Add(1)
			} else {
				refused.Add(1)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	// Two sessions x two asked tools: identical questions wait for the first
	// answer instead of being asked again.
	if n := asked.Load(); n != 4 {
		t.Errorf("asked %d times, want 4", n)
	}
	if allowed.Load() != 100 || refused.Load() != 100 {
		t.Errorf("allowed %d refused %d, want 100 each", allowed.Load(), refused.Load())
	}
}

// The question carries what the call will change, from ctx (the loop puts
// the edit's preview there), unless the request has its own.
func TestAskCarriesTheCallsContent(t *testing.T) {
	var got []event.ToolContent
	g := NewGate(Rules{}, AskerFunc(func(_ context.Context, r Request) (Outcome, error) {
		got = r.Content
		return AllowOnce, nil
	}))
	old := "a\n"
	c := []event.ToolContent{{Diff: &event.Diff{Path: "/w/f", OldText: &old, NewText: "b\n"}}}
	if ok, err := g.Check(WithContent(context.Background(), c), Request{SessionID: "s", Tool: "edit_file", Kind: "edit"}); !ok || err != nil {
		t.Fatalf("check: %v %v", ok, err)
	}
	if len(got) != 1 || got[0].Diff.NewText != "b\n" {
		t.Fatalf("asked with content %+v", got)
	}
}
