package tui

import (
	"io"
	"strings"
	"testing"
)

// answer is a typical model answer: prose, a list, inline code, a fenced
// block and a link.
var answer = strings.Repeat("## Step\n\nThe handler reads `cfg.Path` and **fails** when it is *empty*:\n\n"+
	"- check the [docs](https://example.com/config)\n- run `go test ./...`\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\n", 20)

// BenchmarkMarkdown streams the answer in 8-byte chunks, as tokens arrive.
func BenchmarkMarkdown(b *testing.B) {
	for _, tc := range []struct {
		name  string
		color bool
	}{{"styled", true}, {"plain", false}} {
		b.Run(tc.name, func(b *testing.B) {
			st, _ := NewStyle("", tc.color)
			b.SetBytes(int64(len(answer)))
			for b.Loop() {
				m := NewMarkdown(io.Discard, st)
				for i := 0; i < len(answer); i += 8 {
					m.Write([]byte(answer[i:min(i+8, len(answer))]))
				}
				m.Flush()
			}
		})
	}
}
