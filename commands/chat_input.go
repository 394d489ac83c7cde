package commands

import (
	"bytes"
	"io"
	"strings"
)

// readline reads one line at a time, and a Tab asks it for completions. A
// bracketed paste's line breaks and tabs are therefore carried through it
// as these stand-ins (shown as such while editing) and turned back when the
// line is sent.
const (
	pasteNewline = "␤"
	pasteTab     = "␉"
)

// Bracketed paste markers (xterm): the terminal wraps pasted text in them
// once the program turns the mode on.
const (
	pasteOn    = "\x1b[?2004h"
	pasteOff   = "\x1b[?2004l"
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// restoreInput turns the stand-ins of a pasted block back into line breaks
// and tabs.
func restoreInput(s string) string {
	return strings.NewReplacer(pasteNewline, "\n", pasteTab, "\t").Replace(s)
}

// historyEntry is s as one line of the history file (which holds one entry
// per line).
func historyEntry(s string) string {
	return strings.NewReplacer("\n", pasteNewline, "\t", pasteTab).Replace(s)
}

// pasteReader strips the bracketed paste markers from the terminal's input
// and replaces line breaks and tabs inside a paste by their stand-ins.
type pasteReader struct {
	r       io.Reader
	inPaste bool
	lastCR  bool
	carry   []byte // a possible marker, not complete yet
	out     bytes.Buffer
	buf     [4096]byte
}

func newPasteReader(r io.Reader) *pasteReader { return &pasteReader{r: r} }

func (p *pasteReader) Read(b []byte) (int, error) {
	for p.out.Len() == 0 {
		n, err := p.r.Read(p.buf[:])
		for _, c := range p.buf[:n] {
			p.feed(c)
		}
		if err != nil {
			if p.out.Len() == 0 {
				// The input ended: what was held back is plain text.
				for _, c := range p.carry {
					p.emit(c)
				}
				p.carry = p.carry[:0]
				if p.out.Len() == 0 {
					return 0, err
				}
			}
			break
		}
	}
	return p.out.Read(b)
}

func (p *pasteReader) feed(c byte) {
	p.carry = append(p.carry, c)
	for len(p.carry) > 0 {
		s := string(p.carry)
		switch {
		case s == pasteStart:
			p.inPaste, p.lastCR = true, false
			p.carry = p.carry[:0]
		case s == pasteEnd:
			p.inPaste = false
			p.carry = p.carry[:0]
		case strings.HasPrefix(pasteStart, s) || strings.HasPrefix(pasteEnd, s):
			return // wait for more
		default:
			// Not a marker: the first byte is text; the rest may still
			// start one.
			first := p.carry[0]
			p.carry = append(p.carry[:0], p.carry[1:]...)
			p.emit(first)
			continue
		}
		return
	}
}

func (p *pasteReader) emit(c byte) {
	if !p.inPaste {
		p.out.WriteByte(c)
		return
	}
	switch c {
	case '\r':
		p.out.WriteString(pasteNewline)
		p.lastCR = true
		return
	case '\n':
		if !p.lastCR {
			p.out.WriteString(pasteNewline)
		}
	case '\t':
		p.out.WriteString(pasteTab)
	default:
		p.out.WriteByte(c)
	}
	p.lastCR = false
}

// chatCompleter completes slash commands and their arguments for readline.
type chatCompleter struct{ c *chat }

// Do implements readline.AutoCompleter: the candidates are the rest of
// each word that starts like the one before the cursor.
func (cc chatCompleter) Do(line []rune, pos int) ([][]rune, int) {
	head := string(line[:pos])
	if !strings.HasPrefix(head, "/") {
		return nil, 0
	}
	name, arg, hasArg := strings.Cut(head[1:], " ")
	if !hasArg {
		var out [][]rune
		for _, sc := range slashCommands {
			if rest, ok := strings.CutPrefix(sc.name, name); ok {
				out = append(out, []rune(rest+" "))
			}
		}
		return out, len([]rune(name))
	}
	arg = strings.TrimLeft(arg, " ")
	for _, sc := range slashCommands {
		if sc.name != name || sc.complete == nil {
			continue
		}
		var out [][]rune
		for _, cand := range sc.complete(cc.c) {
			if rest, ok := strings.CutPrefix(cand, arg); ok {
				out = append(out, []rune(rest))
			}
		}
		return out, len([]rune(arg))
	}
	return nil, 0
}
