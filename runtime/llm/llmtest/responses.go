package llmtest

import (
	"encoding/json"
	"fmt"
)

// responsesEvents renders the reply as an OpenAI Responses API stream:
// `event: <type>` + `data: {"type":...,"sequence_number":N,...}` pairs, in
// the order and with the fields of the recorded streams of the vendor's
// SDKs and Vercel ai's fixtures, so the real codex-acp runs turns on it.
//
// Order: response.created, response.in_progress, a reasoning item (the
// Thinking elements as summary deltas of one summary part, Encrypted as its
// encrypted_content), a message item (output_text deltas, or refusal deltas
// for Refusal), function_call items (arguments split over deltas), then
// response.completed, or response.incomplete for the finish reasons length
// (max_output_tokens) and content_filter. ErrorEvent sends an `error` event
// and response.failed after the message instead. It returns the index of
// the final event (where a Hang reply stops); n numbers the ids.
func (r Reply) responsesEvents(n int, model string) (events []sseEvent, finishAt int) {
	rs := &respStream{n: n, model: model, id: fmt.Sprintf("resp_llmtest_%d", n)}
	rs.add("response.created", obj{"response": rs.response("in_progress", nil)})
	if r.Malformed {
		rs.events = append(rs.events, sseEvent{name: "response.output_text.delta", data: `{"type":"response.output_text.delta","delta":"oops"`})
	}
	rs.add("response.in_progress", obj{"response": rs.response("in_progress", nil)})
	if len(r.Thinking) > 0 || r.Encrypted != "" {
		rs.reasoning(r.Thinking, r.Encrypted)
	}
	if len(r.Text) > 0 {
		rs.message("output_text", "response.output_text", r.Text)
	}
	if len(r.Refusal) > 0 {
		rs.message("refusal", "response.refusal", r.Refusal)
	}
	if r.ErrorEvent != "" {
		finishAt = len(rs.events)
		rs.add("error", obj{"code": "server_error", "message": r.ErrorEvent, "param": nil})
		failed := rs.response("failed", nil)
		failed["error"] = obj{"code": "server_error", "message": r.ErrorEvent}
		rs.add("response.failed", obj{"response": failed})
		return rs.events, finishAt
	}
	for i, tc := range r.ToolCalls {
		rs.functionCall(i, tc)
	}
	final, status := "response.completed", "completed"
	var details any
	switch r.FinishReason {
	case "length":
		final, status, details = "response.incomplete", "incomplete", obj{"reason": "max_output_tokens"}
	case "content_filter":
		final, status, details = "response.incomplete", "incomplete", obj{"reason": "content_filter"}
	}
	resp := rs.response(status, r.Usage)
	resp["incomplete_details"] = details
	finishAt = len(rs.events)
	rs.add(final, obj{"response": resp})
	return rs.events, finishAt
}

type obj = map[string]any

// respStream builds one Responses stream.
type respStream struct {
	n         int
	model, id string
	seq       int
	events    []sseEvent
	output    []any // the done items, for the final response object
}

// add appends one event; fields get its type and sequence number.
func (rs *respStream) add(typ string, fields obj) {
	fields["type"] = typ
	fields["sequence_number"] = rs.seq
	rs.seq++
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err) // only plain types: cannot happen
	}
	rs.events = append(rs.events, sseEvent{name: typ, data: string(b)})
}

