package diff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// render is the hunks as unified diff text, to compare with what diff -u
// prints.
func render(r Result) string {
	var b strings.Builder
	for _, h := range r.Hunks {
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			fmt.Fprintf(&b, "%c%s\n", l.Op, l.Text)
		}
	}
	return b.String()
}

func TestUnified(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"new file", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"emptied", "a\n", "", "@@ -1,1 +0,0 @@\n-a\n"},
		{"one line changed in context",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			"1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n",
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"},
		{"two far changes make two hunks",
			"a\n1\n2\n3\n4\n5\n6\n7\n8\nz\n",
			"A\n1\n2\n3\n4\n5\n6\n7\n8\nZ\n",
			"@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-z\n+Z\n"},
		{"close changes share a hunk",
			"a\n1\n2\n3\nz\n",
			"A\n1\n2\n3\nZ\n",
			"@@ -1,5 +1,5 @@\n-a\n+A\n 1\n 2\n 3\n-z\n+Z\n"},
		{"insertion in the middle",
			"a\nb\nc\n", "a\nb\nnew\nc\n",
			"@@ -1,3 +1,4 @@\n a\n b\n+new\n c\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(Unified(tc.old, tc.new, 3)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestNoEOLAndCounts(t *testing.T) {
	r := Unified("a\nb", "a\nc\nd\n", 3)
	if !r.OldNoEOL || r.NewNoEOL {
		t.Errorf("no-EOL flags: old %v new %v", r.OldNoEOL, r.NewNoEOL)
	}
	if r.Added != 2 || r.Deleted != 1 {
		t.Errorf("counts: +%d -%d, want +2 -1", r.Added, r.Deleted)
	}
}

// apply rebuilds the new text from the old and the script, so that any
// script the search finds can be checked, and is minimal on small inputs.
func TestScriptIsAValidShortestEdit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		a := randomLines(rng, rng.IntN(12))
		b := randomLines(rng, rng.IntN(12))
		ops := script(a, b)
		var got []string
		x, y := 0, 0
		edits := 0
		for _, op := range ops {
			switch op {
			case Equal:
				if a[x] != b[y] {
					t.Fatalf("case %d: Equal pairs %q with %q", i, a[x], b[y])
				}
				got = append(got, a[x])
				x, y = x+1, y+1
			case Delete:
				x++
				edits++
			case Insert:
				got = append(got, b[y])
				y++
				edits++
			}
		}
		if x != len(a) || y != len(b) || strings.Join(got, "\n") != strings.Join(b, "\n") {
			t.Fatalf("case %d: script %q does not turn %q into %q", i, ops, a, b)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("case %d: %d edits, the shortest has %d (%q -> %q)", i, edits, want, a, b)
		}
	}
}

func randomLines(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a' + rng.IntN(3)))
	}
	return out
}

func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// A rewrite past maxEdits is shown as replaced whole rather than searched
// for long (and the search's state stays bounded).
func TestLargeRewriteIsBounded(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	r := Unified(a.String(), b.String(), 3)
	if r.Added != 3000 || r.Deleted != 3000 || len(r.Hunks) != 1 {
		t.Fatalf("+%d -%d in %d hunks", r.Added, r.Deleted, len(r.Hunks))
	}
}

func BenchmarkUnifiedSmallEditInLargeFile(b *testing.B) {
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	old := sb.String()
	new := strings.Replace(old, "line 10000\n", "changed\n", 1)
	for b.Loop() {
		Unified(old, new, 3)
	}
}
