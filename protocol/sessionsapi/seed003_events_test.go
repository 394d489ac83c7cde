package sessionsapi

import (
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// Seed 003's event types: the inputs openheim refused and the outputs it
// never sent (docs/sessions-api.md, "Seed 003 conformance").

func post(f *fixture, conv, typ string, data any) (int, map[string]any) {
	f.t.Helper()
	var out map[string]any
	body := map[string]any{"type": typ}
	if data != nil {
		body["data"] = data
	}
	code := f.do("POST", "/v1/sessions/"+conv+"/events", body, &out)
	return code, out
}

// TestQueuedItems: function_call, its output (function_call_output or its
// alias tool_result) and reasoning items are queued ({"queued": true}),
// stored in order without a model call (session.input.consumed with
// their queued ids and types, no response), shown in the snapshot, and
// sent with the history of the next turn. An output for no call is a 400.
func TestQueuedItems(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"noted"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	s.waitName("session.status", 1)
	var qids []string
	for _, in := range []struct {
		typ  string
		data map[string]any
	}{
		{"reasoning", map[string]any{"content": []any{map[string]any{"type": "reasoning_text", "text": "the user wants weather"}}}},
		{"function_call", map[string]any{"name": "get_weather", "arguments": `{"city":"Oslo"}`, "call_id": "call_c1"}},
		{"tool_result", map[string]any{"call_id": "call_c1", "output": "rain"}},
	} {
		code, out := post(f, conv, in.typ, in.data)
		if code != 202 || out["queued"] != true || out["queued_item_id"] == nil {
			t.Fatalf("%s: %d %v", in.typ, code, out)
		}
		qids = append(qids, out["queued_item_id"].(string))
	}
	if code, out := post(f, conv, "function_call_output", map[string]any{"call_id": "call_none", "output": "x"}); code != 400 {
		t.Errorf("an output for no call: %d %v", code, out)
	}
	if code, out := post(f, conv, "function_call", map[string]any{"name": "x", "arguments": "{not json"}); code != 400 {
		t.Errorf("a call with broken arguments: %d %v", code, out)
	}
	var types []string
	for i := range 3 {
		e := s.waitName("session.input.consumed", i+1)
		if at(e.Data, "data", "queued_item_id") != qids[i] {
			t.Errorf("consumed #%d: %v, want %s", i, e.Data, qids[i])
		}
		types = append(types, at(e.Data, "data", "type").(string))
	}
	if strings.Join(types, ",") != "reasoning,function_call,function_call_output" {
		t.Errorf("consumed types: %v", types)
	}
	s.idle(2)
	for _, n := range s.names() {
		if strings.HasPrefix(n, "response.") {
			t.Errorf("storing queued items made a response: %v", s.names())
			break
		}
	}
	var snap map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &snap)
	items := snap["items"].([]any)
	if len(items) != 3 || at(items[1].(map[string]any), "call_id") != "call_c1" || at(items[2].(map[string]any), "output") != "rain" ||
		at(items[0].(map[string]any), "type") != "reasoning" {
		t.Fatalf("items: %s", mustJSON(items))
	}
	post(f, conv, "message", map[string]any{"role": "user", "content": "and now?"})
	s.waitName("response.completed", 1)
	if raw := string(f.llm.Requests()[0].Raw); !strings.Contains(raw, "call_c1") || !strings.Contains(raw, "rain") {
		t.Errorf("the next turn lacks the recorded items: %.600s", raw)
	}
}

// TestQueuedItemsWaitForTheTurn: a queued item posted while a turn runs is
// stored after it ends, and what was posted after it waits behind it.
func TestQueuedItemsWaitForTheTurn(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"slow ", "answer"}, ChunkDelayMs: 150}, llmtest.Reply{Text: []string{"second"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "first"})
	s.waitName("response.output_text.delta", 1)
	post(f, conv, "reasoning", map[string]any{"summary": []any{map[string]any{"type": "summary_text", "text": "noted"}}})
	post(f, conv, "message", map[string]any{"role": "user", "content": "second"})
	s.waitName("response.completed", 2)
	var snap map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &snap)
	var types []string
	for _, it := range snap["items"].([]any) {
		m := it.(map[string]any)
		types = append(types, m["type"].(string)+":"+strings.TrimSpace(string(mustJSON(m["content"]))))
	}
	got := strings.Join(types, " ")
	if !strings.Contains(got, "reasoning") || strings.Index(got, "reasoning") > strings.LastIndex(got, `"second"`) {
		t.Errorf("order: %s", got)
	}
}

// TestStopSession: stop_session stops the running turn like interrupt
// ({"queued": false}); the next message starts a new one.
func TestStopSession(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"never ", "ends"}, Hang: true}, llmtest.Reply{Text: []string{"again"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "go"})
	s.waitName("response.output_text.delta", 1)
	if code, out := post(f, conv, "stop_session", map[string]any{}); code != 202 || out["queued"] != false {
		t.Fatalf("stop_session: %d %v", code, out)
	}
	s.waitName("response.incomplete", 1)
	s.idle(2)
	post(f, conv, "message", map[string]any{"role": "user", "content": "again"})
	s.waitName("response.completed", 1)
}

