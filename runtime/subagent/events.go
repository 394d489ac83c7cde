package subagent

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// forwarder is a subagent's sink: its tool calls go to the parent's stream
// renamed, its text is kept for the answer and not forwarded (the parent
// gets the answer as the tool result), the rest (thinking, usage of the
// subagent's own context) stays with it.
type forwarder struct {
	tool   *tool
	prefix string // the delegate call's id
	name   string // the subagent's, for titles

	mu        sync.Mutex
	cur, last strings.Builder // text of the model call streaming, of the last one done
}

func (f *forwarder) Emit(e event.Event) {
	switch e.Kind {
	case event.AgentMessageChunk:
		if e.Content != nil && e.Content.Type == message.TypeText {
			f.mu.Lock()
			f.cur.WriteString(e.Content.Text)
			f.mu.Unlock()
		}
	case event.UsageUpdate:
		// Sent once per model call, after its reply: the answer is the text
		// of the last reply.
		f.mu.Lock()
		f.last.Reset()
		f.last.WriteString(f.cur.String())
		f.cur.Reset()
		f.mu.Unlock()
	case event.ToolCall, event.ToolCallUpdate:
		if e.Tool == nil {
			return
		}
		info := *e.Tool
		info.ID = f.prefix + "/" + info.ID
		if e.Kind == event.ToolCall {
			info.Title = "[" + f.name + "] " + info.Title
		}
		f.tool.emit(event.Event{SessionID: f.tool.opts.SessionID, Kind: e.Kind, Tool: &info})
	}
}

// answer is the subagent's last reply text, or the partial text of a reply
// cut short.
func (f *forwarder) answer() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur.Len() > 0 {
		return f.cur.String()
	}
	return f.last.String()
}

// args are delegate_task's arguments. Tools nil: not given.
type args struct {
	Task, Agent, SystemPrompt, Model, Provider string
	Tools                                      []string
	MaxIterations                              int
}

// decodeArgs reads the arguments, tolerating what models commonly send
// instead of the schema's types: a number as a string, a tool list as one
// comma-separated string.
func decodeArgs(raw json.RawMessage) (args, error) {
	var w struct {
		Task          string          `json:"task"`
		Agent         string          `json:"agent"`
		SystemPrompt  string          `json:"system_prompt"`
		Model         string          `json:"model"`
		Provider      string          `json:"provider"`
		Tools         json.RawMessage `json:"tools"`
		MaxIterations json.RawMessage `json:"max_iterations"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return args{}, fmt.Errorf("invalid arguments: %v", err)
	}
	a := args{Task: w.Task, Agent: w.Agent, SystemPrompt: w.SystemPrompt, Model: strings.TrimSpace(w.Model), Provider: strings.TrimSpace(w.Provider)}
	if given(w.Tools) {
		var s string
		if err := json.Unmarshal(w.Tools, &a.Tools); err == nil {
			if a.Tools == nil {
				a.Tools = []string{}
			}
		} else if json.Unmarshal(w.Tools, &s) == nil {
			a.Tools = []string{}
			for _, n := range strings.Split(s, ",") {
				if n = strings.TrimSpace(n); n != "" {
					a.Tools = append(a.Tools, n)
				}
			}
		} else {
			return args{}, fmt.Errorf("invalid arguments: tools must be a list of tool names, got %s", w.Tools)
		}
	}
	if given(w.MaxIterations) {
		n, err := positiveInt(w.MaxIterations)
		if err != nil {
			return args{}, fmt.Errorf("invalid arguments: max_iterations must be a positive integer, got %s", w.MaxIterations)
		}
		a.MaxIterations = n
	}
	return a, nil
}

func given(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func positiveInt(raw json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, err
		}
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, err
		}
	}
	if f < 1 || f != math.Trunc(f) {
		return 0, fmt.Errorf("not a positive integer")
	}
	return int(min(f, math.MaxInt32)), nil
}
