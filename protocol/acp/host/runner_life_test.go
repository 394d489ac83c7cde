//go:build unix

package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

func promptOn(t *testing.T, r engine.Runner, id, text string) session.Meta {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meta, end, err := r.Prompt(ctx, engine.Request{SessionID: id, Input: []message.Block{message.Text(text)}})
	if err != nil || end.Err != nil {
		t.Fatalf("prompt %q: %v %v", text, err, end.Err)
	}
	return meta
}

// TestRunnerForkOnAgent: a fork of an agent's session forks it on the
// agent (session/fork) and binds the copy to the agent's fork, which the
// next turn uses as it is (no load).
func TestRunnerForkOnAgent(t *testing.T) {
	r, rec := fakeRunner(t, acptest.Script{}, &config.Config{WorkDir: t.TempDir()}, false)
	orig := promptOn(t, r, "", "first")
	forked, err := r.Fork(context.Background(), orig.ID)
	if err != nil {
		t.Fatal(err)
	}
	if forked.ID == orig.ID || forked.ACP == nil || forked.ACP.Agent != "fake" || forked.ACP.SessionID != "fake-2" {
		t.Fatalf("fork: %+v", forked.ACP)
	}
	if got := rec.Method("session/fork"); len(got) != 1 || !strings.Contains(string(got[0].Params), `"sessionId":"fake-1"`) {
		t.Errorf("session/fork calls: %+v", got)
	}
	promptOn(t, r, forked.ID, "second")
	if n := len(rec.Method(acp.MethodSessionLoad)); n != 0 {
		t.Errorf("the fork was loaded %d times; the agent had it open", n)
	}
	conv, _ := r.Engine.Store.Load(forked.ID)
	if len(conv.Messages) < 3 || conv.Messages[0].JoinText() != "first" {
		t.Errorf("the fork's messages: %+v", conv.Messages)
	}
}

// TestRunnerForkRefused: an agent without session/fork: a clear error,
// and no copy is left behind.
func TestRunnerForkRefused(t *testing.T) {
	caps := acptest.DefaultCapabilities()
	delete(caps["sessionCapabilities"].(map[string]any), "fork")
	r, rec := fakeRunner(t, acptest.Script{Capabilities: caps}, &config.Config{WorkDir: t.TempDir()}, false)
	orig := promptOn(t, r, "", "first")
	_, err := r.Fork(context.Background(), orig.ID)
	var ue *engine.UsageError
	if !errors.Is(err, ErrCannotFork) || !errors.As(err, &ue) {
		t.Fatalf("fork: %v", err)
	}
	all, _ := r.Engine.Store.(*session.FileStore).List()
	if len(all) != 1 || len(rec.Method("session/fork")) != 0 {
		t.Errorf("%d sessions stored, %d forks sent", len(all), len(rec.Method("session/fork")))
	}
}

// TestRunnerDeleteSession: session/delete where the agent offers it;
// nothing is sent where it does not.
func TestRunnerDeleteSession(t *testing.T) {
	r, rec := fakeRunner(t, acptest.Script{}, &config.Config{WorkDir: t.TempDir()}, false)
	m := promptOn(t, r, "", "first")
	if ok, err := r.DeleteSession(context.Background(), m.ID); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if got := rec.Method(acp.MethodSessionDelete); len(got) != 1 || !strings.Contains(string(got[0].Params), "fake-1") {
		t.Errorf("session/delete calls: %+v", got)
	}
	caps := acptest.DefaultCapabilities()
	delete(caps["sessionCapabilities"].(map[string]any), "delete")
	r2, rec2 := fakeRunner(t, acptest.Script{Capabilities: caps}, &config.Config{WorkDir: t.TempDir()}, false)
	m2 := promptOn(t, r2, "", "first")
	if ok, err := r2.DeleteSession(context.Background(), m2.ID); ok || err != nil || len(rec2.Method(acp.MethodSessionDelete)) != 0 {
		t.Errorf("without the capability: %v %v", ok, err)
	}
}

