//go:build unix

package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
)

// agentUpdates are what Claude Code and Codex send about their tool calls
// (their shapes, recorded from claude-agent-acp 0.23 and codex-acp 0.16),
// plus a terminal, a chunk whose content is a list, a cost, and one update
// with an odd field. %W is the work directory.
var agentUpdates = []string{
	`{"_meta":{"claudeCode":{"toolName":"Write"}},"toolCallId":"toolu_w","sessionUpdate":"tool_call","rawInput":{},"status":"pending","title":"Write","kind":"edit","content":[],"locations":[]}`,
	`{"_meta":{"claudeCode":{"toolName":"Write"}},"toolCallId":"toolu_w","sessionUpdate":"tool_call_update","rawInput":{"file_path":"%W/b.txt","content":"new"},"title":"Write b.txt","kind":"edit","content":[{"type":"diff","path":"%W/b.txt","oldText":null,"newText":"new"}],"locations":[{"path":"%W/b.txt"}]}`,
	`{"_meta":{"claudeCode":{"toolResponse":{"type":"create"},"toolName":"Write"}},"toolCallId":"toolu_w","sessionUpdate":"tool_call_update"}`,
	`{"_meta":{"claudeCode":{"toolName":"Write"}},"toolCallId":"toolu_w","sessionUpdate":"tool_call_update","status":"completed","rawOutput":"File created successfully at: %W/b.txt"}`,
	`{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"false","kind":"execute","status":"in_progress","rawInput":{"command":["/bin/bash","-lc","false"],"cwd":"%W"}}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"exit 1: boom"}}]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"make","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"term-1"}],"locations":[{"path":"%W/Makefile","line":3}]}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","locations":"nope"}`,
	`{"sessionUpdate":"agent_message_chunk","content":[{"type":"text","text":"Done"},{"type":"text","text":"."}]}`,
	`{"sessionUpdate":"usage_update","used":12,"size":200000,"cost":{"amount":0.5,"currency":"USD"}}`,
}

// askAbout is a permission request for a call the agent never announces
// (as Codex does with a call it is refused), its content a diff.
const askAbout = `{"toolCall":{"toolCallId":"ask-1","title":"Edit x.txt","kind":"edit","status":"pending",` +
	`"content":[{"type":"diff","path":"%W/x.txt","oldText":"a","newText":"b"}],"locations":[{"path":"%W/x.txt","line":2}]},` +
	`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`

