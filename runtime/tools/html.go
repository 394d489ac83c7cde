package tools

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skipped elements carry no readable text, only code, styling or metadata.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Head: true,
	atom.Template: true, atom.Svg: true, atom.Iframe: true, atom.Object: true,
}

// blocks start on their own line; paragraphs additionally get a blank line
// so the text keeps the page's visual grouping.
var blocks = map[atom.Atom]int{
	atom.Div: 1, atom.Section: 1, atom.Article: 1, atom.Header: 1, atom.Footer: 1,
	atom.Nav: 1, atom.Aside: 1, atom.Main: 1, atom.Form: 1, atom.Fieldset: 1,
	atom.Figure: 1, atom.Figcaption: 1, atom.Address: 1, atom.Details: 1,
	atom.Summary: 1, atom.Li: 1, atom.Dt: 1, atom.Dd: 1, atom.Tr: 1, atom.Caption: 1,
	atom.Ul: 2, atom.Ol: 2, atom.Dl: 2, atom.Table: 2, atom.Hr: 2,
	atom.P: 2, atom.Blockquote: 2, atom.Pre: 2,
	atom.H1: 2, atom.H2: 2, atom.H3: 2, atom.H4: 2, atom.H5: 2, atom.H6: 2,
}

// htmlToText renders an HTML document as plain text a model can read:
// markup and scripts go, paragraphs and list items stay on their own lines,
// and links keep their (absolute) target so they can be fetched next.
func htmlToText(doc []byte, base *url.URL) string {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		// html.Parse only fails on reader errors; fall back to raw text.
		return string(doc)
	}
	w := &textWriter{base: base}
	w.node(root)
	return w.String()
}

type textWriter struct {
	b        strings.Builder
	base     *url.URL
	newlines int  // trailing newlines already written
	space    bool // a space is owed before the next word
	pre      int  // depth inside <pre>
}

func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
		if skipped[n.DataAtom] {
			return
		}
	case html.CommentNode, html.DoctypeNode:
		return
	}
	switch n.DataAtom {
	case atom.Br:
		w.b.WriteByte('\n')
		w.newlines++
		w.space = false
		return
	case atom.Td, atom.Th:
		w.space = true
	case atom.Pre:
		w.pre++
		defer func() { w.pre-- }()
	}
	nl := blocks[n.DataAtom]
	if nl > 0 {
		w.newline(nl)
	}
	switch n.DataAtom {
	case atom.Li:
		w.word("- ")
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.word(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
	}
	start := w.b.Len()
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
	if n.DataAtom == atom.A {
		w.link(n, w.b.Len() > start)
	}
	if nl > 0 {
		w.newline(nl)
	}
}

// link appends the href after the anchor text, skipping in-page and script
// links that lead nowhere fetchable.
func (w *textWriter) link(n *html.Node, hadText bool) {
	if !hadText {
		return
	}
	for _, a := range n.Attr {
		if a.Key != "href" {
			continue
		}
		href := strings.TrimSpace(a.Val)
		if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
			return
		}
		if w.base != nil {
			if u, err := w.base.Parse(href); err == nil {
				href = u.String()
			}
		}
		w.b.WriteString(" (" + href + ")")
		w.newlines = 0
	}
}

func (w *textWriter) text(s string) {
	if w.pre > 0 {
		w.b.WriteString(s)
		if strings.HasSuffix(s, "\n") {
			w.newlines = 1
		} else if s != "" {
			w.newlines = 0
		}
		return
	}
	if s == "" {
		return
	}
	if isSpace(s[0]) {
		w.space = true
	}
	for _, f := range strings.Fields(s) {
		w.word(f)
		w.space = true
	}
	if !isSpace(s[len(s)-1]) {
		w.space = false
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func (w *textWriter) word(s string) {
	if cur := w.b.String(); w.space && w.newlines == 0 && cur != "" && cur[len(cur)-1] != ' ' {
		w.b.WriteByte(' ')
	}
	w.b.WriteString(s)
	w.newlines = 0
	w.space = false
}

// newline ends the current line and, for n == 2, leaves one blank line;
// runs never grow beyond that.
func (w *textWriter) newline(n int) {
	if w.b.Len() == 0 {
		return
	}
	for w.newlines < n {
		w.b.WriteByte('\n')
		w.newlines++
	}
	w.space = false
}

// String trims trailing blanks per line and collapses blank-line runs that
// <br> sequences and nested blocks can still produce.
func (w *textWriter) String() string {
	lines := strings.Split(w.b.String(), "\n")
	out := make([]string, 0, len(lines))
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
