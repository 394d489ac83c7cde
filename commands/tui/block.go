package tui

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// ruleWidth is the length of the line drawn for a thematic break.
const ruleWidth = 40

type blockKind uint8

const (
	bPara blockKind = iota
	bHeading
	bFence
	bQuote
	bBullet
	bOrdered
	bRule
)

// block is how a line starts: its kind and the bytes its prefix takes.
type block struct {
	kind   blockKind
	indent int // leading spaces and tabs
	end    int // bytes the prefix takes from the line start
	mark   int // end of the visible marker (ordered number) or nesting depth (quote)
}

// classify decides how the line at the start of b begins, or reports false
// when b ends before that is known. It looks at most holdLimit bytes ahead,
// so the decision never depends on how the input was split.
func classify(b []byte, final bool) (block, bool) {
	more := func(i int) bool { return i >= len(b) && !final }
	i := 0
	for i < len(b) && i < holdLimit && isSpaceTab(b[i]) {
		i++
	}
	if i >= holdLimit {
		return block{}, true
	}
	if more(i) {
		return block{}, false
	}
	if i == len(b) {
		return block{}, true
	}
	// Like CommonMark, deeper indentation is not a heading, quote or rule.
	// Fences and list items may be indented any amount: LLMs nest them
	// under list items.
	shallow := i <= 3
	c := b[i]
	var blk block
	var ready, found bool
	switch {
	case c == '#' && shallow:
		blk, ready, found = classifyHeading(b, i, final)
	case c == '`' || c == '~':
		blk, ready, found = classifyFence(b, i, final)
	case c == '>' && shallow:
		return classifyQuote(b, i, final)
	case c == '-' || c == '*' || c == '_' || c == '+':
		blk, ready, found = classifyBullet(b, i, final, shallow)
	case isDigit(c):
		blk, ready, found = classifyOrdered(b, i, final)
	default:
		ready = true
	}
	if !ready || found {
		return blk, ready
	}
	return block{indent: i}, true
}

// The classifiers of one kind of block start at b[i]. Each returns the
// block, whether b says enough to tell (false: wait for more), and whether
// it is that kind (else a plain line).

func classifyHeading(b []byte, i int, final bool) (block, bool, bool) {
	j := i
	for j < len(b) && b[j] == '#' && j-i <= 6 {
		j++
	}
	if j >= len(b) && !final {
		return block{}, false, false
	}
	if j-i <= 6 && (j == len(b) || isSpaceTab(b[j]) || b[j] == '\n') {
		end := j
		if j < len(b) && b[j] != '\n' {
			end++
		}
		return block{kind: bHeading, indent: i, end: end}, true, true
	}
	return block{}, true, false
}

func classifyFence(b []byte, i int, final bool) (block, bool, bool) {
	c := b[i]
	j := i
	for j < len(b) && b[j] == c && j < holdLimit {
		j++
	}
	switch {
	case j >= holdLimit:
		return block{}, true, true
	case j >= len(b) && !final:
		return block{}, false, false
	case j-i >= 3:
		return block{kind: bFence, indent: i, end: j}, true, true
	}
	return block{}, true, false
}

// classifyBullet tells a bullet item from a rule (-, * or _ three times
// and more, on a shallow line).
func classifyBullet(b []byte, i int, final, shallow bool) (block, bool, bool) {
	c := b[i]
	if c != '+' && shallow {
		rule, ok := scanRule(b, i, final)
		if !ok {
			return block{}, false, false
		}
		if rule {
			end := bytes.IndexByte(b, '\n')
			if end < 0 {
				end = len(b)
			}
			return block{kind: bRule, indent: i, end: end}, true, true
		}
	}
	if c == '_' {
		return block{}, true, false
	}
	if i+1 >= len(b) && !final {
		return block{}, false, false
	}
	if i+1 < len(b) && isSpaceTab(b[i+1]) {
		return block{kind: bBullet, indent: i, end: i + 1}, true, true
	}
	return block{}, true, false
}

func classifyOrdered(b []byte, i int, final bool) (block, bool, bool) {
	j := i
	for j < len(b) && isDigit(b[j]) && j-i < 10 {
		j++
	}
	if j+1 >= len(b) && !final {
		return block{}, false, false
	}
	if j-i <= 9 && j+1 < len(b) && (b[j] == '.' || b[j] == ')') && isSpaceTab(b[j+1]) {
		return block{kind: bOrdered, indent: i, end: j + 1, mark: j + 1}, true, true
	}
	return block{}, true, false
}

func classifyQuote(b []byte, i int, final bool) (block, bool) {
	blk := block{kind: bQuote, indent: i}
	j := i
	for j < len(b) && b[j] == '>' && j < holdLimit {
		blk.mark++
		j++
		if j < len(b) && isSpaceTab(b[j]) {
			j++
		}
		// Whether another '>' follows is unknown at the end of b.
		if j >= len(b) && !final {
			return block{}, false
		}
	}
	blk.end = j
	return blk, true
}

// scanRule reports whether the line from b[i] is a thematic break: three or
// more of b[i] and nothing else but spaces.
func scanRule(b []byte, i int, final bool) (rule, ok bool) {
	c, count := b[i], 0
	for j := i; ; j++ {
		if j >= holdLimit {
			return false, true
		}
		if j >= len(b) {
			if !final {
				return false, false
			}
			return count >= 3, true
		}
		switch b[j] {
		case c:
			count++
		case ' ', '\t', '\r':
		case '\n':
			return count >= 3, true
		default:
			return false, true
		}
	}
}