// TestAgentToolCallsRoundTrip sends array content, diffs, terminals and
// locations from the scripted fake agent through the Runner: the events
// carry them (and encode back to what the agent sent), the final update of
// each call carries what updates changed since its tool_call, an odd field costs only
// itself and is reported, the read model keeps targets, diffs and the
// permission, and the stored session holds the real arguments and results,
// a refused call ended failed.
func TestAgentToolCallsRoundTrip(t *testing.T) {
	work, _ := filepath.EvalSymlinks(t.TempDir())
	fill := func(s string) json.RawMessage { return json.RawMessage(strings.ReplaceAll(s, "%W", work)) }
	var ups []json.RawMessage
	for _, u := range agentUpdates {
		ups = append(ups, fill(u))
	}
	ask := fill(askAbout)
	var perrs []ProtocolError
	var mu sync.Mutex
	r, _ := fakeRunner(t, acptest.Script{Updates: ups, AskPermission: &ask}, &config.Config{WorkDir: work}, false)
	r.Hooks = Hooks{OnProtocolError: func(e ProtocolError) {
		mu.Lock()
		perrs = append(perrs, e)
		mu.Unlock()
	}}
	var logged syncBuffer
	r.Log = slog.New(slog.NewTextHandler(&logged, nil))
	store := r.Engine.Store
	meta, evs := promptDenying(t, r)
	mu.Lock()
	defer mu.Unlock()
	calls := toolEvents(evs)
	// What the agent sent comes out as it was (its _meta aside).
	for _, i := range []int{1, 4, 6} {
		if got, want := calls[i], withoutMeta(t, ups[i]); canon(t, got) != canon(t, want) {
			t.Errorf("update %d:\n got %s\nwant %s", i, got, want)
		}
	}
	final := lastUpdate(evs, "toolu_w")
	if final == nil || string(final.RawInput) != string(fill(`{"file_path":"%W/b.txt","content":"new"}`)) || final.Title != "Write b.txt" ||
		len(final.Content) != 1 || final.Content[0].Diff == nil || final.Content[0].Diff.OldText != nil || len(final.Locations) != 1 {
		t.Errorf("toolu_w's final update lacks what earlier updates said: %+v", final)
	}
	// What did not change since the tool_call is not repeated.
	if t1 := lastUpdate(evs, "t1"); t1 == nil || t1.Status != event.StatusCompleted || t1.Locations != nil || t1.Content != nil {
		t.Errorf("t1's final update: %+v", t1)
	}
	if len(perrs) != 1 || perrs[0].Method != acp.MethodSessionUpdate || !perrs[0].Partial || !strings.Contains(perrs[0].Err.Error(), "locations") {
		t.Errorf("protocol errors: %+v", perrs)
	}
	if w := logged.String(); !strings.Contains(w, "level=WARN") || !strings.Contains(w, "sent a session/update that did not decode and was used without some fields: fields left out: locations") {
		t.Errorf("the protocol error was not logged as a warning:\n%s", w)
	}
	if ask := firstEvent(evs, "ask-1"); ask == nil || ask.Kind != event.ToolCall || ask.Tool.Status != event.StatusPending ||
		ask.Tool.Content[0].Diff == nil || *ask.Tool.Locations[0].Line != 2 {
		t.Errorf("the call asked about was not announced: %+v", ask)
	}
	if a := lastUpdate(evs, "ask-1"); a == nil || a.Status != event.StatusFailed || !strings.Contains(string(a.RawOutput), "refused") {
		t.Errorf("the refused call did not end failed: %+v", a)
	}
	checkReadModel(t, r, meta.ACP.SessionID, work)
	checkStored(t, store, meta.ID, work)
}

// toolEvents are the tool call events, encoded as session/update.
func toolEvents(evs []event.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Tool == nil || ev.Tool.ID == "ask-1" {
			continue
		}
		u, _ := acp.UpdateFromEvent(ev)
		b, _ := json.Marshal(u)
		out = append(out, string(b))
	}
	return out
}

func withoutMeta(t *testing.T, raw json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "_meta")
	b, _ := json.Marshal(m)
	return string(b)
}

func lastUpdate(evs []event.Event, id string) *event.ToolCallInfo {
	var last *event.ToolCallInfo
	for _, ev := range evs {
		if ev.Tool != nil && ev.Tool.ID == id {
			last = ev.Tool
		}
	}
	return last
}

func firstEvent(evs []event.Event, id string) *event.Event {
	for i, ev := range evs {
		if ev.Tool != nil && ev.Tool.ID == id {
			return &evs[i]
		}
	}
	return nil
}

func checkReadModel(t *testing.T, r *Runner, ext, work string) {
	t.Helper()
	h, _ := r.Host(context.Background())
	snap, _ := h.Snapshot(ext)
	var texts []string
	for _, e := range snap.Thread {
		texts = append(texts, e.Kind+":"+e.Text)
	}
	if strings.Join(texts, "|") != "user:go|agent:permission: reject-once|agent:Done." {
		t.Errorf("thread: %q", texts)
	}
	targets := map[string]string{}
	for _, c := range snap.ToolCalls {
		targets[c.ID] = c.Target
	}
	if targets["toolu_w"] != work+"/b.txt" || targets["call_1"] != "/bin/bash -lc false" || targets["t1"] != work+"/Makefile" {
		t.Errorf("targets: %v", targets)
	}
	if len(snap.Diffs) != 2 || snap.Diffs[0].Path != work+"/x.txt" || snap.Diffs[1].Path != work+"/b.txt" {
		t.Errorf("diffs: %+v", snap.Diffs)
	}
	if len(snap.Permissions) != 1 || snap.Permissions[0].Target != work+"/x.txt" || snap.Permissions[0].OptionID != "reject-once" ||
		snap.Permissions[0].Kind != "edit" || len(snap.Permissions[0].Options) != 2 {
		t.Errorf("permissions: %+v", snap.Permissions)
	}
}

