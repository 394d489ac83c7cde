package commands

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/openheim/openheim/commands/diff"
	"github.com/openheim/openheim/runtime/event"
)

// toolLine is a tool call on one line. A tool's name (write_file, Read) is
// shown with the argument that says the most; an external agent's title
// is already a description ("Edit main.go", "ls -la") and is shown as it is.
func toolLine(t *event.ToolCallInfo) string {
	if strings.ContainsRune(strings.TrimSpace(t.Title), ' ') {
		return oneLine(t.Title, 90)
	}
	name := t.Title
	if name == "" {
		name = t.Kind
	}
	return toolSummary(name, t.RawInput)
}

// updateLine is the new one-line description of a running call when an
// update says more about it (Claude sends the title and the arguments
// only after the tool_call), else "".
func updateLine(t *event.ToolCallInfo) string {
	if t.Title == "" && len(t.RawInput) == 0 {
		return ""
	}
	return toolLine(t)
}

// diffSummary is the change a call's diffs make, for its line: "+3 −1"
// ("new file +3" for a file it creates), led by the file's name when the
// line does not name it already, or "3 files +10 −2"; "" without diffs.
func diffSummary(desc string, content []event.ToolContent) string {
	var name string
	files, add, del, created := 0, 0, 0, false
	for _, c := range content {
		if c.Diff == nil {
			continue
		}
		old := ""
		if c.Diff.OldText != nil {
			old = *c.Diff.OldText
		}
		// The same counts as the diff a permission question shows.
		r := diff.Unified(old, c.Diff.NewText, 0)
		add, del, files = add+r.Added, del+r.Deleted, files+1
		name, created = filepath.Base(c.Diff.Path), c.Diff.OldText == nil
	}
	switch {
	case files == 0:
		return ""
	case files > 1:
		return fmt.Sprintf("%d files +%d −%d", files, add, del)
	}
	change := fmt.Sprintf("+%d −%d", add, del)
	if created {
		change = fmt.Sprintf("new file +%d", add)
	}
	if strings.Contains(desc, name) {
		return change
	}
	return name + ": " + change
}

// failureText is why a call failed, for its line: its output, else the
// text of its content (an external agent may send only that).
func failureText(t *event.ToolCallInfo) string {
	if len(t.RawOutput) > 0 {
		return rawText(t.RawOutput)
	}
	for _, c := range t.Content {
		if c.Block != nil && c.Block.Text != "" {
			return c.Block.Text
		}
	}
	return ""
}