// blockStart renders the prefix of a line outside code blocks, then hands
// the rest of the line to inline rendering.
func (m *Markdown) blockStart(b []byte, final bool) (int, bool) {
	if start, ok := tableStart(b, final); !ok {
		return 0, false
	} else if start {
		m.mode = modeTable
		return 0, true
	}
	blk, ok := classify(b, final)
	if !ok {
		return 0, false
	}
	m.mode = modeInline
	indent := b[:blk.indent]
	switch blk.kind {
	case bHeading:
		m.base = aBold | aAccent
		m.skipSpace = true
	case bFence:
		m.text(indent)
		m.base = aDim
		m.textString("╭─")
		m.fence = fence{open: true, char: b[blk.indent], n: blk.end - blk.indent, indent: string(indent)}
		m.mode = modeFenceInfo
	case bQuote:
		m.text(indent)
		m.base = aDim
		m.textString(strings.Repeat("│ ", blk.mark))
		m.base = aItalic
	case bBullet:
		m.text(indent)
		m.base = aAccent
		m.textString("•")
		m.base = 0
	case bOrdered:
		m.text(indent)
		m.base = aAccent
		m.text(b[blk.indent:blk.mark])
		m.base = 0
	case bRule:
		m.base = aDim
		m.textString(strings.Repeat("─", ruleWidth))
	default:
		// A paragraph line: its indentation is ordinary text.
		return 0, true
	}
	return blk.end, true
}

// fenceInfo renders an opening fence's info string (the language) as
// "╭─ go": spaces before it are dropped and one is put back.
func (m *Markdown) fenceInfo(b []byte) int {
	if b[0] == '\n' {
		m.fence.lex = lexiconFor(string(m.fence.info))
		m.fence.info = nil
		m.newline()
		return 1
	}
	if !m.infoSeen {
		if isSpaceTab(b[0]) {
			return 1
		}
		m.infoSeen = true
		m.textString(" ")
	}
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	m.fence.info = append(m.fence.info, b[:n]...)
	m.text(b[:n])
	return n
}

// codeLineStart decides whether a line inside a fenced code block closes
// it, and otherwise starts a code line, written verbatim after a "│ ".
func (m *Markdown) codeLineStart(b []byte, final bool) (int, bool) {
	i := 0
	for i < len(b) && i < holdLimit && isSpaceTab(b[i]) {
		i++
	}
	if i == len(b) && !final {
		return 0, false
	}
	if i < len(b) && i < holdLimit && b[i] == m.fence.char {
		j := i
		for j < len(b) && b[j] == m.fence.char && j < holdLimit {
			j++
		}
		if j == len(b) && !final {
			return 0, false
		}
		if j-i >= m.fence.n {
			k := j
			for k < len(b) && k < holdLimit && (isSpaceTab(b[k]) || b[k] == '\r') {
				k++
			}
			if k == len(b) && !final {
				return 0, false
			}
			if k == len(b) || b[k] == '\n' {
				m.textString(m.fence.indent)
				m.base = aDim
				m.textString("╰─")
				m.fence = fence{}
				m.mode = modeInline
				return k, true
			}
		}
	}
	// Strip the fence's own indentation so the code lines up under it.
	strip := 0
	for strip < len(m.fence.indent) && strip < len(b) && b[strip] == ' ' {
		strip++
	}
	m.textString(m.fence.indent)
	m.base = aDim
	m.textString("│ ")
	m.base = aCode
	m.fence.raw = false
	m.mode = modeCode
	return strip, true
}

// codeText writes a code line's bytes verbatim up to its end, or in a
// block of a known language holds the line and writes it highlighted.
func (m *Markdown) codeText(b []byte) int {
	if m.fence.lex != nil && !m.fence.raw {
		return m.holdCodeLine(b)
	}
	if b[0] == '\n' {
		m.newline()
		return 1
	}
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	m.text(b[:n])
	return n
}

func isSpaceTab(c byte) bool { return c == ' ' || c == '\t' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// holdCodeLine takes a highlighted code line's bytes up to its end, then
// writes it; a line longer than maxCodeLine is written as it comes from
// there on.
func (m *Markdown) holdCodeLine(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	if room := maxCodeLine - len(m.codeLine); n > room {
		for room > 0 && !utf8.RuneStart(b[room]) {
			room--
		}
		m.codeLine = append(m.codeLine, b[:room]...)
		m.writeCodeLine()
		m.base = aCode
		m.fence.raw = true
		return room
	}
	m.codeLine = append(m.codeLine, b[:n]...)
	if n == len(b) {
		return n
	}
	m.writeCodeLine()
	m.newline()
	return n + 1
}

// writeCodeLine writes the held code line, highlighted: tokens in their
// colours, the rest in the code colour.
func (m *Markdown) writeCodeLine() {
	for _, sp := range m.fence.lex.highlight(string(m.codeLine), &m.fence.inBlock) {
		if sp.sgr == "" {
			m.base = aCode
			m.textString(sp.text)
			continue
		}
		m.base = 0
		m.sync()
		m.out = append(m.out, sp.sgr...)
		m.out = append(m.out, sp.text...)
		m.out = append(m.out, sgrReset...)
		m.wrote, m.last = true, sp.text[len(sp.text)-1]
	}
	m.codeLine = m.codeLine[:0]
}
