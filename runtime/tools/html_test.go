package tools

import (
	"net/url"
	"testing"
)

func TestHTMLToText(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/page.html")
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", "hello"},
		{"whitespace collapses", "<p>  a \n\t b  </p>", "a b"},
		{"inline elements join", "<p>a<b>b</b> <i>c</i>d</p>", "ab cd"},
		{"paragraphs", "<p>one</p><p>two</p>", "one\n\ntwo"},
		{"divs", "<div>one</div><div>two</div>", "one\ntwo"},
		{"br", "a<br>b<br/><br>c", "a\nb\n\nc"},
		{"blank runs collapse", "<p>a</p><br><br><br><br><p>b</p>", "a\n\nb"},
		{"skipped elements", "<head><title>T</title><style>x{}</style></head><body><script>bad()</script><noscript>js</noscript><template>t</template>ok</body>", "ok"},
		{"headings", "<h2>Sub</h2>text", "## Sub\n\ntext"},
		{"list", "<ul><li>a</li><li> b </li></ul>", "- a\n- b"},
		{"table cells", "<table><tr><td>a</td><td>b</td></tr><tr><th>c</th><td>d</td></tr></table>", "a b\nc d"},
		{"relative link", `see <a href="../x">this</a>.`, "see this (https://example.com/x)."},
		{"anchor-only and script links", `<a href="#top">top</a> <a href="javascript:void(0)">js</a>`, "top js"},
		{"link without text", `<a href="/img"><img src="x.png"></a>end`, "end"},
		{"pre keeps layout", "<pre>a  b\n  c</pre>", "a  b\n  c"},
		{"entities", "<p>a &amp; b &lt;c&gt;</p>", "a & b <c>"},
		{"comments dropped", "a<!-- hidden -->b", "ab"},
		{"unclosed tags", "<p>one<p>two<div>three", "one\n\ntwo\n\nthree"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := htmlToText([]byte(tc.in), base); got != tc.want {
				t.Fatalf("htmlToText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
