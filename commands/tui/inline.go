package tui

// class is the kind of a byte as emphasis rules see it (CommonMark's
// flanking rules, simplified to one byte: non-ASCII counts as a letter).
type class uint8

const (
	clsSpace class = iota // whitespace, line start and end
	clsPunct
	clsOther
)

func classOf(c byte) class {
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return clsSpace
	case isPunct(c):
		return clsPunct
	default:
		return clsOther
	}
}

func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// isSpecial reports whether c may start inline markup; runs of other bytes
// are written at once.
func isSpecial(c byte) bool {
	switch c {
	case '\n', '\\', '`', '*', '_', '[':
		return true
	}
	return false
}

// inline renders the start of b, the rest of a markdown line. b is m.in, or
// a link's text, which is complete (final) and has no newline.
func (m *Markdown) inline(b []byte, final bool) (int, bool) {
	c := b[0]
	if c == '\n' {
		m.newline()
		return 1, true
	}
	if m.skipSpace {
		if isSpaceTab(c) {
			return 1, true
		}
		m.skipSpace = false
	}
	if m.code > 0 {
		return m.codeSpan(b, final)
	}
	switch c {
	case '\\':
		// A backslash escapes ASCII punctuation: "\*" is a literal star.
		if len(b) < 2 {
			if !final {
				return 0, false
			}
		} else if isPunct(b[1]) {
			m.text(b[1:2])
			m.prev = clsPunct
			return 2, true
		}
		m.text(b[:1])
		m.prev = clsPunct
		return 1, true
	case '`':
		n, ok := runLen(b, final)
		if !ok {
			return 0, false
		}
		if n >= holdLimit {
			m.text(b[:n])
			m.prev = clsPunct
			return n, true
		}
		// An unclosed span runs to the end of the line, like emphasis.
		m.code = n
		if n < len(b) && b[n] == ' ' {
			m.codeStrip = true
			n++
		}
		return n, true
	case '*', '_':
		return m.emphasis(b, final)
	case '[':
		return m.linkAt(b, final)
	}
	n := 1
	for n < len(b) && !isSpecial(b[n]) {
		n++
	}
	m.text(b[:n])
	m.prev = classOf(b[n-1])
	return n, true
}

// runLen is the length of the run of b[0] starting b, or false when the run
// may go on past the end of b. Runs are cut at holdLimit.
func runLen(b []byte, final bool) (int, bool) {
	n := 1
	for n < len(b) && n < holdLimit && b[n] == b[0] {
		n++
	}
	if n == len(b) && n < holdLimit && !final {
		return 0, false
	}
	return n, true
}

// codeSpan renders the start of b inside an inline code span: everything is
// literal up to a backtick run as long as the opening one.
func (m *Markdown) codeSpan(b []byte, final bool) (int, bool) {
	switch b[0] {
	case '`':
		n, ok := runLen(b, final)
		if !ok {
			return 0, false
		}
		if n == m.code {
			m.code, m.codeStrip = 0, false
			m.prev = clsPunct
			return n, true
		}
		m.text(b[:n])
		return n, true
	case ' ':
		// "`` `x` ``": the spaces padding the span are not its content.
		switch {
		case !m.codeStrip:
		case len(b) == 1:
			if !final {
				return 0, false
			}
		case b[1] == '`':
			n, ok := runLen(b[1:], final)
			if !ok {
				return 0, false
			}
			if n == m.code {
				return 1, true
			}
		}
		m.text(b[:1])
		return 1, true
	}
	n := 1
	for n < len(b) && b[n] != '`' && b[n] != '\n' && b[n] != ' ' {
		n++
	}
	m.text(b[:n])
	return n, true
}

