package commands

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// writeTranscript renders a conversation as Markdown for a person. full
// keeps every tool output whole (export); otherwise long outputs are cut to
// their first lines (show), since the whole thing is one --json away.
func writeTranscript(w io.Writer, conv *session.Conversation, full bool) {
	m := conv.Meta
	fmt.Fprintf(w, "# %s\n\n", orDash(deref(m.Title)))
	fmt.Fprintf(w, "- id: %s\n- model: %s (%s)\n- cwd: %s\n- created: %s\n- updated: %s\n",
		m.ID, orDash(deref(m.Model)), orDash(deref(m.Provider)), orDash(deref(m.Cwd)),
		m.CreatedAt.Local().Format(time.DateTime), m.UpdatedAt.Local().Format(time.DateTime))
	if u := m.ContextUsage; u != nil {
		fmt.Fprintf(w, "- context: %d input, %d output, %d cache read, %d cache write tokens\n",
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheCreationTokens)
	}
	speaker := ""
	for _, msg := range conv.Messages {
		who := map[message.Role]string{message.RoleUser: "You", message.RoleAssistant: "openheim",
			message.RoleTool: "openheim", message.RoleSystem: "System"}[msg.Role]
		if who != speaker {
			fmt.Fprintf(w, "\n## %s\n", who)
			speaker = who
		}
		for _, b := range msg.Content {
			writeBlock(w, b, full)
		}
	}
}

func writeBlock(w io.Writer, b message.Block, full bool) {
	switch b.Type {
	case message.TypeText:
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(b.Text, "\n"))
	case message.TypeThinking:
		fmt.Fprintf(w, "\n> *thinking:* %s\n", strings.ReplaceAll(strings.TrimSpace(b.Thinking), "\n", "\n> "))
	case message.TypeRedactedThinking:
		fmt.Fprintf(w, "\n> *thinking (redacted)*\n")
	case message.TypeImage:
		fmt.Fprintf(w, "\n*[image, %s, %d bytes base64]*\n", b.MimeType, len(b.Data))
	case message.TypeToolUse:
		fmt.Fprintf(w, "\n**→ %s** `%s`\n", b.Name, oneLine(b.Arguments, 200))
	case message.TypeToolResult:
		status := "ok"
		if b.IsError {
			status = "failed"
		}
		out := b.Content
		if !full {
			out = headLines(out, 8)
		}
		fmt.Fprintf(w, "\n**← %s** (%s)\n\n```\n%s\n```\n", b.ToolName, status, strings.TrimRight(out, "\n"))
	}
}

// headLines keeps the first n lines of s and says how many were left out.
func headLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n[... %d more lines]", len(lines)-n)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
