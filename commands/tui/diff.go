package tui

import (
	"fmt"
	"strings"

	"github.com/openheim/openheim/commands/diff"
)

// diffContext is the lines of context around each change.
const diffContext = 3

// FileDiff is a file change drawn as a unified diff for a terminal.
type FileDiff struct {
	// Lines are the diff's lines, styled: a header naming the file and
	// the counts, then each hunk.
	Lines []string
	// Added and Deleted count the changed lines.
	Added, Deleted int
}

// NewFileDiff diffs old (nil: a new file) against new; name is how the
// file is shown (a path relative to the work directory).
func NewFileDiff(st Style, name string, old *string, new string) FileDiff {
	before := ""
	if old != nil {
		before = *old
	}
	r := diff.Unified(before, new, diffContext)
	fd := FileDiff{Added: r.Added, Deleted: r.Deleted}
	counts := st.OK(fmt.Sprintf("+%d", r.Added)) + " " + st.Fail(fmt.Sprintf("-%d", r.Deleted))
	switch {
	case old == nil:
		fd.Lines = append(fd.Lines, st.Bold("new file "+name)+" "+counts)
	case len(r.Hunks) == 0:
		fd.Lines = append(fd.Lines, st.Bold(name)+" "+st.Dim("(no change)"))
	default:
		fd.Lines = append(fd.Lines, st.Bold(name)+" "+counts)
	}
	for i, h := range r.Hunks {
		fd.Lines = append(fd.Lines, st.AccentText(fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)))
		for j, l := range h.Lines {
			text := strings.TrimSuffix(l.Text, "\r")
			switch l.Op {
			case diff.Delete:
				fd.Lines = append(fd.Lines, st.Fail("-"+text))
			case diff.Insert:
				fd.Lines = append(fd.Lines, st.OK("+"+text))
			default:
				fd.Lines = append(fd.Lines, st.Dim(" "+text))
			}
			if last := i == len(r.Hunks)-1 && j == len(h.Lines)-1; last && l.Op != diff.Equal {
				if l.Op == diff.Delete && r.OldNoEOL || l.Op == diff.Insert && r.NewNoEOL {
					fd.Lines = append(fd.Lines, st.Dim(`\ No newline at end of file`))
				}
			}
		}
	}
	return fd
}

// Head is the first limit lines of the diff and a line saying how many
// more there are, or the whole diff when it fits.
func (d FileDiff) Head(st Style, limit int, more string) []string {
	if len(d.Lines) <= limit {
		return d.Lines
	}
	out := append([]string(nil), d.Lines[:limit]...)
	return append(out, st.Dim(fmt.Sprintf("… %d more lines%s", len(d.Lines)-limit, more)))
}
