package redact

import "strings"

// Stream redacts text that goes out in pieces (a model's answer streamed
// chunk by chunk), where a secret may be split across two pieces and each
// piece on its own looks harmless. It holds back the end of what it was
// given while that end could be the start of a secret, and lets it go once
// the next piece shows it is not (or masked, when it is). A Stream is for
// one run of text; it is not safe for concurrent use.
type Stream struct {
	r       *Redactor
	pending string
}

// Stream returns a Stream masking r's secrets (nil when r is empty: the
// caller then passes text on as it is).
func (r *Redactor) Stream() *Stream {
	if r.Empty() {
		return nil
	}
	return &Stream{r: r}
}

// Push takes the next piece and returns what may go out now, redacted;
// the rest waits for the next Push or for Flush.
func (s *Stream) Push(piece string) string {
	buf := s.pending + piece
	cut := len(buf) - s.heldBack(buf)
	spans := s.r.find(len(buf), func(n string, from int) int { return strings.Index(buf[from:], n) })
	// A secret that is whole in buf but runs across the cut goes out whole,
	// masked, with the next Push: the cut moves to its start.
	for _, sp := range spans {
		if sp[0] < cut && sp[1] > cut {
			cut = sp[0]
		}
	}
	s.pending = buf[cut:]
	return mask(buf[:cut], spans)
}

// Flush returns what is held back, redacted, and starts over.
func (s *Stream) Flush() string {
	out := s.r.String(s.pending)
	s.pending = ""
	return out
}

// heldBack is the length of buf's longest end that is the start (not the
// whole) of a secret in one of its forms. Needles are valid UTF-8, so the
// cut falls between characters.
func (s *Stream) heldBack(buf string) int {
	hold := 0
	for _, n := range s.r.needles {
		from := max(0, len(buf)-len(n)+1)
		for i := from; i < len(buf)-hold; i++ {
			if buf[i] == n[0] && strings.HasPrefix(n, buf[i:]) {
				hold = len(buf) - i
				break
			}
		}
	}
	return hold
}

// mask replaces the spans that lie within text (those ending at or before
// its end) by Marker.
func mask(text string, spans [][2]int) string {
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[1] > len(text) {
			break
		}
		b.WriteString(text[last:sp[0]])
		b.WriteString(Marker)
		last = sp[1]
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}
