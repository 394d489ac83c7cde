package sessionsapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// TestClientToolWaits: a client tool call parks the turn (waiting) until
// the client posts its output.
func TestClientToolWaits(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "cw1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		llmtest.Reply{Text: []string{"It rains in Oslo."}})
	conv := f.create(map[string]any{"client_tools": []map[string]any{{"type": "function", "name": "get_weather",
		"description": "Weather of a city", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}})["id"].(string)
	var bad map[string]any
	if code := f.do("POST", "/v1/sessions", map[string]any{"client_tools": []map[string]any{{"name": "read_file"}}}, &bad); code != 422 {
		t.Errorf("a client tool named like a built-in: %d %v", code, bad)
	}
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("weather?"), nil)
	s.waitFor("waiting", func(e sseEvent) bool { return e.Name == "session.status" && e.Data["status"] == "waiting" })
	call := s.waitFor("the function call", func(e sseEvent) bool {
		return e.Name == "response.output_item.done" && at(e.Data, "item", "type") == "function_call"
	})
	if at(call.Data, "item", "name") != "get_weather" || at(call.Data, "item", "call_id") != "cw1" {
		t.Fatalf("call: %v", call.Data)
	}
	var snap map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &snap)
	if snap["status"] != "waiting" {
		t.Errorf("snapshot status while waiting: %v", snap["status"])
	}
	out := map[string]any{"type": "function_call_output", "data": map[string]any{"call_id": "cw1", "output": map[string]any{"sky": "rain"}}}
	var queued map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", out, &queued); code != 202 || queued["queued"] != true {
		t.Fatalf("output: %d %v", code, queued)
	}
	s.idle(2)
	if !strings.Contains(string(f.llm.Requests()[1].Raw), `{\"sky\":\"rain\"}`) {
		t.Errorf("the client's output did not reach the model: %s", f.llm.Requests()[1].Raw)
	}
	if !strings.Contains(string(f.llm.Requests()[0].Raw), `"name":"get_weather"`) {
		t.Error("the client tool was not offered")
	}
}

// TestPermissionElicitation: an ask-rule tool call in an API turn is
// asked on the stream and answered through the resolve endpoint.
func TestPermissionElicitation(t *testing.T) {
	f := newFixture(t, "")
	write := func(id, name string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: id, Name: "write_file", Arguments: `{"path":"` + name + `","content":"x"}`}}}
	}
	f.llm.Enqueue(write("w1", "yes.txt"), llmtest.Reply{Text: []string{"wrote"}}, write("w2", "no.txt"), llmtest.Reply{Text: []string{"refused"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	for i, c := range []struct{ file, action string }{{"yes.txt", "accept"}, {"no.txt", "decline"}} {
		f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("write "+c.file), nil)
		ask := s.waitName("response.elicitation_request", i+1)
		if at(ask.Data, "params", "tool") != "write_file" {
			t.Fatalf("ask: %v", ask.Data)
		}
		var snap map[string]any
		f.do("GET", "/v1/sessions/"+conv, nil, &snap)
		if snap["status"] != "waiting" || len(snap["pending_elicitations"].([]any)) != 1 {
			t.Errorf("snapshot while asked: %v %v", snap["status"], snap["pending_elicitations"])
		}
		eid := ask.Data["elicitation_id"].(string)
		var bad map[string]any
		if code := f.do("POST", "/v1/sessions/"+conv+"/elicitations/"+eid+"/resolve", map[string]any{"action": "maybe"}, &bad); code != 422 {
			t.Errorf("bad action: %d", code)
		}
		if code := f.do("POST", "/v1/sessions/"+conv+"/elicitations/"+eid+"/resolve", map[string]any{"action": c.action}, nil); code != 202 {
			t.Fatalf("resolve: %d", code)
		}
		s.idle(i + 2)
	}
	if _, err := os.Stat(filepath.Join(f.work, "yes.txt")); err != nil {
		t.Error("the accepted write did not happen")
	}
	if _, err := os.Stat(filepath.Join(f.work, "no.txt")); err == nil {
		t.Error("the declined write happened")
	}
	if code := f.do("POST", "/v1/sessions/"+conv+"/elicitations/elic_nope/resolve", map[string]any{"action": "accept"}, nil); code != 404 {
		t.Errorf("unknown elicitation: %d", code)
	}
}

// TestCompactEvent: compact summarises into a compaction item the stream
// shows; the next turn starts from it.
func TestCompactEvent(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"first answer"}}, llmtest.Reply{Text: []string{"- user asked once"}},
		llmtest.Reply{Text: []string{"after"}})
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("early question"), nil)
	s.idle(2)
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", map[string]any{"type": "compact", "data": map[string]any{}}, nil); code != 202 {
		t.Fatalf("compact: %d", code)
	}
	item := s.waitFor("the compaction item", func(e sseEvent) bool {
		return e.Name == "response.output_item.done" && at(e.Data, "item", "type") == "compaction"
	})
	if got := at(item.Data, "item", "id"); got != id(conv, "cmp_2") || !strings.Contains(at(item.Data, "item", "summary").(string), "user asked once") {
		t.Fatalf("compaction: %v", item.Data)
	}
	s.idle(3)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("later question"), nil)
	s.idle(4)
	last := string(f.llm.Requests()[2].Raw)
	if strings.Contains(last, "early question") || !strings.Contains(last, "user asked once") {
		t.Errorf("the turn after compaction sent: %s", last)
	}
}