// response is the response object of the lifecycle events.
func (rs *respStream) response(status string, u *Usage) obj {
	out := obj{"id": rs.id, "object": "response", "created_at": 1764460800, "status": status,
		"error": nil, "incomplete_details": nil, "model": rs.model, "output": []any{}, "store": false, "usage": nil}
	if status == "in_progress" {
		return out
	}
	out["output"] = rs.output
	usage := obj{"input_tokens": 0, "input_tokens_details": obj{"cached_tokens": 0},
		"output_tokens": 0, "output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 0}
	if u != nil {
		usage = obj{"input_tokens": u.Prompt, "input_tokens_details": obj{"cached_tokens": u.Cached},
			"output_tokens": u.Completion, "output_tokens_details": obj{"reasoning_tokens": u.Reasoning},
			"total_tokens": u.Prompt + u.Completion}
	}
	out["usage"] = usage
	return out
}

func (rs *respStream) itemID(prefix string) string {
	return fmt.Sprintf("%s_llmtest_%d_%d", prefix, rs.n, len(rs.output))
}

func (rs *respStream) reasoning(summary []string, encrypted string) {
	id, index := rs.itemID("rs"), len(rs.output)
	item := obj{"id": id, "type": "reasoning", "summary": []any{}}
	if encrypted != "" {
		item["encrypted_content"] = encrypted
	}
	rs.add("response.output_item.added", obj{"output_index": index, "item": item})
	var full string
	if len(summary) > 0 {
		at := obj{"item_id": id, "output_index": index, "summary_index": 0}
		rs.add("response.reasoning_summary_part.added", with(at, "part", obj{"type": "summary_text", "text": ""}))
		for _, d := range summary {
			full += d
			rs.add("response.reasoning_summary_text.delta", with(at, "delta", d))
		}
		rs.add("response.reasoning_summary_text.done", with(at, "text", full))
		rs.add("response.reasoning_summary_part.done", with(at, "part", obj{"type": "summary_text", "text": full}))
		item = with(item, "summary", []any{obj{"type": "summary_text", "text": full}})
	}
	rs.done(index, item)
}

// message streams an assistant message of one content part: partType
// output_text (prefix response.output_text) or refusal.
func (rs *respStream) message(partType, prefix string, deltas []string) {
	id, index := rs.itemID("msg"), len(rs.output)
	rs.add("response.output_item.added", obj{"output_index": index,
		"item": obj{"id": id, "type": "message", "status": "in_progress", "content": []any{}, "role": "assistant"}})
	at := obj{"item_id": id, "output_index": index, "content_index": 0}
	field := "text"
	if partType == "refusal" {
		field = "refusal"
	}
	part := func(s string) obj {
		p := obj{"type": partType, field: s}
		if partType == "output_text" {
			p["annotations"] = []any{}
		}
		return p
	}
	rs.add("response.content_part.added", with(at, "part", part("")))
	var full string
	for _, d := range deltas {
		full += d
		rs.add(prefix+".delta", with(at, "delta", d))
	}
	rs.add(prefix+".done", with(at, field, full))
	rs.add("response.content_part.done", with(at, "part", part(full)))
	rs.done(index, obj{"id": id, "type": "message", "status": "completed", "content": []any{part(full)}, "role": "assistant"})
}

func (rs *respStream) functionCall(i int, tc ToolCall) {
	id, index := rs.itemID("fc"), len(rs.output)
	callID := tc.ID
	if callID == "" {
		callID = fmt.Sprintf("call_llmtest_%d_%d", rs.n, i)
	}
	item := obj{"id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": callID, "name": tc.Name}
	rs.add("response.output_item.added", obj{"output_index": index, "item": item})
	at := obj{"item_id": id, "output_index": index}
	if tc.Arguments != "" {
		for _, frag := range splitRunes(tc.Arguments, tc.Split) {
			rs.add("response.function_call_arguments.delta", with(at, "delta", frag))
		}
	}
	rs.add("response.function_call_arguments.done", with(at, "arguments", tc.Arguments))
	done := with(item, "arguments", tc.Arguments)
	done["status"] = "completed"
	rs.done(index, done)
}

func (rs *respStream) done(index int, item obj) {
	rs.add("response.output_item.done", obj{"output_index": index, "item": item})
	rs.output = append(rs.output, item)
}

// with returns a copy of o with k set to v.
func with(o obj, k string, v any) obj {
	out := make(obj, len(o)+1)
	for key, val := range o {
		out[key] = val
	}
	out[k] = v
	return out
}