// storedCalls are session id's stored tool uses and results, by call id.
func storedCalls(t *testing.T, store session.Store, id string) (uses, results map[string]message.Block) {
	t.Helper()
	conv, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	uses, results = map[string]message.Block{}, map[string]message.Block{}
	for _, m := range conv.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case message.TypeToolUse:
				uses[b.ID] = b
			case message.TypeToolResult:
				results[b.ToolCallID] = b
			}
		}
	}
	return uses, results
}

func checkStored(t *testing.T, store session.Store, id, work string) {
	t.Helper()
	uses, results := storedCalls(t, store, id)
	if u := uses["toolu_w"]; u.Name != "Write" || !strings.Contains(u.Arguments, `"content":"new"`) {
		t.Errorf("stored tool_use: %+v", u)
	}
	checks := []struct {
		id, text string
		isError  bool
	}{{"toolu_w", "File created successfully at: " + work + "/b.txt", false}, {"call_1", "exit 1: boom", true},
		{"t1", "", false}, {"ask-1", "Not run: openheim refused", true}}
	for _, c := range checks {
		r, ok := results[c.id]
		if !ok || r.IsError != c.isError || !strings.HasPrefix(r.Content, c.text) {
			t.Errorf("stored result of %s: %+v (found %v)", c.id, r, ok)
		}
	}
}

// canon re-encodes JSON with sorted keys.
func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAgentChunkSplitSecretMasked: an external agent's answer goes out as
// openheim's own does: a config secret it streams in two chunks is masked
// in the turn's stream.
func TestAgentChunkSplitSecretMasked(t *testing.T) {
	work, _ := filepath.EvalSymlinks(t.TempDir())
	key := "sk-proj-9f8e7d6c5b4a"
	ups := []json.RawMessage{
		json.RawMessage(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the key: sk-proj-9"}}`),
		json.RawMessage(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"f8e7d6c5b4a, done"}}`),
	}
	cfg := &config.Config{WorkDir: work, Providers: map[string]*config.Provider{"p": {APIKey: key}}}
	r, _ := fakeRunner(t, acptest.Script{Updates: ups}, cfg, false)
	if _, _, got := promptText(t, r, engine.Gate{}); got != "the key: <redacted>, done" {
		t.Errorf("streamed %q", got)
	}
}

// TestAgentAnswerCapped: an agent that streams past max_answer_bytes gets
// its turn cancelled; what it sent past the cap is dropped (the stream and
// the store hold at most the cap, cut between characters) and the turn
// ends max_tokens, as a model's answer does.
func TestAgentAnswerCapped(t *testing.T) {
	work, _ := filepath.EvalSymlinks(t.TempDir())
	var ups []json.RawMessage
	for range 10 {
		ups = append(ups, json.RawMessage(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ééééééééééééééé"}}`))
	}
	// 101 falls inside the 51st "é" (two bytes each): the cut steps back.
	r, _ := fakeRunner(t, acptest.Script{Updates: ups}, &config.Config{WorkDir: work, MaxAnswerBytes: 101}, false)
	meta, end, got := promptText(t, r, engine.Gate{})
	if end.StopReason != event.StopMaxTokens {
		t.Fatalf("end %+v", end)
	}
	if len(got) != 100 || !utf8.ValidString(got) {
		t.Errorf("streamed %d bytes (%q), want the first 100 (50 whole characters)", len(got), got)
	}
	conv, err := r.Engine.Store.Load(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := conv.Messages[len(conv.Messages)-1]
	if last.Role != message.RoleAssistant || len(last.Content) != 1 || last.Content[0].Text != got {
		t.Errorf("stored %+v", last)
	}
}

// promptDenying runs a turn "go" on r, every permission denied, and
// returns its session and its events.
func promptDenying(t *testing.T, r *Runner) (session.Meta, []event.Event) {
	t.Helper()
	var mu sync.Mutex
	var evs []event.Event
	meta, end, err := r.Prompt(context.Background(), engine.Request{Input: []message.Block{message.Text("go")},
		Gate: engine.Asking(permission.DenyAsker), Sink: event.SinkFunc(func(ev event.Event) { mu.Lock(); evs = append(evs, ev); mu.Unlock() })})
	if err != nil || end.Err != nil {
		t.Fatalf("prompt: %v %v", err, end.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	return meta, evs
}
