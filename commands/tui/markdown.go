package tui

import "io"

// holdLimit bounds how many bytes Markdown holds back while a construct is
// undecided (an unclosed link, a long line start): past it the bytes are
// written as they are, so a stray marker never stalls the stream.
const holdLimit = 256

// attrs is a set of terminal attributes; Markdown tracks what the
// terminal has on and what the text wants, and emits only the difference.
type attrs uint8

// The bit order is the order SGR sequences are written in: code comes after
// accent so that inline code in a heading shows in the code colour.
const (
	aBold attrs = 1 << iota
	aDim
	aItalic
	aUnderline
	aAccent
	aCode
)

// mode is what the next input byte belongs to.
type mode uint8

const (
	modeLineStart mode = iota // a line starts; its block type is not known yet
	modeInline                // the rest of a markdown line
	modeFenceInfo             // the rest of an opening fence line: its info string
	modeCode                  // the rest of a line inside a fenced code block
	modeTable                 // the lines of a table, held until it ends
)

// Markdown renders streamed markdown (an LLM answer arriving in chunks of
// any size, split anywhere, even inside a UTF-8 rune or a marker) for a
// terminal.
//
// Text is written as soon as it is known how to style it. Only the few
// bytes that decide a style are held back: a possible marker at the end of a
// chunk, the start of a line until its block type is known, an unclosed
// link up to 256 bytes. The output is the same however the input is split.
//
// Inline styles end with their line: a marker is hidden as soon as it is
// seen to open a style, so "**never closed" shows "never closed" in bold up
// to the end of the line, where every inline style is reset.
//
// With colour off (the zero Style) bytes pass through unchanged: raw
// markdown is readable as it is.
//
// A Markdown is not safe for concurrent use: the chat calls it under the
// same mutex that serialises all its terminal output.
type Markdown struct {
	w   io.Writer
	st  Style
	in  []byte // input whose styling is still undecided
	out []byte // rendered output of the current call, written once

	mode mode
	base attrs // the current line's block style (heading, quote, code...)
	on   attrs // attributes the terminal has on now

	fence fence
	// A highlighted code line, held until its end; a table's rows, held
	// until the table ends (table.go).
	codeLine []byte
	table    []string
	tableLen int

	// Inline state of the current line.
	bold      bool
	boldChar  byte // '*' or '_': a bold run closes only with its own kind
	italic    bool
	code      int  // backtick count of the open code span, 0 outside one
	codeStrip bool // the span began with a space, so one before its end goes too
	link      bool // inside a link's text
	url       bool // writing a link's url
	skipSpace bool // drop spaces before a heading's text
	infoSeen  bool // the fence info string has started
	prev      class

	wrote bool // something visible was written
	last  byte // the last visible byte written
}

// fence is an open fenced code block.
type fence struct {
	open   bool
	char   byte // '`' or '~'
	n      int  // length of the opening run; the closing run must be as long
	indent string
	info   []byte   // the info string, while the opening line is read
	lex    *lexicon // the language's, nil when unknown (no highlighting)
	// inBlock is an open block comment; raw is a code line too long to
	// hold, written as it comes.
	inBlock, raw bool
}

// NewMarkdown returns a renderer writing to w in style s.
func NewMarkdown(w io.Writer, s Style) *Markdown {
	return &Markdown{w: w, st: s, prev: clsSpace}
}