// TestRunnerLateBinding: a stored session bound to the agent before it had
// a session there (the server makes them) gets one on its first turn,
// recorded in its meta, and keeps it.
func TestRunnerLateBinding(t *testing.T) {
	work := t.TempDir()
	r, rec := fakeRunner(t, acptest.Script{}, &config.Config{WorkDir: work}, false)
	m := session.NewMeta(time.Now())
	m.Cwd, m.ACP = session.Str(work), &session.ACPBinding{Agent: "fake"}
	if err := r.Engine.Store.Create(m); err != nil {
		t.Fatal(err)
	}
	promptOn(t, r, m.ID, "one")
	promptOn(t, r, m.ID, "two")
	got, _ := r.Engine.Store.LoadMeta(m.ID)
	if got.ACP == nil || got.ACP.SessionID != "fake-1" || got.ACP.Cwd != work || deref(got.Title) != "one" {
		t.Fatalf("meta: %+v %+v", got, got.ACP)
	}
	if n := len(rec.Method(acp.MethodSessionNew)); n != 1 {
		t.Errorf("%d session/new calls", n)
	}
}

// TestRunnerSettings: the profile's settings are asked of each session the
// Runner opens (what the agent refuses is left out with a warning); the
// Runner's own (prompt --mode) must take; the turn's model changes the
// agent's model.
func TestRunnerSettings(t *testing.T) {
	cfg := &config.Config{WorkDir: t.TempDir()}
	r, rec := fakeRunner(t, acptest.Script{Settings: true}, cfg, false)
	cfg.ACPAgents["fake"].ACPProfile = config.ACPProfile{Mode: "plan", Config: map[string]any{"effort": "high", "colour": "red"}}
	m := promptOn(t, r, "", "one")
	rep, ok := r.Report(m.ID)
	if !ok || len(rep.Applied) != 2 || len(rep.Skipped) != 1 || rep.Skipped[0].Key != "colour" {
		t.Errorf("report: %+v", rep)
	}
	h, _ := r.Host(context.Background())
	md := mustMD(t, h, m.ACP.SessionID)
	if e, _ := optionOf(md, "thought_level"); md.CurrentModeID != "plan" || e.Value != "high" {
		t.Errorf("metadata: mode %q effort %v", md.CurrentModeID, e.Value)
	}
	ctx := context.Background()
	if _, _, err := r.Prompt(ctx, engine.Request{SessionID: m.ID, Model: "fake-small", Input: []message.Block{message.Text("two")}}); err != nil {
		t.Fatal(err)
	}
	if o, _ := optionOf(mustMD(t, h, m.ACP.SessionID), "model"); o.Value != "fake-small" {
		t.Errorf("model after a turn with Model: %v", o.Value)
	}
	r.Initial = InitialConfig{Mode: "warp"}
	_, _, err := r.Prompt(ctx, engine.Request{Input: []message.Block{message.Text("three")}})
	var ue *engine.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `mode warp`) {
		t.Errorf("a mode the agent lacks: %v", err)
	}
	if all, _ := r.Engine.Store.(*session.FileStore).List(); len(all) != 1 {
		t.Errorf("%d sessions stored; the refused one must not be", len(all))
	}
	if n := len(rec.Method(acp.MethodSessionClose)); n != 1 {
		t.Errorf("the refused session was closed %d times on the agent", n)
	}
}

// TestRunnerQueuePolicy: prompts for a session whose turn runs wait
// (queue), join one next turn (coalesce) or fail (reject).
func TestRunnerQueuePolicy(t *testing.T) {
	for _, policy := range []string{config.QueueWait, config.QueueCoalesce, config.QueueReject} {
		t.Run(policy, func(t *testing.T) {
			cfg := &config.Config{WorkDir: t.TempDir()}
			r, rec := fakeRunner(t, acptest.Script{UpdateDelay: 300 * time.Millisecond}, cfg, false)
			cfg.ACPAgents["fake"].Queue = policy
			m := promptOn(t, r, "", "first")
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for i, text := range []string{"a", "b", "c"} {
				if i == 1 {
					// "b" and "c" come while "a" runs: once the agent has
					// its prompt, it answers UpdateDelay later. (A fixed
					// sleep before them let a loaded machine start "a"
					// after them.)
					wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					_, err := rec.Wait(wctx, acp.MethodSessionPrompt, 2)
					cancel()
					if err != nil {
						t.Fatalf("the agent never had a's prompt: %v", err)
					}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, end, err := r.Prompt(ctx, engine.Request{SessionID: m.ID, Input: []message.Block{message.Text(text)}})
					errs[i] = errors.Join(err, end.Err)
				}()
			}
			wg.Wait()
			prompts := rec.Method(acp.MethodSessionPrompt)
			var busy *session.BusyError
			switch policy {
			case config.QueueWait:
				if len(prompts) != 4 || errors.Join(errs...) != nil {
					t.Errorf("%d prompts, errors %v", len(prompts), errs)
				}
			case config.QueueCoalesce:
				last := string(prompts[len(prompts)-1].Params)
				if len(prompts) != 3 || errors.Join(errs...) != nil || !strings.Contains(last, `"b"`) || !strings.Contains(last, `"c"`) {
					t.Errorf("%d prompts (last %s), errors %v", len(prompts), last, errs)
				}
			case config.QueueReject:
				if len(prompts) != 2 || errs[0] != nil || !errors.As(errs[1], &busy) || !errors.As(errs[2], &busy) {
					t.Errorf("%d prompts, errors %v", len(prompts), errs)
				}
			}
		})
	}
}

