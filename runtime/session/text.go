package session

import (
	"strings"

	"github.com/openheim/openheim/runtime/message"
)

// SearchText is what full-text search indexes for a message: everything a
// user might remember and type, including tool names, arguments and
// results. Images and redacted thinking are opaque bytes and add nothing.
func SearchText(m message.Message) string {
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	for _, b := range m.Content {
		switch b.Type {
		case message.TypeText:
			add(b.Text)
		case message.TypeThinking:
			add(b.Thinking)
		case message.TypeToolUse:
			add(b.Name)
			add(b.Arguments)
		case message.TypeToolResult:
			add(b.Content)
		}
	}
	return strings.Join(parts, "\n")
}
