package tui

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpus mixes every construct with multi-byte runes, so that splits land
// inside markers and runes alike.
var corpus = []string{
	"Hello world",
	"# Title é\n## Sub **bold** `code`\n",
	"Some **bold**, *it*, __u__, `c`, ``a ` b``, [link](http://x/(y)) and é│😀.\n",
	"- one\n  * two *é*\n+ three\n1. first\n12) twelfth\n",
	"> quote **b**\n>> nested\n>\n",
	"---\n* * *\n___\n- - x\n--\n",
	"```go\nfunc main() { a := b*c } // *x*\n\n```\nafter\n",
	"~~~~ python  \n~~~\n ~~~~\n",
	"1. step\n   ```sh\n   ls │ é\n   ```\n",
	"unclosed **bold\nand `code\nand [link](x\n",
	"2 * 3 = 6, snake_case, a*b, **** and \\*esc\\* \\\\ \\d",
	"| a | b |\n|---|---|\n<b>x</b>\n",
	"[" + strings.Repeat("é", 200) + "](u)\n[" + strings.Repeat("x", 300) + "\n",
	"😀 **😀** *😀* `😀` [😀](😀) # 😀\n# 😀\n- 😀",
	"```\nunclosed fence é",
	"\n\n   \n    - deep\n#\n>",
	"| Name | **N** |\n|:---|--:|\n| é😀 | `1\\|2` |\n| x |\nafter\n| lone\n",
	"```python\nif x == 'a\\'b': # c é\n    return 3.5\n```\n```rust\n/* a\n b */ let x = \"é\"; // y\n```",
}

// randomMarkdown builds an input from markdown-significant pieces.
func randomMarkdown(r *rand.Rand) string {
	pieces := []string{
		"*", "**", "***", "_", "__", "`", "``", "```", "~~~", "[", "]", "(", ")", "](", "#", "# ",
		"- ", "* ", "> ", "1. ", "\n", "\n", " ", "  ", "a", "word", "é", "│", "😀", "世", "\\", "---", "    ", "\t", "\r",
		"|", "| ", "|---|", ":--", "```go\n", "//", "/*", "*/", "\"", "'", "if ", "42",
	}
	var b strings.Builder
	for n := r.Intn(40); n >= 0; n-- {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}

// renderChunks writes in as the given chunks, then flushes, checking the
// hold-back bound after every Write.
func renderChunks(t *testing.T, s Style, chunks []string) string {
	t.Helper()
	var buf bytes.Buffer
	m := NewMarkdown(&buf, s)
	for _, c := range chunks {
		if _, err := m.Write([]byte(c)); err != nil {
			t.Fatal(err)
		}
		if len(m.in) > holdLimit {
			t.Fatalf("%d bytes held back", len(m.in))
		}
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func randomSplit(r *rand.Rand, in string) []string {
	var chunks []string
	for len(in) > 0 {
		n := 1 + r.Intn(min(len(in), 8))
		chunks = append(chunks, in[:n])
		in = in[n:]
	}
	return chunks
}

func checkSplits(t *testing.T, s Style, in string, r *rand.Rand) {
	t.Helper()
	whole := renderChunks(t, s, []string{in})
	if utf8.ValidString(in) && !utf8.ValidString(whole) {
		t.Errorf("%q: output %q is not valid UTF-8", in, whole)
	}
	for i := 0; i <= len(in); i++ {
		if got := renderChunks(t, s, []string{in[:i], in[i:]}); got != whole {
			t.Fatalf("%q split at %d:\n got %q\nwant %q", in, i, got, whole)
		}
	}
	bytewise := make([]string, len(in))
	for i := 0; i < len(in); i++ { // not range: that steps over whole runes
		bytewise[i] = in[i : i+1]
	}
	if got := renderChunks(t, s, bytewise); got != whole {
		t.Fatalf("%q byte by byte:\n got %q\nwant %q", in, got, whole)
	}
	for range 5 {
		chunks := randomSplit(r, in)
		if got := renderChunks(t, s, chunks); got != whole {
			t.Fatalf("%q split as %q:\n got %q\nwant %q", in, chunks, got, whole)
		}
	}
}

func TestMarkdownSplitInvariance(t *testing.T) {
	s := colour(t)
	r := rand.New(rand.NewSource(1))
	for _, in := range corpus {
		checkSplits(t, s, in, r)
		checkSplits(t, Style{}, in, r)
	}
}

func TestMarkdownSplitInvarianceRandom(t *testing.T) {
	s := colour(t)
	r := rand.New(rand.NewSource(42))
	n := 400
	if testing.Short() {
		n = 50
	}
	for range n {
		checkSplits(t, s, randomMarkdown(r), r)
	}
}

// FuzzMarkdownSplit lets `go test -fuzz` look for inputs and splits where
// chunking changes the output.
func FuzzMarkdownSplit(f *testing.F) {
	for _, in := range corpus {
		f.Add(in, uint8(3))
	}
	s, _ := NewStyle("", true)
	f.Fuzz(func(t *testing.T, in string, at uint8) {
		whole := renderChunks(t, s, []string{in})
		i := int(at) % (len(in) + 1)
		if got := renderChunks(t, s, []string{in[:i], in[i:]}); got != whole {
			t.Fatalf("%q split at %d:\n got %q\nwant %q", in, i, got, whole)
		}
	})
}
