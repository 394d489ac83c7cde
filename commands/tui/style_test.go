package tui

import (
	"strings"
	"testing"
)

func TestNewStyleSpecs(t *testing.T) {
	cases := []struct{ spec, accent string }{
		{"", "\x1b[36m"},
		{"  ", "\x1b[36m"},
		{"black", "\x1b[30m"},
		{"Red", "\x1b[31m"},
		{"white", "\x1b[37m"},
		{"bright-red", "\x1b[91m"},
		{"Bright Blue", "\x1b[94m"},
		{"brightcyan", "\x1b[96m"},
		{"BRIGHT_WHITE", "\x1b[97m"},
		{"#ff8800", "\x1b[38;2;255;136;0m"},
		{"#F80", "\x1b[38;2;255;136;0m"},
		{"#000000", "\x1b[38;2;0;0;0m"},
		{"0", "\x1b[38;5;0m"},
		{"208", "\x1b[38;5;208m"},
		{"255", "\x1b[38;5;255m"},
	}
	for _, c := range cases {
		s, err := NewStyle(c.spec, true)
		if err != nil {
			t.Errorf("NewStyle(%q): %v", c.spec, err)
			continue
		}
		if !s.Enabled || s.AccentText("x") != c.accent+"x\x1b[0m" {
			t.Errorf("NewStyle(%q).AccentText(x) = %q, want accent %q", c.spec, s.AccentText("x"), c.accent)
		}
		if off, err := NewStyle(c.spec, false); err != nil || off != (Style{}) {
			t.Errorf("NewStyle(%q, false) = %+v, %v; want the zero Style", c.spec, off, err)
		}
	}
}

func TestNewStyleInvalid(t *testing.T) {
	def, _ := NewStyle("", true)
	for _, spec := range []string{"purple", "bright", "bright-", "#12", "#12345g", "#1234567", "256", "-1", "1.5", "rgb(1,2,3)"} {
		s, err := NewStyle(spec, true)
		if err == nil {
			t.Errorf("NewStyle(%q) accepted an invalid spec", spec)
			continue
		}
		if s != def {
			t.Errorf("NewStyle(%q) = %+v, want the default style", spec, s)
		}
		if msg := err.Error(); !strings.Contains(msg, `"`+spec+`"`) || !strings.Contains(msg, "#rrggbb") {
			t.Errorf("NewStyle(%q) error %q does not name the spec and the accepted forms", spec, msg)
		}
		if off, err := NewStyle(spec, false); err == nil || off != (Style{}) {
			t.Errorf("NewStyle(%q, false) = %+v, %v; want the zero Style and an error", spec, off, err)
		}
	}
}

func TestStyleMethods(t *testing.T) {
	s, _ := NewStyle("", true)
	cases := []struct{ got, want string }{
		{s.Bold("b"), "\x1b[1mb\x1b[0m"},
		{s.Dim("d"), "\x1b[2md\x1b[0m"},
		{s.Italic("i"), "\x1b[3mi\x1b[0m"},
		{s.Underline("u"), "\x1b[4mu\x1b[0m"},
		{s.Code("c"), sgrCode + "c\x1b[0m"},
		{s.Fail("f"), "\x1b[31mf\x1b[0m"},
		{s.OK("o"), "\x1b[32mo\x1b[0m"},
		{s.Bold(s.AccentText("h")), "\x1b[1m\x1b[36mh\x1b[0m"},
		{s.Bold(""), ""},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	var off Style
	for _, f := range []func(string) string{off.AccentText, off.Bold, off.Dim, off.Italic, off.Underline, off.Code, off.Fail, off.OK} {
		if got := f("text"); got != "text" {
			t.Errorf("the zero Style changed text to %q", got)
		}
	}
}
