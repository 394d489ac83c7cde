package acp

import "github.com/openheim/openheim/runtime/llm"

// ToolObject is seed 000's Tool: {"type":"function","function":{...}}.
type ToolObject struct {
	Type     string       `json:"type"`
	Function llm.ToolSpec `json:"function"`
}

// ToolObjects wraps tool specs as seed 000 Tool objects.
func ToolObjects(specs []llm.ToolSpec) []ToolObject {
	out := make([]ToolObject, len(specs))
	for i, s := range specs {
		out[i] = ToolObject{Type: "function", Function: s}
	}
	return out
}