// TestResponseLifecycleEvents: a turn's response is queued first, under
// the id it is created with; a provider error that is retried says so
// (response.retry) before the answer; a cancel that is not this API's
// interrupt ends the response as response.cancelled.
func TestResponseLifecycleEvents(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Status: 500, ErrorBody: `{"error":{"message":"overloaded"}}`}, llmtest.Reply{Text: []string{"fine"}},
		llmtest.Reply{Text: []string{"hanging"}, Hang: true})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "hi"})
	queued := s.waitName("response.queued", 1)
	created := s.waitName("response.created", 1)
	if at(queued.Data, "response", "id") != at(created.Data, "response", "id") || at(queued.Data, "response", "status") != "queued" {
		t.Errorf("queued %v, created %v", queued.Data, created.Data)
	}
	retry := s.waitName("response.retry", 1)
	if retry.Data["attempt"] != 1.0 || !strings.Contains(mustString(at(retry.Data, "error", "message")), "overloaded") ||
		retry.Data["response_id"] != at(created.Data, "response", "id") {
		t.Errorf("retry: %v", retry.Data)
	}
	s.waitName("response.completed", 1)
	if names := strings.Join(s.names(), " "); strings.Index(names, "response.retry") > strings.Index(names, "response.output_text.delta") {
		t.Errorf("the retry came after the answer: %s", names)
	}
	post(f, conv, "message", map[string]any{"role": "user", "content": "hang"})
	s.waitName("response.output_text.delta", 2)
	<-f.hub.Cancel(strings.TrimPrefix(conv, "conv_")) // as a /ws client's session/cancel does
	cancelled := s.waitName("response.cancelled", 1)
	if at(cancelled.Data, "response", "status") != "cancelled" {
		t.Errorf("cancelled: %v", cancelled.Data)
	}
}

func mustString(v any) string {
	s, _ := v.(string)
	return s
}

// TestCompactionInProgress: a compaction says it is under way before its
// item arrives.
func TestCompactionInProgress(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"answer"}}, llmtest.Reply{Text: []string{"- summary"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "hi"})
	s.idle(2)
	if code, _ := post(f, conv, "compact", map[string]any{}); code != 202 {
		t.Fatal(code)
	}
	progress := s.waitName("response.compaction.in_progress", 1)
	s.waitFor("the compaction item", func(e sseEvent) bool {
		return e.Name == "response.output_item.done" && at(e.Data, "item", "type") == "compaction"
	})
	if progress.Data["conversation_id"] != conv || progress.Data["response_id"] != id(conv, "resp_2") {
		t.Errorf("in progress: %v", progress.Data)
	}
}

// TestReasoningSummaryAndToolCallStart: with a provider that shows only a
// summary of the model's reasoning (OpenAI Responses), the reasoning item
// starts (response.reasoning.started), streams as
// response.reasoning_summary_text.delta, and the snapshot shows it as a
// summary; the tool call is announced (output_item.added, in_progress) as
// the model begins it, under the id it is stored with.
func TestReasoningSummaryAndToolCallStart(t *testing.T) {
	f := newFixture(t, `[providers.resp]
kind = "openai_responses"
api_base = "LLM"
api_key = "sk-test"
default_model = "gpt-5"
models = ["gpt-5"]
`)
	f.llm.Enqueue(llmtest.Reply{Thinking: []string{"**Plan**", " look"}, Encrypted: "enc",
		ToolCalls: []llmtest.ToolCall{{ID: "call_r", Name: "list_dir", Arguments: `{"path":"."}`, Split: 3}}},
		llmtest.Reply{Text: []string{"done"}})
	conv := f.create(map[string]any{"model_override": "resp/gpt-5"})["id"].(string)
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "look"})
	s.waitName("response.completed", 1)
	started := s.waitName("response.reasoning.started", 1)
	delta := s.waitName("response.reasoning_summary_text.delta", 1)
	if started.Data["item_id"] != id(conv, "rs_1") || delta.Data["delta"] != "**Plan**" || delta.Data["item_id"] != id(conv, "rs_1") {
		t.Errorf("reasoning: %v %v", started.Data, delta.Data)
	}
	added := s.waitFor("the call as it starts", func(e sseEvent) bool {
		return e.Name == "response.output_item.added" && at(e.Data, "item", "type") == "function_call"
	})
	done := s.waitFor("the call stored", func(e sseEvent) bool {
		return e.Name == "response.output_item.done" && at(e.Data, "item", "type") == "function_call"
	})
	if at(added.Data, "item", "status") != "in_progress" || at(added.Data, "item", "name") != "list_dir" ||
		at(added.Data, "item", "id") != at(done.Data, "item", "id") || at(done.Data, "item", "id") != id(conv, "fc_1_0") {
		t.Errorf("call added %v, done %v", added.Data, done.Data)
	}
	names := strings.Join(s.names(), " ")
	if strings.Index(names, "response.output_item.added") > strings.Index(names, "response.output_item.done") {
		t.Errorf("order: %s", names)
	}
	var snap map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &snap)
	rs := snap["items"].([]any)[1].(map[string]any)
	if rs["type"] != "reasoning" || !strings.Contains(string(mustJSON(rs["summary"])), "summary_text") || rs["content"] != nil {
		t.Errorf("reasoning item: %v", rs)
	}
}

