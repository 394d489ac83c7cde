package sessionsapi

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/bundle/bundletest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

func userMessage(text string) map[string]any {
	return map[string]any{"type": "message", "data": map[string]any{"role": "user",
		"content": []map[string]any{{"type": "input_text", "text": text}}}}
}

// TestSessionTurnStream: a session is created idle, its stream is open
// before the first turn, a message runs a turn whose events arrive in
// seed 003's order, and the snapshot names the same items as the stream.
func TestSessionTurnStream(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(
		llmtest.Reply{Thinking: []string{"hmm"}, ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`}}},
		llmtest.Reply{Text: []string{"Hello", " there"}, Usage: &llmtest.Usage{Prompt: 10, Completion: 2}})
	snap := f.create(map[string]any{"title": "first", "labels": map[string]string{"env": "test"}})
	conv := snap["id"].(string)
	if !strings.HasPrefix(conv, "conv_") || snap["status"] != "idle" || snap["agent_id"] != "ag_default" ||
		snap["title"] != "first" || at(snap, "labels", "env") != "test" || snap["model"] != "fake/m1" {
		t.Fatalf("snapshot: %v", snap)
	}
	if items, ok := snap["items"].([]any); !ok || len(items) != 0 {
		t.Fatalf("items: %v", snap["items"])
	}
	s := f.stream(conv)
	s.waitName("session.status", 1)
	var acc map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("list files"), &acc); code != 202 || acc["queued"] != true {
		t.Fatalf("post: %d %v", code, acc)
	}
	s.idle(2)
	got := strings.Join(s.names(), " ")
	// The reasoning streams, the tool call is announced as the model
	// begins it, both are done when the reply is stored; then the call's
	// output, then the answer.
	want := "session.status:idle session.status:running response.queued session.input.consumed response.created response.in_progress " +
		"response.output_item.added response.reasoning.started response.reasoning_text.delta response.output_item.added " +
		"response.output_item.done response.output_item.done response.output_item.added response.output_item.done " +
		"response.output_item.added response.output_text.delta response.output_text.delta response.output_item.done " +
		"response.completed session.usage session.status:idle"
	if got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	consumed := s.waitName("session.input.consumed", 1)
	if at(consumed.Data, "data", "queued_item_id") != acc["queued_item_id"] || at(consumed.Data, "data", "item", "id") != id(conv, "msg_0") {
		t.Errorf("input consumed: %v", consumed.Data)
	}
	done := s.waitName("response.completed", 1)
	if at(done.Data, "response", "id") != id(conv, "resp_0") || at(done.Data, "response", "usage", "output_tokens") != 2.0 {
		t.Errorf("completed: %v", done.Data)
	}
	// Every item the stream finished is in the snapshot, under the same id.
	var after map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &after)
	byID := map[string]map[string]any{}
	for _, it := range after["items"].([]any) {
		m := it.(map[string]any)
		byID[m["id"].(string)] = m
	}
	for _, e := range s.all() {
		if e.Name != "response.output_item.done" {
			continue
		}
		item := e.Data["item"].(map[string]any)
		snapItem, ok := byID[item["id"].(string)]
		if !ok {
			t.Errorf("stream item %v is not in the snapshot", item["id"])
			continue
		}
		a, _ := json.Marshal(item)
		b, _ := json.Marshal(snapItem)
		if string(a) != string(b) {
			t.Errorf("item %v differs:\nstream   %s\nsnapshot %s", item["id"], a, b)
		}
	}
	for _, short := range []string{"msg_0", "rs_1", "fc_1_0", "fco_1_0", "msg_3"} {
		if byID[id(conv, short)] == nil {
			t.Errorf("snapshot lacks %s: %v", short, after["items"])
		}
	}
	if byID[id(conv, "fc_1_0")]["call_id"] != "call_1" || byID[id(conv, "fco_1_0")]["call_id"] != "call_1" || byID[id(conv, "msg_3")]["response_id"] != id(conv, "resp_0") {
		t.Errorf("tool items: %v %v", byID[id(conv, "fc_1_0")], byID[id(conv, "fco_1_0")])
	}
}

// TestReconnectAndInterrupt: a client that reconnects mid-turn opens the
// stream, then reads the snapshot, and dedupes by item id; an interrupt
// ends the turn with response.incomplete (user_interrupt),
// session.interrupted, then idle, keeping what streamed.
func TestReconnectAndInterrupt(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"partial ", "answer"}, Hang: true})
	conv := f.create(nil)["id"].(string)
	first := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("write an essay"), nil)
	first.waitName("response.output_text.delta", 2)
	// Reconnect: stream first, snapshot second.
	second := f.stream(conv)
	second.waitName("session.status", 1)
	var snap map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &snap)
	if snap["status"] != "running" {
		t.Fatalf("status mid-turn: %v", snap["status"])
	}
	var acc map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", map[string]any{"type": "interrupt", "data": map[string]any{}}, &acc); code != 202 || acc["queued"] != false {
		t.Fatalf("interrupt: %d %v", code, acc)
	}
	second.idle(1) // it opened mid-turn: its first status was running
	tail := second.names()
	want := []string{"response.output_item.done", "response.incomplete", "session.interrupted", "session.status:idle"}
	if got := tail[len(tail)-4:]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("after interrupt: %v", tail)
	}
	inc := second.waitName("response.incomplete", 1)
	if at(inc.Data, "response", "incomplete_details", "reason") != "user_interrupt" {
		t.Errorf("incomplete: %v", inc.Data)
	}
	// Dedupe: the snapshot taken mid-turn plus the stream's items give the
	// final history, each item once, the streamed text under its final id.
	seen := map[string]bool{}
	for _, it := range snap["items"].([]any) {
		seen[it.(map[string]any)["id"].(string)] = true
	}
	for _, e := range second.all() {
		if e.Name == "response.output_item.done" {
			seen[e.Data["item"].(map[string]any)["id"].(string)] = true
		}
	}
	var final map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &final)
	var ids []string
	for _, it := range final["items"].([]any) {
		m := it.(map[string]any)
		ids = append(ids, m["id"].(string))
		if !seen[m["id"].(string)] {
			t.Errorf("item %v was neither in the snapshot nor on the stream", m["id"])
		}
	}
	if strings.Join(ids, ",") != id(conv, "msg_0")+","+id(conv, "msg_1") || final["status"] != "idle" {
		t.Errorf("final: %v %v", ids, final["status"])
	}
	done := first.waitFor("the answer's done item", func(e sseEvent) bool {
		return e.Name == "response.output_item.done" && at(e.Data, "item", "id") == id(conv, "msg_1")
	})
	if at(done.Data, "item", "content") == nil || !strings.Contains(string(mustJSON(done.Data)), "partial answer") {
		t.Errorf("the interrupted answer's text: %v", done.Data)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// TestQueuedMessageConsumedAtCheckpoint: a message posted while a turn
// runs is taken in after the tool results, before the next model call.
func TestQueuedMessageConsumedAtCheckpoint(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(
		llmtest.Reply{DelayMs: 400, ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_dir", Arguments: `{}`}}},
		llmtest.Reply{Text: []string{"both done"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("first"), nil)
	s.waitFor("running", func(e sseEvent) bool { return e.Name == "session.status" && e.Data["status"] == "running" })
	var acc map[string]any
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("and also this"), &acc)
	s.idle(2)
	consumed := s.waitName("session.input.consumed", 2)
	if at(consumed.Data, "data", "queued_item_id") != acc["queued_item_id"] || at(consumed.Data, "data", "position") != 3.0 {
		t.Errorf("second input: %v", consumed.Data)
	}
	if n := len(f.llm.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (one turn)", n)
	}
	if !strings.Contains(string(f.llm.Requests()[1].Raw), "and also this") {
		t.Error("the queued message did not reach the model at the checkpoint")
	}
	if got := strings.Count(strings.Join(s.names(), " "), "response.completed"); got != 1 {
		t.Errorf("%d responses, want 1", got)
	}
}

func TestEventErrors(t *testing.T) {
	f := newFixture(t, "")
	conv := f.create(nil)["id"].(string)
	for _, c := range []struct {
		body any
		code int
		want string
	}{
		{map[string]any{"type": "external_output_text_delta", "data": map[string]any{"delta": "x"}}, 400, "unknown event type"},
		{map[string]any{"type": "message", "data": map[string]any{"role": "assistant", "content": "hi"}}, 400, "role must be"},
		{map[string]any{"type": "message", "data": map[string]any{"content": []any{}}}, 400, "non-empty list"},
		{map[string]any{"type": "message"}, 400, "data is required"},
		{map[string]any{"type": "function_call_output", "data": map[string]any{"call_id": "nope", "output": "x"}}, 400, "no tool call"},
		{map[string]any{"type": "message", "data": map[string]any{"content": "hi"}, "extra": 1}, 422, "unknown field"},
		{map[string]any{"data": map[string]any{"content": "hi"}}, 422, "type is required"},
		{map[string]any{"type": "message", "data": "hi"}, 422, "data must be an object"},
		{map[string]any{"type": "stop_session"}, 202, ""},
	} {
		var out map[string]any
		if code := f.do("POST", "/v1/sessions/"+conv+"/events", c.body, &out); code != c.code || !strings.Contains(errMsg(out), c.want) {
			t.Errorf("%v: %d %v, want %d %q", c.body, code, out, c.code, c.want)
		}
	}
	if code := f.do("POST", "/v1/sessions/conv_00000000-0000-0000-0000-000000000000/events", userMessage("x"), nil); code != 404 {
		t.Errorf("unknown session: %d", code)
	}
	if code := f.do("GET", "/v1/sessions/nope", nil, nil); code != 404 {
		t.Errorf("bad id: %d", code)
	}
}

func TestCreatePatchForkDelete(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"one"}}, llmtest.Reply{Text: []string{"two"}})
	os.MkdirAll(filepath.Join(f.work, "sub"), 0o755)
	var bad map[string]any
	if code := f.do("POST", "/v1/sessions", map[string]any{"workspace": "../.."}, &bad); code != 422 || !strings.Contains(errMsg(bad), "outside the work directory") {
		t.Errorf("workspace outside: %d %v", code, bad)
	}
	if code := f.do("POST", "/v1/sessions", map[string]any{"host_id": "h1"}, &bad); code != 400 {
		t.Errorf("host_id: %d %v", code, bad)
	}
	if code := f.do("POST", "/v1/sessions", map[string]any{"agent_id": "ag_nope"}, &bad); code != 404 {
		t.Errorf("unknown agent: %d %v", code, bad)
	}
	// initial_items ending in a user message start a turn.
	snap := f.create(map[string]any{"workspace": "sub", "initial_items": []map[string]any{
		{"type": "message", "role": "user", "content": "hi"}, {"type": "message", "role": "assistant", "content": "hello"},
		{"type": "message", "role": "user", "content": "count"}}})
	conv := snap["id"].(string)
	if snap["workspace"] != filepath.Join(f.work, "sub") {
		t.Errorf("workspace: %v", snap["workspace"])
	}
	s := f.stream(conv)
	s.idle(1) // the turn initial_items started
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("banana again"), nil)
	s.idle(2)
	var patched map[string]any
	if code := f.do("PATCH", "/v1/sessions/"+conv, map[string]any{"title": "renamed", "labels": map[string]any{"k": "v"}, "model_override": "m2"}, &patched); code != 200 ||
		patched["title"] != "renamed" || patched["model_override"] != "m2" || patched["model"] != "fake/m2" || at(patched, "labels", "k") != "v" {
		t.Fatalf("patch: %d %v", code, patched)
	}
	for body, want := range map[string]string{`{"model_override":""}`: "must not be empty", `{"model_override":"gpt-9"}`: "not offered",
		`{"runner_id":"r1"}`: "not supported"} {
		var out map[string]any
		var v any
		json.Unmarshal([]byte(body), &v)
		if code := f.do("PATCH", "/v1/sessions/"+conv, v, &out); code != 400 || !strings.Contains(errMsg(out), want) {
			t.Errorf("%s: %d %v", body, code, out)
		}
	}
	f.do("PATCH", "/v1/sessions/"+conv, map[string]any{"model_override": "default"}, &patched)
	if patched["model_override"] != nil {
		t.Errorf("clear override: %v", patched["model_override"])
	}
	// Items: hi(0) hello(1) count(2) one(3) again(4) two(5); resp_2 ends at 4.
	var fork map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/fork", map[string]any{"up_to_response_id": id(conv, "resp_2")}, &fork); code != 201 ||
		fork["status"] != "idle" || fork["title"] != "Fork of renamed" || len(fork["items"].([]any)) != 4 || at(fork, "labels", "k") != "v" {
		t.Fatalf("fork: %d %v", code, fork)
	}
	if code := f.do("POST", "/v1/sessions/"+conv+"/fork", map[string]any{"up_to_response_id": id(conv, "resp_9")}, &bad); code != 400 {
		t.Errorf("fork at an unknown response: %d", code)
	}
	var orig map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &orig)
	if len(orig["items"].([]any)) != 6 {
		t.Errorf("the original changed: %v", orig["items"])
	}
	var list map[string]any
	f.do("GET", "/v1/sessions?limit=1", nil, &list)
	if data := list["data"].([]any); len(data) != 1 || list["has_more"] != true || data[0].(map[string]any)["items"] != nil {
		t.Errorf("list: %v", list)
	}
	f.do("GET", "/v1/sessions?search_query=banana", nil, &list)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != conv {
		t.Errorf("search: %v", list)
	}
	f.do("PATCH", "/v1/sessions/"+fork["id"].(string), map[string]any{"archived": true}, nil)
	f.do("GET", "/v1/sessions", nil, &list)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != conv {
		t.Errorf("an archived session is listed: %v", list)
	}
	f.do("GET", "/v1/sessions?include_archived=true&order=asc", nil, &list)
	if data := list["data"].([]any); len(data) != 2 || data[1].(map[string]any)["archived"] != true || *strPtr(list["last_id"]) != fork["id"] {
		t.Errorf("include_archived: %v", list)
	}
	var del map[string]any
	if code := f.do("DELETE", "/v1/sessions/"+conv, nil, &del); code != 200 || del["deleted"] != true {
		t.Fatalf("delete: %d %v", code, del)
	}
	s.waitFor("[DONE]", func(e sseEvent) bool { return e.Done })
	if code := f.do("GET", "/v1/sessions/"+conv, nil, nil); code != 404 {
		t.Errorf("deleted session: %d", code)
	}
}

// TestAgentBoundSession: a session bound to an uploaded agent runs its
// turns with the agent's model, instructions, tools and iteration cap.
func TestAgentBoundSession(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"reviewed"}})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("bundle", "reviewer.tar.gz")
	part.Write(bundletest.Config("name: reviewer\nmodel: m2\ninstructions: |\n  You review diffs.\ntools: [list_dir]\nmax_iterations: 2\n"))
	mw.Close()
	resp, err := http.Post(f.srv.URL+"/api/agents", mw.FormDataContentType(), &body)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("upload: %v %v", resp, err)
	}
	var ag map[string]any
	json.NewDecoder(resp.Body).Decode(&ag)
	resp.Body.Close()
	snap := f.create(map[string]any{"agent_id": ag["id"]})
	if snap["agent_name"] != "reviewer" || snap["model"] != "fake/m2" {
		t.Fatalf("snapshot: %v", snap)
	}
	s := f.stream(snap["id"].(string))
	f.do("POST", "/v1/sessions/"+snap["id"].(string)+"/events", userMessage("review"), nil)
	s.idle(2)
	raw := string(f.llm.Requests()[0].Raw)
	if !strings.Contains(raw, `"model":"m2"`) || !strings.Contains(raw, "You review diffs.") ||
		!strings.Contains(raw, `"name":"list_dir"`) || strings.Contains(raw, `"name":"write_file"`) {
		t.Errorf("the turn did not follow the agent: %.600s", raw)
	}
	done := s.waitName("response.output_item.done", 1)
	if at(done.Data, "item", "model") != "reviewer" {
		t.Errorf("model-produced items name the agent: %v", done.Data)
	}
}

// TestHeartbeat: an idle stream still hears from the server.
func TestHeartbeat(t *testing.T) {
	f := newFixture(t, "", func(o *Options) { o.Heartbeat = 20 * time.Millisecond })
	s := f.stream(f.create(nil)["id"].(string))
	s.waitName("response.heartbeat", 2)
}

func strPtr(v any) *string {
	s, _ := v.(string)
	return &s
}

// TestTrackersReleased: a session nobody watches and nothing runs in
// keeps no tracker (a long-running server would otherwise hold one per
// session ever touched); the next stream starts a fresh one.
func TestTrackersReleased(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"one"}})
	conv := f.create(nil)["id"].(string)
	id := conv[len("conv_"):]
	resp, err := http.Get(f.srv.URL + "/v1/sessions/" + conv + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	if f.api.sessions.lookup(id) == nil {
		t.Fatal("no tracker while a stream is open")
	}
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for f.api.sessions.lookup(id) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the tracker outlived its last stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A message still runs a turn (a fresh tracker), which is then dropped.
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("hi"), nil)
	s.idle(2)
}

// TestFailedTurn: a provider error ends the response with response.failed
// and the session in seed 003's failed state: the snapshot says so (after
// its tracker is gone too), events are refused with 409 session_failed,
// and a fork of it starts idle and runs the next message.
func TestFailedTurn(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Status: 400, ErrorBody: `{"error":{"message":"bad request"}}`}, llmtest.Reply{Text: []string{"fine now"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("break"), nil)
	failed := s.waitName("response.failed", 1)
	if msg, _ := at(failed.Data, "response", "error", "message").(string); !strings.Contains(msg, "bad request") {
		t.Errorf("failed: %v", failed.Data)
	}
	s.waitFor("session.status failed", func(e sseEvent) bool { return e.Name == "session.status" && e.Data["status"] == "failed" })
	var refused map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("again"), &refused); code != 409 || errCode(refused) != "session_failed" {
		t.Errorf("an event to a failed session: %d %v", code, refused)
	}
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", map[string]any{"type": "interrupt"}, nil); code != 202 {
		t.Errorf("an interrupt to a failed session: %d", code)
	}
	s.resp.Body.Close()
	<-s.closed
	waitUntil(t, func() bool { return f.api.sessions.lookup(strings.TrimPrefix(conv, "conv_")) == nil })
	var snap map[string]any
	if f.do("GET", "/v1/sessions/"+conv, nil, &snap); snap["status"] != "failed" {
		t.Errorf("the failed state is not kept: %v", snap["status"])
	}
	var fork map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/fork", nil, &fork); code != 201 || fork["status"] != "idle" {
		t.Fatalf("fork of a failed session: %d %v", code, fork)
	}
	fs := f.stream(fork["id"].(string))
	f.do("POST", "/v1/sessions/"+fork["id"].(string)+"/events", userMessage("again"), nil)
	fs.waitName("response.completed", 1)
}

// TestQueuedAfterLastCheckpoint: a message posted while the turn's last
// model call streams (no checkpoint left) starts the next turn when it ends.
func TestQueuedAfterLastCheckpoint(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"slow ", "answer ", "here"}, ChunkDelayMs: 150},
		llmtest.Reply{Text: []string{"second turn"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("first"), nil)
	s.waitName("response.output_text.delta", 1)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("queued"), nil)
	s.waitName("response.completed", 2)
	if n := len(f.llm.Requests()); n != 2 || !strings.Contains(string(f.llm.Requests()[1].Raw), "queued") {
		t.Errorf("%d model calls; the queued message did not run", n)
	}
}
