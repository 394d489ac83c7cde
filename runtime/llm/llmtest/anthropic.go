package llmtest

import "encoding/json"

// anthropicEvents renders the reply as an Anthropic Messages stream, without
// the message_stop end marker (the server sends it), and the index of the
// message_delta event (where a Hang reply stops).
//
// Order: message_start, ping, redacted_thinking blocks, one thinking block
// (a thinking_delta per element, then signature_delta), one text block (a
// text_delta per element), tool_use blocks (input_json_delta fragments),
// message_delta. ErrorEvent replaces everything after the text with an
// `event: error`; Malformed puts invalid JSON after message_start.
func (r Reply) anthropicEvents(id, model string) (events []sseEvent, finishAt int) {
	add := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // only plain types: cannot happen
		}
		events = append(events, sseEvent{name: name, data: string(b)})
	}
	type obj = map[string]any

	usage := obj{"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
	if r.Usage != nil {
		usage["input_tokens"] = r.Usage.Prompt
		usage["cache_creation_input_tokens"] = r.Usage.CacheCreation
		usage["cache_read_input_tokens"] = r.Usage.Cached
	}
	add("message_start", obj{"type": "message_start", "message": obj{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if r.Malformed {
		events = append(events, sseEvent{name: "content_block_delta",
			data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"oops"`})
	}
	add("ping", obj{"type": "ping"})

	index := 0
	block := func(start obj, deltas ...obj) {
		add("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": start})
		for _, d := range deltas {
			add("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d})
		}
		add("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	for _, data := range r.RedactedThinking {
		block(obj{"type": "redacted_thinking", "data": data})
	}
	if len(r.Thinking) > 0 || r.Signature != "" {
		var ds []obj
		for _, s := range r.Thinking {
			ds = append(ds, obj{"type": "thinking_delta", "thinking": s})
		}
		if r.Signature != "" {
			ds = append(ds, obj{"type": "signature_delta", "signature": r.Signature})
		}
		block(obj{"type": "thinking", "thinking": "", "signature": ""}, ds...)
	}
	if len(r.Text) > 0 {
		var ds []obj
		for _, s := range r.Text {
			ds = append(ds, obj{"type": "text_delta", "text": s})
		}
		block(obj{"type": "text", "text": ""}, ds...)
	}
	if r.ErrorEvent != "" {
		add("error", obj{"type": "error", "error": obj{"type": "overloaded_error", "message": r.ErrorEvent}})
		return events, len(events)
	}
	for _, tc := range r.ToolCalls {
		var ds []obj
		if tc.Arguments != "" {
			for _, frag := range splitRunes(tc.Arguments, tc.Split) {
				ds = append(ds, obj{"type": "input_json_delta", "partial_json": frag})
			}
		}
		block(obj{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": obj{}}, ds...)
	}

	finish := r.anthropicStopReason()
	output := 0
	if r.Usage != nil {
		output = r.Usage.Completion
	}
	finishAt = len(events)
	add("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": finish, "stop_sequence": nil}, "usage": obj{"output_tokens": output}})
	return events, finishAt
}

// anthropicStopReason is the reply's finish reason in Anthropic's words
// (the OpenAI names scripts use are translated).
func (r Reply) anthropicStopReason() string {
	switch r.FinishReason {
	case "":
		if len(r.ToolCalls) > 0 {
			return "tool_use"
		}
		return "end_turn"
	case "stop":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return r.FinishReason
}