// TestClientTaskCancel: a client tool call the turn waits for is called
// off on the stream when the turn is interrupted.
func TestClientTaskCancel(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "cc1", Name: "ask_user", Arguments: `{}`}}})
	conv := f.create(map[string]any{"client_tools": []map[string]any{{"type": "function", "name": "ask_user"}}})["id"].(string)
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "ask"})
	s.waitFor("waiting", func(e sseEvent) bool { return e.Name == "session.status" && e.Data["status"] == "waiting" })
	post(f, conv, "interrupt", nil)
	cancel := s.waitName("response.client_task.cancel", 1)
	if cancel.Data["call_id"] != "cc1" {
		t.Errorf("cancel: %v", cancel.Data)
	}
}

// TestTotalCost: total_cost_usd is what the session's model calls cost at
// the config's prices (null while a model it used, or the one its first
// turn will use, has none); session.usage carries it after each turn.
func TestTotalCost(t *testing.T) {
	f := newFixture(t, `[prices."fake/m1"]
input = 2
output = 10
`)
	f.llm.Enqueue(llmtest.Reply{Text: []string{"a"}, Usage: &llmtest.Usage{Prompt: 1000, Completion: 100}},
		llmtest.Reply{Text: []string{"b"}, Usage: &llmtest.Usage{Prompt: 500, Completion: 0}})
	snap := f.create(nil)
	conv := snap["id"].(string)
	if snap["total_cost_usd"] != 0.0 {
		t.Errorf("a priced session before its first call: %v", snap["total_cost_usd"])
	}
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "one"})
	usage := s.waitName("session.usage", 1)
	if usage.Data["total_cost_usd"] != 0.003 || usage.Data["context_tokens"] != 1100.0 {
		t.Errorf("session.usage: %v", usage.Data)
	}
	post(f, conv, "message", map[string]any{"role": "user", "content": "two"})
	s.waitName("session.usage", 2)
	f.do("GET", "/v1/sessions/"+conv, nil, &snap)
	if cost, _ := snap["total_cost_usd"].(float64); cost < 0.003999 || cost > 0.004001 {
		t.Errorf("total cost: %v", snap["total_cost_usd"])
	}
	// A model without a price: null.
	other := f.create(map[string]any{"model_override": "fake/m2"})
	if other["total_cost_usd"] != nil {
		t.Errorf("an unpriced session: %v", other["total_cost_usd"])
	}
}

// TestSubagentSessions: a delegated task runs as a session of its own:
// session.created on the parent's stream names it, GET /v1/sessions lists
// it only under kind=sub_agent (or any), it reads like any session, and it
// cannot be forked (its parent can).
func TestSubagentSessions(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "d1", Name: "delegate_task", Arguments: `{"system_prompt":"You count.","task":"count to 3"}`}}},
		llmtest.Reply{Text: []string{"1 2 3"}}, llmtest.Reply{Text: []string{"it counted"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": "delegate"})
	created := s.waitName("session.created", 1)
	s.waitName("response.completed", 1)
	child, _ := created.Data["child_conversation_id"].(string)
	if created.Data["conversation_id"] != conv || !strings.HasPrefix(child, "conv_") || created.Data["call_id"] != "d1" ||
		created.Data["agent_name"] != "subagent" || created.Data["agent_id"] != nil {
		t.Fatalf("session.created: %v", created.Data)
	}
	ids := func(kind string) []string {
		var list map[string]any
		if code := f.do("GET", "/v1/sessions?order=asc"+kind, nil, &list); code != 200 {
			t.Fatalf("list %s: %d %v", kind, code, list)
		}
		var out []string
		for _, d := range list["data"].([]any) {
			out = append(out, d.(map[string]any)["id"].(string))
		}
		return out
	}
	waitUntil(t, func() bool { return len(ids("&kind=any")) == 2 })
	if got := ids(""); len(got) != 1 || got[0] != conv {
		t.Errorf("default list: %v", got)
	}
	if got := ids("&kind=sub_agent"); len(got) != 1 || got[0] != child {
		t.Errorf("sub_agent list: %v", got)
	}
	if code := f.do("GET", "/v1/sessions?kind=children", nil, nil); code != 400 {
		t.Errorf("an unknown kind: %d", code)
	}
	var snap map[string]any
	f.do("GET", "/v1/sessions/"+child, nil, &snap)
	if items := snap["items"].([]any); len(items) != 2 || !strings.Contains(string(mustJSON(items[1])), "1 2 3") {
		t.Errorf("the child's items: %s", mustJSON(snap["items"]))
	}
	var bad map[string]any
	if code := f.do("POST", "/v1/sessions/"+child+"/fork", nil, &bad); code != 400 || !strings.Contains(errMsg(bad), "subagent") {
		t.Errorf("fork of a subagent's session: %d %v", code, bad)
	}
}
