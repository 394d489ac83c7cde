package tools

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/event"
)

// maxPreviewBytes bounds the texts a preview carries whole (the file
// before and after): a change to a larger file is shown by its old and new
// strings alone, so a permission question never carries megabytes.
const maxPreviewBytes = 512 << 10

// Previewer is a tool that can say what a call would change before it
// runs (edit_file and write_file: the file before and after). The loop
// shows the preview on the tool_call event and in the permission question,
// so a person sees an edit before allowing it.
type Previewer interface {
	// Preview returns the change the call would make, or nil when there is
	// nothing to show (bad arguments, a file that cannot be read: the call
	// will say so when it runs). It reads through the tool's confinement
	// root and FS, and changes nothing.
	Preview(ctx context.Context, args json.RawMessage) *Change
}

// Change is a file change: the diff and the line where it starts.
type Change struct {
	Diff event.Diff
	Line int // 1-based line of the first change; 0 when unknown
}

// Content is the change as a tool call's content and locations.
func (c *Change) Content() ([]event.ToolContent, []event.Location) {
	if c == nil {
		return nil, nil
	}
	d := c.Diff
	loc := event.Location{Path: d.Path}
	if c.Line > 0 {
		line := c.Line
		loc.Line = &line
	}
	return []event.ToolContent{{Diff: &d}}, []event.Location{loc}
}

// firstChange is the 1-based line on which old and new first differ.
func firstChange(old, new string) int {
	i := 0
	for i < len(old) && i < len(new) && old[i] == new[i] {
		i++
	}
	return strings.Count(old[:i], "\n") + 1
}

// readForPreview reads p's current content, at most maxPreviewBytes+1
// bytes; ok is false when it cannot be read as text.
func readForPreview(ctx context.Context, root *confine.Root, fsys FS, p, name string) (string, bool) {
	f, err := openContent(ctx, root, fsys, p, name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPreviewBytes+1))
	if err != nil || looksBinary(data[:min(len(data), sniffLen)]) {
		return "", false
	}
	return string(data), true
}