// Write renders what of p can be styled yet and holds back the rest. Its
// only errors are w's (the bytes of p are then taken but not all written).
func (m *Markdown) Write(p []byte) (int, error) {
	if !m.st.Enabled {
		if len(p) > 0 {
			m.wrote, m.last = true, p[len(p)-1]
		}
		return m.w.Write(p)
	}
	m.in = append(m.in, p...)
	m.process(false)
	if err := m.writeOut(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush ends the answer (or pauses it for a tool call): it writes
// everything held back, resets any open style and forgets the block state,
// an unclosed code fence included, so the next Write starts a fresh line.
func (m *Markdown) Flush() error {
	if !m.st.Enabled {
		return nil
	}
	m.process(true)
	if len(m.codeLine) > 0 {
		m.writeCodeLine()
	}
	m.endTable()
	m.endLine()
	m.fence = fence{}
	m.mode = modeLineStart
	m.settle()
	return m.writeOut()
}

// AtLineStart reports whether the last visible byte written was a newline
// or nothing was written yet. Bytes held back do not count, so call it after
// Flush to know whether the terminal's cursor is at the start of a line.
func (m *Markdown) AtLineStart() bool {
	return !m.wrote || m.last == '\n'
}

func (m *Markdown) writeOut() error {
	if len(m.out) == 0 {
		return nil
	}
	_, err := m.w.Write(m.out)
	m.out = m.out[:0]
	return err
}

// process renders as much of m.in as can be decided; with final set the
// input has ended, so everything is decided.
func (m *Markdown) process(final bool) {
	b := m.in
	for len(b) > 0 {
		n, ok := m.step(b, final)
		if !ok {
			if !final {
				break
			}
			// Unreachable when every step honours final; writing the
			// byte as it is beats looping forever.
			m.text(b[:1])
			n = 1
		}
		b = b[n:]
		m.settle()
	}
	m.in = append(m.in[:0], b...)
}

// step renders the start of b and returns how many bytes it consumed, or
// false when it needs more input to decide. It may consume nothing while
// moving to another mode.
func (m *Markdown) step(b []byte, final bool) (int, bool) {
	switch m.mode {
	case modeLineStart:
		if m.fence.open {
			return m.codeLineStart(b, final)
		}
		return m.blockStart(b, final)
	case modeFenceInfo:
		return m.fenceInfo(b), true
	case modeCode:
		return m.codeText(b), true
	case modeTable:
		return m.tableLine(b, final)
	default:
		return m.inline(b, final)
	}
}

// want is the set of attributes the text being written should have.
func (m *Markdown) want() attrs {
	if m.url {
		return aDim
	}
	a := m.base
	if m.bold {
		a |= aBold
	}
	if m.italic {
		a |= aItalic
	}
	if m.link {
		a |= aUnderline
	}
	if m.code > 0 {
		a |= aCode
	}
	return a
}

// sync brings the terminal's attributes to what the next text wants.
// Turning attributes on waits for text, so empty spans cost nothing.
func (m *Markdown) sync() {
	want := m.want()
	if want == m.on {
		return
	}
	m.settle()
	for a := aBold; a <= aCode; a <<= 1 {
		if want&a != 0 && m.on&a == 0 {
			m.out = append(m.out, m.sgr(a)...)
		}
	}
	m.on = want
}

// settle resets the terminal as soon as an attribute is no longer wanted
// (there is no portable "attribute off"), so that nothing written between
// chunks by someone else inherits a style that already ended.
func (m *Markdown) settle() {
	if m.on&^m.want() != 0 {
		m.out = append(m.out, sgrReset...)
		m.on = 0
	}
}

func (m *Markdown) sgr(a attrs) string {
	switch a {
	case aBold:
		return sgrBold
	case aDim:
		return sgrDim
	case aItalic:
		return sgrItalic
	case aUnderline:
		return sgrUnderline
	case aAccent:
		return m.st.accent
	default:
		return m.st.code
	}
}

// text writes visible bytes in the wanted style.
func (m *Markdown) text(b []byte) {
	if len(b) == 0 {
		return
	}
	m.sync()
	m.out = append(m.out, b...)
	m.wrote, m.last = true, b[len(b)-1]
}

func (m *Markdown) textString(s string) {
	if s == "" {
		return
	}
	m.sync()
	m.out = append(m.out, s...)
	m.wrote, m.last = true, s[len(s)-1]
}

// endLine forgets the line's styles: inline styles never cross a newline.
func (m *Markdown) endLine() {
	m.base = 0
	m.bold, m.italic, m.link, m.url = false, false, false, false
	m.code, m.codeStrip = 0, false
	m.skipSpace, m.infoSeen = false, false
	m.prev = clsSpace
}

// newline ends the current line with the terminal's attributes reset, so
// that a background or underline never runs to the screen's edge.
func (m *Markdown) newline() {
	m.endLine()
	m.settle()
	m.out = append(m.out, '\n')
	m.wrote, m.last = true, '\n'
	m.mode = modeLineStart
}