// TestConversationsAndFiles: the conversation view of sessions, and a
// session file sent as an image.
func TestConversationsAndFiles(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"a cat"}})
	a := f.create(map[string]any{"title": "alpha"})["id"].(string)
	time.Sleep(1100 * time.Millisecond) // created_at has seconds
	b := f.create(map[string]any{"title": "beta"})["id"].(string)
	var list map[string]any
	f.do("GET", "/v1/conversations?order=asc", nil, &list)
	if data := list["data"].([]any); len(data) != 2 || data[0].(map[string]any)["id"] != a || data[0].(map[string]any)["object"] != "conversation" {
		t.Fatalf("conversations: %v", list)
	}
	if code := f.do("GET", "/v1/conversations?sort_by=size", nil, nil); code != 400 {
		t.Errorf("bad sort_by: %d", code)
	}
	var conv map[string]any
	if code := f.do("PATCH", "/v1/conversations/"+b, map[string]any{"title": "gamma"}, &conv); code != 200 || conv["title"] != "gamma" {
		t.Errorf("patch: %d %v", code, conv)
	}
	// Upload a PNG and send it as input_image.
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "dot.png")
	part.Write(png)
	mw.Close()
	resp, err := http.Post(f.srv.URL+"/v1/sessions/"+a+"/resources/files", mw.FormDataContentType(), &body)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("upload: %v %v", resp, err)
	}
	var file map[string]any
	json.NewDecoder(resp.Body).Decode(&file)
	resp.Body.Close()
	s := f.stream(a)
	f.do("POST", "/v1/sessions/"+a+"/events", map[string]any{"type": "message", "data": map[string]any{"role": "user",
		"content": []map[string]any{{"type": "input_text", "text": "what is this?"}, {"type": "input_image", "file_id": file["id"]}}}}, nil)
	s.idle(2)
	if raw := string(f.llm.Requests()[0].Raw); !strings.Contains(raw, "data:image/png;base64,iVBOR") {
		t.Errorf("the image did not reach the model: %.300s", raw)
	}
	var items map[string]any
	f.do("GET", "/v1/conversations/"+a+"/items?limit=1&order=desc", nil, &items)
	if data := items["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id(a, "msg_1") || items["has_more"] != true {
		t.Errorf("items: %v", items)
	}
	// Another session cannot reference it.
	var bad map[string]any
	if code := f.do("POST", "/v1/sessions/"+b+"/events", map[string]any{"type": "message", "data": map[string]any{
		"content": []map[string]any{{"type": "input_image", "file_id": file["id"]}}}}, &bad); code != 400 ||
		!strings.Contains(errMsg(bad), "not found in this session") {
		t.Errorf("another session's file: %d %v", code, bad)
	}
	var del map[string]any
	if code := f.do("DELETE", "/v1/conversations/"+b, nil, &del); code != 200 || del["object"] != "conversation.deleted" {
		t.Errorf("delete: %d %v", code, del)
	}
}
