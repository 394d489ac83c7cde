package tui

import (
	"strings"
	"testing"
)

func TestFileDiffPlain(t *testing.T) {
	old := "one\ntwo\nthree\n"
	d := NewFileDiff(Style{}, "notes.txt", &old, "one\nTWO\nthree\nfour")
	want := "notes.txt +2 -1\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n three\n+four\n\\ No newline at end of file"
	if got := strings.Join(d.Lines, "\n"); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if d.Added != 2 || d.Deleted != 1 {
		t.Errorf("counts +%d -%d", d.Added, d.Deleted)
	}
	nf := NewFileDiff(Style{}, "new.txt", nil, "a\n")
	if got := strings.Join(nf.Lines, "\n"); got != "new file new.txt +1 -0\n@@ -0,0 +1,1 @@\n+a" {
		t.Errorf("new file:\n%s", got)
	}
}

func TestFileDiffColoursAndHead(t *testing.T) {
	st, _ := NewStyle("", true)
	old := strings.Repeat("x\n", 50)
	d := NewFileDiff(st, "f", &old, strings.Repeat("y\n", 50))
	joined := strings.Join(d.Lines, "\n")
	if !strings.Contains(joined, "\x1b[31m-x") || !strings.Contains(joined, "\x1b[32m+y") {
		t.Errorf("no red deletions and green insertions: %q", joined[:80])
	}
	head := d.Head(Style{}, 10, " (d shows all)")
	if len(head) != 11 || head[10] != "… 92 more lines (d shows all)" {
		t.Errorf("head: %q", head)
	}
	if len(d.Head(Style{}, 500, "")) != len(d.Lines) {
		t.Error("a diff that fits was cut")
	}
}
