//go:build unix

package host

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
)

// TestHostSessionSettings: the modes, models, options and commands of a
// session come from session/new and the updates; set_mode,
// set_config_option and the model selector change them, refusing values
// the agent did not offer and modes outside openheim's rules before
// anything is sent.
func TestHostSessionSettings(t *testing.T) {
	ctx := context.Background()
	h, rec := inProcess(t, acptest.Script{Settings: true}, Options{Projection: Project(config.AgentKindClaude, Bounds{WorkDir: "/w"})})
	id, err := h.NewSession(ctx, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md, ok := h.Metadata(id)
	if !ok || md.CurrentModeID != "default" || len(md.Modes) != 3 || md.CurrentModelID != "fake-large" || len(md.Models) != 2 || len(md.ConfigOptions) != 3 {
		t.Fatalf("metadata: %+v", md)
	}
	if o, _ := optionOf(md, "thought_level"); o.ID != "effort" || o.Value != "medium" || len(o.Choices) != 3 {
		t.Errorf("effort option: %+v", o)
	}
	// The commands come with the first turn's updates.
	turn, _ := h.Prompt(ctx, id, []acp.ContentBlock{{Type: "text", Text: "hi"}})
	collect(t, turn)
	md, _ = h.Metadata(id)
	if len(md.Commands) != 2 || md.Commands[0].Name != "review" || md.Commands[0].Hint != "what to review" {
		t.Errorf("commands: %+v", md.Commands)
	}

	if err := h.SetMode(ctx, id, "plan"); err != nil {
		t.Fatal(err)
	}
	if md, _ := h.Metadata(id); md.CurrentModeID != "plan" {
		t.Errorf("mode after set_mode: %q", md.CurrentModeID)
	}
	if err := h.SetMode(ctx, id, "bypassPermissions"); err == nil || !strings.Contains(err.Error(), "without asking") {
		t.Errorf("unsafe mode: %v", err)
	}
	if err := h.SetConfigOption(ctx, id, "mode", "bypassPermissions"); err == nil || !strings.Contains(err.Error(), "without asking") {
		t.Errorf("unsafe mode as an option: %v", err)
	}
	if err := h.SetMode(ctx, id, "warp"); err == nil || !strings.Contains(err.Error(), "modes: default, plan, bypassPermissions") {
		t.Errorf("unknown mode: %v", err)
	}
	if n := len(rec.Method(acp.MethodSessionSetMode)); n != 1 {
		t.Errorf("%d set_mode calls reached the agent, want 1", n)
	}
	// The model goes through the model option (the 1.x selector).
	if err := h.SetModel(ctx, id, "fake-small"); err != nil {
		t.Fatal(err)
	}
	if o, _ := optionOf(mustMD(t, h, id), "model"); o.Value != "fake-small" {
		t.Errorf("model option after SetModel: %+v", o)
	}
	if got := rec.Method(acp.MethodSessionSetConfigOption); len(got) != 1 || !strings.Contains(string(got[0].Params), `"configId":"model"`) {
		t.Errorf("set_config_option calls: %+v", got)
	}
	if err := h.SetConfigOption(ctx, id, "effort", "extreme"); err == nil || !strings.Contains(err.Error(), "low, medium, high") {
		t.Error("a value that is not a choice was sent")
	}
	if err := h.SetConfigOption(ctx, id, "effort", "high"); err != nil {
		t.Fatal(err)
	}
	if err := h.SetConfigOption(ctx, id, "colour", "red"); err == nil || !strings.Contains(err.Error(), "options: mode, model, effort") {
		t.Errorf("unknown option: %v", err)
	}
}

func mustMD(t *testing.T, h *Host, id string) SessionMetadata {
	t.Helper()
	md, ok := h.Metadata(id)
	if !ok {
		t.Fatalf("session %s not open", id)
	}
	return md
}

// TestHostOlderModelSelector: an agent with a models list and no model
// option gets session/set_model.
func TestHostOlderModelSelector(t *testing.T) {
	ctx := context.Background()
	h, rec := inProcess(t, acptest.Script{Settings: true}, Options{})
	id, _ := h.NewSession(ctx, SessionOptions{})
	s := h.session(id)
	s.state.mu.Lock()
	s.state.md.ConfigOptions = nil // as an agent of the older schema answers
	s.state.mu.Unlock()
	if err := h.SetModel(ctx, id, "fake-small"); err != nil {
		t.Fatal(err)
	}
	if got := rec.Method("session/set_model"); len(got) != 1 || !strings.Contains(string(got[0].Params), `"modelId":"fake-small"`) {
		t.Errorf("set_model calls: %+v", got)
	}
	if err := h.SetModel(ctx, id, "nope"); err == nil || !strings.Contains(err.Error(), "models: fake-large, fake-small") {
		t.Errorf("unknown model: %v", err)
	}
}

// TestStateLenient: odd fields leave the others; updates of the kinds the
// metadata follows change it, grouped options are flattened.
func TestStateLenient(t *testing.T) {
	var st sessionState
	st.absorb(json.RawMessage(`{"sessionId":"s","modes":{"currentModeId":7,"availableModes":"x"},
		"models":{"currentModelId":"m1","availableModels":[{"id":"m1","name":"One"},{"modelId":"m2"},{"bad":true}]},
		"configOptions":[{"id":"o","type":"select","currentValue":"b","category":"model",
			"options":[{"group":"g1","name":"G1","options":[{"value":"a","name":"A"}]},{"value":"b","name":"B"}]},{"name":"no id"}]}`))
	md := st.get()
	if md.CurrentModeID != "" || len(md.Models) != 2 || md.Models[1].ID != "m2" || len(md.ConfigOptions) != 1 {
		t.Fatalf("%+v", md)
	}
	if c := md.ConfigOptions[0].Choices; len(c) != 2 || c[0].Group != "g1" || c[1].Value != "b" {
		t.Errorf("choices: %+v", c)
	}
	st.observe(json.RawMessage(`{"sessionUpdate":"current_mode_update","currentModeId":"plan"}`))
	st.observe(json.RawMessage(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"x","input":null},{"description":"no name"}]}`))
	st.observe(json.RawMessage(`{"sessionUpdate":"session_info_update","title":"T"}`))
	st.observe(json.RawMessage(`{"sessionUpdate":"config_option_update","configOptions":[{"id":"effort","type":"boolean","currentValue":true}]}`))
	md = st.get()
	if md.CurrentModeID != "plan" || len(md.Commands) != 1 || md.Title != "T" || len(md.ConfigOptions) != 1 || md.ConfigOptions[0].Value != true {
		t.Errorf("after updates: %+v", md)
	}
	if v, err := md.ConfigOptions[0].accept("off"); err != nil || v != false {
		t.Errorf("boolean accept: %v %v", v, err)
	}
}

// TestInitialConfigReport: what the agent takes is applied, the rest
// reported with the reason.
func TestInitialConfigReport(t *testing.T) {
	ctx := context.Background()
	h, _ := inProcess(t, acptest.Script{Settings: true}, Options{})
	id, _ := h.NewSession(ctx, SessionOptions{})
	rep := h.ApplyInitialConfig(ctx, id, InitialConfig{Mode: "plan", Model: "fake-small", Effort: "high",
		Raw: map[string]any{"colour": "red", "effort": "low"}})
	var applied, skipped []string
	for _, a := range rep.Applied {
		applied = append(applied, a.Key)
	}
	for _, s := range rep.Skipped {
		skipped = append(skipped, s.Key)
	}
	if !slices.Equal(applied, []string{"mode", "model", "effort", "effort"}) || !slices.Equal(skipped, []string{"colour"}) {
		t.Errorf("applied %v, skipped %v (%+v)", applied, skipped, rep)
	}
	if md := mustMD(t, h, id); md.CurrentModeID != "plan" {
		t.Errorf("mode %q", md.CurrentModeID)
	}
	if rep.Err() == nil || !strings.Contains(rep.Err().Error(), "colour") {
		t.Errorf("report error: %v", rep.Err())
	}
	// Without settings: nothing is offered, everything is skipped.
	h2, rec2 := inProcess(t, acptest.Script{}, Options{})
	id2, _ := h2.NewSession(ctx, SessionOptions{})
	rep = h2.ApplyInitialConfig(ctx, id2, InitialConfig{Mode: "plan", Model: "x", Effort: "high"})
	if len(rep.Skipped) != 3 || len(rec2.Method(acp.MethodSessionSetMode)) != 0 {
		t.Errorf("report without settings: %+v", rep)
	}
}

// TestHostAuthFromEnv: -32000 is answered by authenticating with the
// env_var method whose variable [acp_agents.X].env sets, then the call is
// retried; without it the error names how to log in. Logout is sent
// where offered.
func TestHostAuthFromEnv(t *testing.T) {
	ctx := context.Background()
	h, rec := inProcess(t, acptest.Script{AuthRequired: true}, Options{Environ: []string{}})
	h.spec.Env = map[string]string{"FAKE_API_KEY": "k"}
	if _, err := h.NewSession(ctx, SessionOptions{}); err != nil {
		t.Fatalf("with the key in its env: %v", err)
	}
	if got := rec.Method(acp.MethodAuthenticate); len(got) != 1 || !strings.Contains(string(got[0].Params), `"methodId":"fake-key"`) {
		t.Errorf("authenticate calls: %+v", got)
	}
	if err := h.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	// Logged out: the key was tried once already, so the error says how
	// to log in.
	_, err := h.NewSession(ctx, SessionOptions{})
	if !IsAuthRequired(err) || !strings.Contains(err.Error(), "set FAKE_API_KEY in [acp_agents.fake].env") {
		t.Errorf("after logout: %v", err)
	}

	h2, rec2 := inProcess(t, acptest.Script{AuthRequired: true}, Options{Environ: []string{}})
	h2.spec.Kind = config.AgentKindCodex
	_, err = h2.NewSession(ctx, SessionOptions{})
	if !IsAuthRequired(err) || !strings.Contains(err.Error(), "codex login") || len(rec2.Method(acp.MethodAuthenticate)) != 0 {
		t.Errorf("without the key: %v (authenticate %d)", err, len(rec2.Method(acp.MethodAuthenticate)))
	}
	// An agent without the logout capability is not asked.
	caps := acptest.DefaultCapabilities()
	delete(caps, "auth")
	h3, rec3 := inProcess(t, acptest.Script{Capabilities: caps}, Options{})
	if err := h3.Logout(ctx); err == nil || !strings.Contains(err.Error(), "does not support logout") || len(rec3.Method("logout")) != 0 {
		t.Errorf("logout without the capability: %v", err)
	}
}
