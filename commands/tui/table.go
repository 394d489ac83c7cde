package tui

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Tables: a run of lines starting with "|" is held until it ends and then
// drawn with its columns aligned, the header bold, the rules dim. A table
// is the one construct held whole (its column widths depend on every
// row); the rest of the answer streams as before. Rows that do not make a
// table (no "|---|" line second) are written as they came.

// maxTableBytes bounds a held table: past it, what is held is drawn and
// the rest follows as rows of their own.
const maxTableBytes = 32 << 10

// tableStart reports whether the line at the start of b is a table row (up
// to three spaces, then "|"); ok is false when b ends before that is known.
func tableStart(b []byte, final bool) (start, ok bool) {
	i := 0
	for i < len(b) && i < 4 && b[i] == ' ' {
		i++
	}
	if i == len(b) {
		return false, final
	}
	return i < 4 && b[i] == '|', true
}

// tableLine takes the table's bytes: a row up to its line break, or at a
// line start, the end of the table when the line is not a row.
func (m *Markdown) tableLine(b []byte, final bool) (int, bool) {
	if m.tableLen == 0 || strings.HasSuffix(m.table[len(m.table)-1], "\n") {
		start, ok := tableStart(b, final)
		if !ok {
			return 0, false
		}
		if !start {
			m.endTable()
			m.mode = modeLineStart
			return 0, true
		}
		m.table = append(m.table, "")
	}
	n := bytes.IndexByte(b, '\n')
	take := len(b)
	if n >= 0 {
		take = n + 1
	}
	m.table[len(m.table)-1] += string(b[:take])
	m.tableLen += take
	if m.tableLen > maxTableBytes && n >= 0 {
		m.endTable()
		m.mode = modeLineStart
	}
	return take, true
}

// endTable draws the held rows, if any.
func (m *Markdown) endTable() {
	rows := m.table
	m.table, m.tableLen = nil, 0
	if len(rows) == 0 {
		return
	}
	m.base = 0
	m.sync()
	if len(rows) < 2 || !isDelimiterRow(rows[1]) {
		for _, r := range rows {
			m.textString(r)
		}
		return
	}
	m.out = append(m.out, m.drawTable(rows)...)
	m.wrote, m.last = true, '\n'
	if !strings.HasSuffix(rows[len(rows)-1], "\n") {
		m.out = m.out[:len(m.out)-1]
		m.last = ' '
	}
}

var delimiterCell = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*:?-+:?\s*$`) })

func isDelimiterRow(row string) bool {
	cells := splitRow(row)
	for _, c := range cells {
		if !delimiterCell().MatchString(c) {
			return false
		}
	}
	return len(cells) > 0
}

// splitRow splits "| a | b |" into its cells ("a", "b"); "\|" is a pipe
// inside a cell.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

var sgrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;]*m") })

func displayWidth(s string) int { return utf8.RuneCountInString(sgrRE().ReplaceAllString(s, "")) }

// drawTable renders a header, delimiter and body rows, aligned.
func (m *Markdown) drawTable(rows []string) []byte {
	align := splitRow(rows[1])
	var grid [][]string
	for i, r := range rows {
		if i == 1 {
			continue
		}
		var cells []string
		for _, c := range splitRow(r) {
			cells = append(cells, m.inlineCell(c))
		}
		grid = append(grid, cells)
	}
	widths := make([]int, len(align))
	for _, cells := range grid {
		for j := range min(len(cells), len(widths)) {
			widths[j] = max(widths[j], displayWidth(cells[j]))
		}
	}
	var out bytes.Buffer
	bar := m.st.Dim("│")
	for i, cells := range grid {
		for j, w := range widths {
			cell := ""
			if j < len(cells) {
				cell = cells[j]
			}
			if i == 0 {
				cell = m.st.Bold(cell)
			}
			if j > 0 {
				out.WriteString(bar)
			}
			out.WriteString(" " + pad(cell, w, align[j]) + " ")
		}
		out.WriteByte('\n')
		if i == 0 {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("─", w+2))
			}
			out.WriteString(m.st.Dim(strings.Join(rule, "┼")) + "\n")
		}
	}
	return out.Bytes()
}

// pad fills cell to width w as its delimiter cell aligns it.
func pad(cell string, w int, delim string) string {
	gap := w - displayWidth(cell)
	delim = strings.TrimSpace(delim)
	switch {
	case gap <= 0:
		return cell
	case strings.HasPrefix(delim, ":") && strings.HasSuffix(delim, ":"):
		return strings.Repeat(" ", gap/2) + cell + strings.Repeat(" ", gap-gap/2)
	case strings.HasSuffix(delim, ":"):
		return strings.Repeat(" ", gap) + cell
	}
	return cell + strings.Repeat(" ", gap)
}

// inlineCell renders a cell's inline markdown (emphasis, code, links).
func (m *Markdown) inlineCell(cell string) string {
	var buf bytes.Buffer
	sub := NewMarkdown(&buf, m.st)
	sub.mode = modeInline
	sub.Write([]byte(cell))
	sub.Flush()
	return buf.String()
}
