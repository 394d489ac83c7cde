package tui

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func colour(t *testing.T) Style {
	t.Helper()
	s, err := NewStyle("", true)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// render writes input in one piece and flushes.
func render(t *testing.T, s Style, input string) string {
	t.Helper()
	var buf bytes.Buffer
	m := NewMarkdown(&buf, s)
	if _, err := m.Write([]byte(input)); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestMarkdownRendering(t *testing.T) {
	s := colour(t)
	rule := s.Dim(strings.Repeat("─", ruleWidth))
	bullet := s.AccentText("•")
	cases := []struct{ name, in, want string }{
		{"plain", "just text, a_b and 2 * 3\n", "just text, a_b and 2 * 3\n"},
		{"heading", "# Title\n", s.Bold(s.AccentText("Title")) + "\n"},
		{"heading levels and spaces", "###   Deep\n", s.Bold(s.AccentText("Deep")) + "\n"},
		{"heading with emphasis", "## a *b*\n", s.Bold(s.AccentText("a "+s.Italic("b"))) + "\n"},
		{"not a heading", "#hashtag and ####### seven\n", "#hashtag and ####### seven\n"},
		{"bold", "a **b** c\n", "a " + s.Bold("b") + " c\n"},
		{"bold underscores", "__b__ snake_case __init\n", s.Bold("b") + " snake_case " + s.Bold("init") + "\n"},
		{"intraword underscores", "foo__bar__baz\n", "foo__bar__baz\n"},
		{"italic", "an *it* word\n", "an " + s.Italic("it") + " word\n"},
		{"underscore italic stays", "_not_ italic\n", "_not_ italic\n"},
		{"spaced stars", "2 * 3 * 4\n", "2 * 3 * 4\n"},
		{"intraword star", "x*y and a*b*c\n", "x*y and a*b*c\n"},
		{"bold italic", "***both***\n", "\x1b[1m\x1b[3mboth\x1b[0m\n"},
		{"four stars", "a **** b\n", "a **** b\n"},
		{"code", "run `go test` now\n", "run " + s.Code("go test") + " now\n"},
		{"double backtick code", "``a ` b``\n", s.Code("a ` b") + "\n"},
		{"padded code", "`` `x` ``\n", s.Code("`x`") + "\n"},
		{"no markup in code", "`*a* [b](c)`\n", s.Code("*a* [b](c)") + "\n"},
		{"bold code", "**`x`**\n", s.Bold(s.Code("x")) + "\n"},
		{"link", "see [Go](https://go.dev).\n", "see " + s.Underline("Go") + s.Dim(" (https://go.dev)") + ".\n"},
		{"bare link", "[https://x.y](https://x.y)\n", s.Underline("https://x.y") + "\n"},
		{"link with markup", "[**b**](u)\n", s.Bold(s.Underline("b")) + s.Dim(" (u)") + "\n"},
		{"link with parens", "[w](http://w/a_(b))\n", s.Underline("w") + s.Dim(" (http://w/a_(b))") + "\n"},
		{"not a link", "[1] and a[i] and [x] (y)\n", "[1] and a[i] and [x] (y)\n"},
		{"unclosed link", "[a](b\n", "[a](b\n"},
		{"unclosed link at end", "[a](b", "[a](b"},
		{"escapes", "\\*a\\* \\_ \\d\n", "*a* _ \\d\n"},
		{"bullets", "- one\n* two\n+ three\n  - nested\n",
			bullet + " one\n" + bullet + " two\n" + bullet + " three\n  " + bullet + " nested\n"},
		{"bullet markup", "- **b**: x\n", bullet + " " + s.Bold("b") + ": x\n"},
		{"not bullets", "-x\n*\n", "-x\n*\n"},
		{"ordered", "1. one\n12) twelve\n", s.AccentText("1.") + " one\n" + s.AccentText("12)") + " twelve\n"},
		{"not ordered", "2023 was\n3.14\n", "2023 was\n3.14\n"},
		{"quote", "> quoted *x*\n", s.Dim("│ ") + s.Italic("quoted x") + "\n"},
		{"nested quote", ">> deep\n", s.Dim("│ │ ") + s.Italic("deep") + "\n"},
		{"empty quote line", ">\n", s.Dim("│ ") + "\n"},
		{"rules", "---\n* * *\n___\n- - -", rule + "\n" + rule + "\n" + rule + "\n" + rule},
		{"short dashes", "--\n", "--\n"},
		{"fence", "```\nx := a*b // *not* styled\n```\nafter *it*\n",
			s.Dim("╭─") + "\n" + s.Dim("│ ") + s.Code("x := a*b // *not* styled") + "\n" + s.Dim("╰─") + "\n" +
				"after " + s.Italic("it") + "\n"},
		{"highlighted fence", "```go\nx := a*b // *not* styled\nif s == \"}\" { return 42 }\n```\n",
			s.Dim("╭─ go") + "\n" + s.Dim("│ ") + s.Code("x := a*b ") + "\x1b[2m// *not* styled\x1b[0m\n" +
				s.Dim("│ ") + "\x1b[35mif\x1b[0m" + s.Code(" s == ") + "\x1b[32m\"}\"\x1b[0m" + s.Code(" { ") +
				"\x1b[35mreturn\x1b[0m" + s.Code(" ") + "\x1b[36m42\x1b[0m" + s.Code(" }") + "\n" + s.Dim("╰─") + "\n"},
		{"block comment across lines", "```c\n/* a\nb */ int\n```\n",
			s.Dim("╭─ c") + "\n" + s.Dim("│ ") + "\x1b[2m/* a\x1b[0m\n" + s.Dim("│ ") + "\x1b[2mb */\x1b[0m" + s.Code(" ") +
				"\x1b[35mint\x1b[0m\n" + s.Dim("╰─") + "\n"},
		{"tilde fence", "~~~\n\n~~~\n", s.Dim("╭─") + "\n" + s.Dim("│ ") + "\n" + s.Dim("╰─") + "\n"},
		{"fence info spaces", "```  python  \n", s.Dim("╭─ python  ") + "\n"},
		{"longer fence", "````\n```\n````\n", s.Dim("╭─") + "\n" + s.Dim("│ ") + s.Code("```") + "\n" + s.Dim("╰─") + "\n"},
		{"not a closing fence", "```\n```go\n```\n",
			s.Dim("╭─") + "\n" + s.Dim("│ ") + s.Code("```go") + "\n" + s.Dim("╰─") + "\n"},
		{"indented fence", "1. run:\n   ```sh\n   ls -l\n    x\n   ```\n",
			s.AccentText("1.") + " run:\n   " + s.Dim("╭─ sh") + "\n   " + s.Dim("│ ") + s.Code("ls -l") + "\n   " +
				s.Dim("│ ") + s.Code(" x") + "\n   " + s.Dim("╰─") + "\n"},
		{"unclosed fence", "```\ncode", s.Dim("╭─") + "\n" + s.Dim("│ ") + s.Code("code")},
		{"unclosed bold", "a **b\nc\n", "a " + s.Bold("b") + "\nc\n"},
		{"unclosed code", "a `b\nc\n", "a " + s.Code("b") + "\nc\n"},
		{"table", "| a | bb |\n|---|--:|\n| **x** | 2 |\n| 10 | |\nafter\n",
			" " + s.Bold("a") + "  " + s.Dim("│") + " " + s.Bold("bb") + " \n" + s.Dim("────┼────") + "\n" +
				" " + s.Bold("x") + "  " + s.Dim("│") + "  2 \n 10 " + s.Dim("│") + "    \nafter\n"},
		{"not a table", "| a |\nb\n", "| a |\nb\n"},
		{"html", "<b>x</b> &amp;\n", "<b>x</b> &amp;\n"},
		{"blank lines", "a\n\n  \nb", "a\n\n  \nb"},
		{"unicode", "é **│😀** 世界\n", "é " + s.Bold("│😀") + " 世界\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := render(t, s, c.in); got != c.want {
				t.Errorf("render(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestMarkdownColourOffPassesThrough(t *testing.T) {
	for _, in := range corpus {
		var buf bytes.Buffer
		m := NewMarkdown(&buf, Style{})
		for i := 0; i < len(in); i += 3 {
			m.Write([]byte(in[i:min(i+3, len(in))]))
			if !strings.HasPrefix(in, buf.String()) || buf.Len() != min(i+3, len(in)) {
				t.Fatalf("colour off held back or changed bytes: %q", buf.String())
			}
		}
		if err := m.Flush(); err != nil || buf.String() != in {
			t.Errorf("colour off: got %q, %v; want the input %q", buf.String(), err, in)
		}
	}
}

func TestMarkdownStreamsPlainText(t *testing.T) {
	s := colour(t)
	cases := []struct{ in, visible string }{
		{"Hello wor", "Hello wor"},
		{"a\nHello wor", "Hello wor"},
		{"# Head", "Head"},
		{"- item te", "item te"},
		{"> quo", "quo"},
		{"```\nfmt.Pri", "fmt.Pri"},
		// A highlighted language streams a line at a time.
		{"```go\nfmt.Println(1)\nfmt.Pri", "Println("},
		{"Hello **wor", "wor"},
		{"say `co", "co"},
		{"x é", "x é"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		m := NewMarkdown(&buf, s)
		m.Write([]byte(c.in))
		if !strings.Contains(buf.String(), c.visible) {
			t.Errorf("after writing %q the output %q lacks %q", c.in, buf.String(), c.visible)
		}
	}
	// Only the possible marker itself is held back.
	for _, tail := range []string{"*", "`", "[", "_"} {
		var buf bytes.Buffer
		m := NewMarkdown(&buf, s)
		m.Write([]byte("Hello " + tail))
		if buf.String() != "Hello " {
			t.Errorf("after %q the output is %q, want %q", "Hello "+tail, buf.String(), "Hello ")
		}
	}
}

func TestMarkdownHoldIsBounded(t *testing.T) {
	s := colour(t)
	inputs := []string{
		"[" + strings.Repeat("a", 1000),
		"[a](" + strings.Repeat("b", 1000),
		strings.Repeat(" ", 1000) + "x",
		strings.Repeat("-", 1000),
		strings.Repeat("*", 1000),
		strings.Repeat("`", 1000),
		"```\n" + strings.Repeat(" ", 1000),
		"```\n" + strings.Repeat("`", 1000),
		"```\n```" + strings.Repeat(" ", 1000),
	}
	for _, in := range inputs {
		var buf bytes.Buffer
		m := NewMarkdown(&buf, s)
		for i := 0; i < len(in); i++ {
			m.Write([]byte{in[i]})
			if len(m.in) > holdLimit {
				t.Fatalf("%.20q...: %d bytes held after %d written", in, len(m.in), i+1)
			}
		}
	}
	var buf bytes.Buffer
	m := NewMarkdown(&buf, s)
	m.Write([]byte("[" + strings.Repeat("a", 300)))
	if !strings.HasPrefix(buf.String(), "[aaa") {
		t.Errorf("an unclosed link past the limit is not written raw: %.20q", buf.String())
	}
}

func TestMarkdownAtLineStart(t *testing.T) {
	for _, s := range []Style{{}, colour(t)} {
		var buf bytes.Buffer
		m := NewMarkdown(&buf, s)
		if !m.AtLineStart() {
			t.Error("a fresh renderer is not at a line start")
		}
		m.Write([]byte("**a**"))
		m.Flush()
		if m.AtLineStart() {
			t.Errorf("enabled=%v: at a line start after %q", s.Enabled, buf.String())
		}
		m.Write([]byte("b\n"))
		m.Flush()
		if !m.AtLineStart() {
			t.Errorf("enabled=%v: not at a line start after %q", s.Enabled, buf.String())
		}
	}
}

func TestMarkdownFlushResets(t *testing.T) {
	s := colour(t)
	var buf bytes.Buffer
	m := NewMarkdown(&buf, s)
	m.Write([]byte("```\nx"))
	m.Flush()
	buf.Reset()
	m.Write([]byte("**y**\n"))
	m.Flush()
	if want := s.Bold("y") + "\n"; buf.String() != want {
		t.Errorf("after Flush in a fence: got %q, want %q", buf.String(), want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken") }

func TestMarkdownWriteError(t *testing.T) {
	m := NewMarkdown(failWriter{}, colour(t))
	if _, err := m.Write([]byte("x\n")); err == nil {
		t.Error("Write hid the writer's error")
	}
	m.Write([]byte("*"))
	if err := m.Flush(); err == nil {
		t.Error("Flush hid the writer's error")
	}
}
