// Package diff computes line diffs (Myers' O(ND) algorithm) and groups
// them into the hunks of a unified diff, for showing a file change to a
// person before it is allowed. No well-kept Go module does only this
// (x/tools keeps its diff internal), and the algorithm is a page long.
package diff

import "strings"

// Op is what a line of a diff does.
type Op byte

const (
	Equal  Op = ' '
	Delete Op = '-'
	Insert Op = '+'
)

// Line is one line of a hunk: its text without the line break.
type Line struct {
	Op   Op
	Text string
}

// Hunk is a run of changes with the lines of context around them; starts
// are 1-based as in "@@ -OldStart,OldLines +NewStart,NewLines @@" (a start
// of 0 with 0 lines means an empty side).
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []Line
}

// Result is a file change as hunks.
type Result struct {
	Hunks []Hunk
	// Added and Deleted count the changed lines.
	Added, Deleted int
	// OldNoEOL and NewNoEOL say the old or new text does not end in a
	// line break (a unified diff marks it).
	OldNoEOL, NewNoEOL bool
}

// maxEdits bounds the search for the shortest edit script: past it, what
// is left between the common start and end is shown as replaced whole.
// The search keeps O(D²) state, and a change that large is a rewrite
// whose line-by-line alignment tells a reader nothing.
const maxEdits = 2000

// Unified diffs old and new line by line, with context lines of context
// around each change. Equal texts give no hunks.
func Unified(old, new string, context int) Result {
	a, b := splitLines(old), splitLines(new)
	r := Result{
		OldNoEOL: old != "" && !strings.HasSuffix(old, "\n"),
		NewNoEOL: new != "" && !strings.HasSuffix(new, "\n"),
	}
	ops := script(a, b)
	for _, op := range ops {
		switch op {
		case Insert:
			r.Added++
		case Delete:
			r.Deleted++
		}
	}
	r.Hunks = hunks(ops, a, b, context)
	return r
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// script returns the edit script turning a into b, one Op per line of the
// result of walking both: Equal consumes a line of each, Delete one of a,
// Insert one of b.
func script(a, b []string) []Op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]Op, 0, len(a)+len(b))
	for range pre {
		ops = append(ops, Equal)
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for range suf {
		ops = append(ops, Equal)
	}
	return ops
}

// myers finds a shortest edit script from a to b (Myers 1986, the greedy
// forward search), keeping each round's furthest reaching paths to walk
// the script back from the end.
func myers(a, b []string) []Op {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaced(n, m)
	}
	off := n + m
	v := make([]int, 2*off+2)
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		if d > maxEdits {
			return replaced(n, m)
		}
		// Round d reaches diagonals -d..d: keep that band.
		trace = append(trace, append([]int(nil), v[off-d:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m)
			}
		}
	}
	return replaced(n, m) // unreachable: d = n+m always reaches the end
}

// backtrack walks the saved rounds from (n, m) back to (0, 0).
func backtrack(trace [][]int, n, m int) []Op {
	var rev []Op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		band := trace[d] // v of round d-1's end, diagonals -d..d+1
		at := func(k int) int { return band[k+d] }
		k := x - y
		var prevK int
		if k == -d || k != d && at(k-1) < at(k+1) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, Equal)
			x, y = x-1, y-1
		}
		if x == prevX {
			rev = append(rev, Insert)
		} else {
			rev = append(rev, Delete)
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		rev = append(rev, Equal)
		x, y = x-1, y-1
	}
	ops := make([]Op, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}

// replaced is the script deleting n lines and inserting m.
func replaced(n, m int) []Op {
	ops := make([]Op, 0, n+m)
	for range n {
		ops = append(ops, Delete)
	}
	for range m {
		ops = append(ops, Insert)
	}
	return ops
}

// hunks groups a script into hunks, merging changes closer than twice the
// context.
func hunks(ops []Op, a, b []string, context int) []Hunk {
	type pos struct{ i, x, y int } // index in ops, line in a, line in b
	var changes []pos
	x, y := 0, 0
	for i, op := range ops {
		if op != Equal {
			changes = append(changes, pos{i, x, y})
		}
		if op != Insert {
			x++
		}
		if op != Delete {
			y++
		}
	}
	var out []Hunk
	for c := 0; c < len(changes); {
		// A hunk runs from context lines before the first change to
		// context lines after the last change that has no gap longer
		// than 2*context after the previous one.
		end := c
		for end+1 < len(changes) && changes[end+1].i-changes[end].i <= 2*context+1 {
			end++
		}
		from := max(changes[c].i-context, 0)
		to := min(changes[end].i+context+1, len(ops))
		h := Hunk{}
		x, y := changes[c].x-(changes[c].i-from), changes[c].y-(changes[c].i-from)
		h.OldStart, h.NewStart = x+1, y+1
		for _, op := range ops[from:to] {
			switch op {
			case Equal:
				h.Lines = append(h.Lines, Line{Equal, a[x]})
				x, y = x+1, y+1
				h.OldLines++
				h.NewLines++
			case Delete:
				h.Lines = append(h.Lines, Line{Delete, a[x]})
				x++
				h.OldLines++
			case Insert:
				h.Lines = append(h.Lines, Line{Insert, b[y]})
				y++
				h.NewLines++
			}
		}
		// GNU diff's convention: an empty side starts at the line before.
		if h.OldLines == 0 {
			h.OldStart--
		}
		if h.NewLines == 0 {
			h.NewStart--
		}
		out = append(out, h)
		c = end + 1
	}
	return out
}