// TestDispatch: a session bound to an agent runs there (a real process of
// the fake agent), one Runner per agent; Close stops them.
func TestDispatch(t *testing.T) {
	cmd, args, env := acptest.Command(acptest.Script{})
	work := t.TempDir()
	r, _ := fakeRunner(t, acptest.Script{}, &config.Config{WorkDir: work}, false)
	r.Engine.Config.ACPAgents["proc"] = &config.ACPAgent{Command: cmd, Args: args, Env: envMap(env)}
	d := &Dispatch{Engine: r.Engine, Version: "test"}
	defer d.Close()
	m := session.NewMeta(time.Now())
	m.ACP = &session.ACPBinding{Agent: "proc"}
	r.Engine.Store.Create(m)
	got := promptOn(t, d, m.ID, "hello")
	if got.ACP == nil || got.ACP.SessionID == "" || d.Agent(m.ID) != "proc" {
		t.Fatalf("dispatched turn: %+v", got.ACP)
	}
	r1, _ := d.Runner("proc")
	r2, _ := d.Runner("proc")
	if r1 != r2 {
		t.Error("two Runners for one agent")
	}
	if _, err := d.Runner("nope"); err == nil {
		t.Error("an unknown agent got a Runner")
	}
	h, _ := r1.Host(context.Background())
	d.Close()
	select {
	case <-h.Exited():
	case <-time.After(10 * time.Second):
		t.Error("the agent outlived Dispatch.Close")
	}
}

// TestRunnerKeepsMode: the agent's mode after a turn is kept with the
// session and set again when another process reopens it; http MCP servers
// are left out for an agent that takes none; images for one that takes
// none are refused before anything is sent.
func TestRunnerKeepsMode(t *testing.T) {
	cfg := &config.Config{WorkDir: t.TempDir(), MCPServers: map[string]*config.MCPServer{
		"remote": {URL: "http://127.0.0.1:9/mcp"}, "local": {Command: "mcp-local"}}}
	caps := acptest.DefaultCapabilities()
	r, rec := fakeRunner(t, acptest.Script{Settings: true, LoadUnknown: true, Capabilities: caps}, cfg, false)
	m := promptOn(t, r, "", "one")
	ctx := context.Background()
	if err := r.SetMode(ctx, m.ID, "plan"); err != nil {
		t.Fatal(err)
	}
	promptOn(t, r, m.ID, "two")
	if got, _ := r.Engine.Store.LoadMeta(m.ID); got.ACP.Mode != "plan" {
		t.Fatalf("kept mode %q", got.ACP.Mode)
	}
	r.Close() // another process: a new agent that must be told again
	promptOn(t, r, m.ID, "three")
	h, _ := r.Host(ctx)
	if md := mustMD(t, h, m.ACP.SessionID); md.CurrentModeID != "plan" {
		t.Errorf("reopened in mode %q", md.CurrentModeID)
	}
	newReq := rec.Method(acp.MethodSessionNew)
	if len(newReq) == 0 || strings.Contains(string(newReq[0].Params), "remote") || !strings.Contains(string(newReq[0].Params), "mcp-local") {
		t.Errorf("mcpServers sent: %+v", newReq)
	}
	_, _, err := r.Prompt(ctx, engine.Request{SessionID: m.ID, Input: []message.Block{{Type: message.TypeImage, Data: "AA==", MimeType: "image/png"}}})
	var ue *engine.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "takes no images") {
		t.Errorf("an image for an agent without image: %v", err)
	}
}