// emphasis renders a run of '*' or '_'. Whether it opens or closes a style
// follows CommonMark's flanking rules, decided from the bytes around the
// run alone: the run is hidden at once, without waiting for its partner.
func (m *Markdown) emphasis(b []byte, final bool) (int, bool) {
	n, ok := runLen(b, final)
	if !ok {
		return 0, false
	}
	next := clsSpace
	if n < len(b) {
		next = classOf(b[n])
	}
	prev := m.prev
	left := next != clsSpace && (next != clsPunct || prev != clsOther)
	right := prev != clsSpace && (prev != clsPunct || next != clsOther)
	c := b[0]
	done := true
	switch {
	case c == '_':
		// Only "__" is bold: a single underscore is far more often part of
		// an identifier (snake_case) than emphasis. Underscores never
		// emphasise inside a word.
		canOpen := left && (!right || prev == clsPunct)
		canClose := right && (!left || next == clsPunct)
		switch {
		case n != 2:
			done = false
		case m.bold && m.boldChar == '_' && canClose:
			m.bold = false
		case !m.bold && canOpen:
			m.bold, m.boldChar = true, '_'
		default:
			done = false
		}
	case n == 1:
		switch {
		case m.italic && right:
			m.italic = false
		// Unlike CommonMark a single star never opens inside a word: with
		// no way to take the marker back, "x*y" must stay as it is.
		case !m.italic && left && prev != clsOther:
			m.italic = true
		default:
			done = false
		}
	case n == 2:
		switch {
		case m.bold && m.boldChar == '*' && right:
			m.bold = false
		case !m.bold && left:
			m.bold, m.boldChar = true, '*'
		default:
			done = false
		}
	case n == 3:
		switch {
		case right && (m.italic || m.bold && m.boldChar == '*'):
			m.italic = false
			m.bold = m.bold && m.boldChar != '*'
		case left && !m.bold && !m.italic:
			m.bold, m.boldChar, m.italic = true, '*', true
		default:
			done = false
		}
	default:
		done = false
	}
	if !done {
		m.text(b[:n])
	}
	m.prev = clsPunct
	return n, true
}

// linkAt renders "[text](url)" as the text underlined and the url dimmed,
// or a literal '[' when b does not start a link.
func (m *Markdown) linkAt(b []byte, final bool) (int, bool) {
	textEnd, urlEnd, res := scanLink(b, final)
	switch res {
	case linkMore:
		return 0, false
	case linkNo:
		m.text(b[:1])
		m.prev = clsPunct
		return 1, true
	}
	text, url := b[1:textEnd], b[textEnd+2:urlEnd]
	// The text gets inline markup of its own; styles it opens end with it.
	bold, boldChar, italic, link := m.bold, m.boldChar, m.italic, m.link
	m.link = true
	for len(text) > 0 {
		n, _ := m.inline(text, true)
		text = text[n:]
		m.settle()
	}
	m.bold, m.boldChar, m.italic, m.link = bold, boldChar, italic, link
	m.code, m.codeStrip = 0, false
	m.settle()
	// A bare url written as a link ([https://x](https://x)) is shown once.
	if string(url) != string(b[1:textEnd]) {
		m.url = true
		m.textString(" (")
		m.text(url)
		m.textString(")")
		m.url = false
		m.settle()
	}
	m.prev = clsPunct
	return urlEnd + 1, true
}

const (
	linkNo = iota
	linkYes
	linkMore
)

// scanLink finds "[text](url)" at the start of b on one line within
// holdLimit bytes, returning the indexes of the ']' and the closing ')'.
// Brackets and parentheses nest, as in wiki urls ending in "_(topic)".
func scanLink(b []byte, final bool) (textEnd, urlEnd, res int) {
	i, depth := 1, 0
	for ; ; i++ {
		if i >= holdLimit {
			return 0, 0, linkNo
		}
		if i >= len(b) {
			if final {
				return 0, 0, linkNo
			}
			return 0, 0, linkMore
		}
		c := b[i]
		if c == '\n' {
			return 0, 0, linkNo
		}
		if c == '[' {
			depth++
		} else if c == ']' {
			if depth == 0 {
				break
			}
			depth--
		}
	}
	textEnd = i
	depth = 0
	for j := i + 1; ; j++ {
		if j >= holdLimit {
			return 0, 0, linkNo
		}
		if j >= len(b) {
			if final {
				return 0, 0, linkNo
			}
			return 0, 0, linkMore
		}
		c := b[j]
		switch {
		case j == i+1:
			if c != '(' {
				return 0, 0, linkNo
			}
		case c == '\n':
			return 0, 0, linkNo
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return textEnd, j, linkYes
			}
			depth--
		}
	}
}
