// Package tui draws the interactive chat (`openheim chat`) on a terminal:
// the colour theme, streamed markdown rendering of answers, and the
// activity spinner shown while the chat waits.
//
// Everything here degrades to plain text when colour is off (NO_COLOR, a
// dumb terminal), so the chat stays readable in any terminal.
package tui

import (
	"fmt"
	"strconv"
	"strings"
)

// SGR sequences. The attribute ones are fixed; only the accent is themed.
const (
	sgrReset     = "\x1b[0m"
	sgrBold      = "\x1b[1m"
	sgrDim       = "\x1b[2m"
	sgrItalic    = "\x1b[3m"
	sgrUnderline = "\x1b[4m"
	sgrRed       = "\x1b[31m"
	sgrGreen     = "\x1b[32m"
	// sgrCode is a fixed colour rather than the accent so that code stays
	// distinguishable from headings and bullets whatever the theme.
	sgrCode       = "\x1b[33m"
	defaultAccent = "\x1b[36m"
)

// ansiNames are the 8 standard colours in SGR order (30+i, bright 90+i).
var ansiNames = [...]string{"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"}

// Style holds the ANSI SGR sequences chat output uses. The zero Style
// (colour off: NO_COLOR, or not a terminal) styles nothing: every method
// returns its text unchanged.
//
// Styles compose by nesting (s.Bold(s.AccentText(x))), but a reset ends
// every attribute, so text after a nested styled part loses the outer style.
type Style struct {
	// Enabled reports whether colour is on; callers may also use it to
	// decide whether to draw terminal-only decorations.
	Enabled bool
	accent  string // SGR sequence of the theme colour
	code    string // SGR sequence of inline and fenced code
}

// NewStyle returns the style for the theme colour spec (config key
// tui.theme_color), with colour on when color is true.
//
// spec is one of: "" (the default accent, cyan); an ANSI colour name
// (black red green yellow blue magenta cyan white) or its bright variant
// ("bright-red", "bright red" or "brightred"), case-insensitive; "#rrggbb"
// or "#rgb" for 24-bit colour; or a 256-colour index "0".."255".
//
// An invalid spec yields the default style together with an error naming
// the spec and what is accepted, which the caller shows as a warning: a typo
// in the config should not stop the chat. The spec is validated even when
// color is false, in which case the zero Style is returned.
func NewStyle(spec string, color bool) (Style, error) {
	accent, err := parseColour(spec)
	if err != nil {
		accent = defaultAccent
	}
	if !color {
		return Style{}, err
	}
	return Style{Enabled: true, accent: accent, code: sgrCode}, err
}

// parseColour turns a theme colour spec into its SGR sequence.
func parseColour(spec string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	if s == "" {
		return defaultAccent, nil
	}
	if hex, ok := strings.CutPrefix(s, "#"); ok {
		if seq, ok := hexColour(hex); ok {
			return seq, nil
		}
		return "", colourError(spec)
	}
	if isDigits(s) {
		if n, err := strconv.Atoi(s); err == nil && n <= 255 {
			return fmt.Sprintf("\x1b[38;5;%dm", n), nil
		}
		return "", colourError(spec)
	}
	base := 30
	if rest, ok := strings.CutPrefix(s, "bright"); ok {
		s = strings.TrimLeft(rest, " -_")
		base = 90
	}
	for i, name := range ansiNames {
		if s == name {
			return fmt.Sprintf("\x1b[%dm", base+i), nil
		}
	}
	return "", colourError(spec)
}

// hexColour parses "rgb" or "rrggbb" (without the '#').
func hexColour(h string) (string, bool) {
	if len(h) != 3 && len(h) != 6 {
		return "", false
	}
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return "", false
	}
	var r, g, b uint64
	if len(h) == 3 {
		// Each digit doubles up: #f80 is #ff8800.
		r, g, b = (v>>8&0xf)*17, (v>>4&0xf)*17, (v&0xf)*17
	} else {
		r, g, b = v>>16&0xff, v>>8&0xff, v&0xff
	}
	return fmt.Sprintf("\x1b[38;2;%d;%d;%dm", r, g, b), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func colourError(spec string) error {
	return fmt.Errorf("invalid theme colour %q: want an ANSI colour name (%s), "+
		"its bright variant (e.g. bright-red), #rrggbb, #rgb or a 256-colour index 0-255",
		spec, strings.Join(ansiNames[:], ", "))
}

// wrap styles text with seq. When text already ends in a reset (it was
// styled by a nested call) no second reset is added, so nesting costs
// nothing extra.
func (s Style) wrap(seq, text string) string {
	if !s.Enabled || seq == "" || text == "" {
		return text
	}
	if strings.HasSuffix(text, sgrReset) {
		return seq + text
	}
	return seq + text + sgrReset
}

// AccentText returns text in the theme colour.
func (s Style) AccentText(text string) string { return s.wrap(s.accent, text) }

// Bold returns text in bold.
func (s Style) Bold(text string) string { return s.wrap(sgrBold, text) }

// Dim returns text faint, for secondary information.
func (s Style) Dim(text string) string { return s.wrap(sgrDim, text) }

// Italic returns text in italics.
func (s Style) Italic(text string) string { return s.wrap(sgrItalic, text) }

// Underline returns text underlined, as link texts are.
func (s Style) Underline(text string) string { return s.wrap(sgrUnderline, text) }

// Code returns text in the code colour.
func (s Style) Code(text string) string { return s.wrap(s.code, text) }

// Fail returns text in red, for failures.
func (s Style) Fail(text string) string { return s.wrap(sgrRed, text) }

// OK returns text in green, for success.
func (s Style) OK(text string) string { return s.wrap(sgrGreen, text) }
