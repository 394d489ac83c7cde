package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func searchArgs(t *testing.T, pattern, path string, fold bool) string {
	a := map[string]any{"pattern": pattern}
	if path != "" {
		a["path"] = path
	}
	if fold {
		a["case_insensitive"] = true
	}
	return argsJSON(t, a)
}

func TestSearch(t *testing.T) {
	sb, _ := rootTree(t)
	writeFiles(t, sb.Path(), map[string]string{
		"main.go":             "package main\n// needle one\nfunc main() {}\n",
		"b/notes.md":          "Needle upper\nnothing\nneedle lower\n",
		"a/b/deep.txt":        "x\r\nneedle crlf\r\n",
		".env":                "needle in hidden file\n",
		".git/config":         "needle in hidden dir\n",
		"bin.dat":             "needle\x00binary\n",
		"app.log":             "needle in ignored log\n",
		"important.log":       "needle re-included by root negation\n",
		"build/out.txt":       "needle in ignored dir\n",
		"build.txt":           "needle: dir-only pattern must not hide this file\n",
		"top.txt":             "needle anchored to the root\n",
		"docs/gen/api.txt":    "needle in anchored middle-slash dir\n",
		"sub/docs/gen/ok.txt": "needle: docs/gen is anchored to root, so this stays\n",
		"sub/top.txt":         "needle: /top.txt does not apply here\n",
		"sub/keep.log":        "needle re-included by nested negation\n",
		"sub/drop.log":        "needle still ignored by root pattern\n",
		"sub/secret.txt":      "needle ignored by nested .gitignore\n",
		"secret.txt":          "needle: nested rule does not apply at root\n",
		"sub/deeper/x.txt":    "needle below nested .gitignore\n",
		".gitignore":          "# comment\n*.log\n!important.log\nbuild/\n/top.txt\ndocs/gen\n",
		"sub/.gitignore":      "!keep.log\nsecret.txt\n",
	})
	if err := os.WriteFile(filepath.Join(filepath.Dir(sb.Path()), "outside", "leak.txt"), []byte("needle outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := &Search{Root: sb}
	search := func(pattern, path string, fold bool) Result {
		return run(t, tool, searchArgs(t, pattern, path, fold))
	}

	wantOK(t, search("needle", "", false), strings.Join([]string{
		"a/b/deep.txt:2: needle crlf",
		"b/notes.md:3: needle lower",
		"build.txt:1: needle: dir-only pattern must not hide this file",
		"important.log:1: needle re-included by root negation",
		"main.go:2: // needle one",
		"secret.txt:1: needle: nested rule does not apply at root",
		"sub/deeper/x.txt:1: needle below nested .gitignore",
		"sub/docs/gen/ok.txt:1: needle: docs/gen is anchored to root, so this stays",
		"sub/keep.log:1: needle re-included by nested negation",
		"sub/top.txt:1: needle: /top.txt does not apply here",
	}, "\n"))
	wantOK(t, search("needle (upper|lower)", "b", true), "b/notes.md:1: Needle upper\nb/notes.md:3: needle lower")
	wantOK(t, search("^needle [a-z]", "sub", false), strings.Join([]string{
		"sub/deeper/x.txt:1: needle below nested .gitignore",
		"sub/keep.log:1: needle re-included by nested negation",
	}, "\n"))
	// A link named as the path is resolved (it stays inside); links met
	// during the walk are not followed, which is why the first search
	// lists nothing under in_link/ or chain/.
	wantOK(t, search("needle", "in_link", false), "a/b/deep.txt:2: needle crlf")
	// Files named explicitly are searched even when hidden or ignored.
	wantOK(t, search("needle", ".env", false), ".env:1: needle in hidden file")
	wantOK(t, search("needle", "app.log", false), "app.log:1: needle in ignored log")
	wantOK(t, search("zebra", "", false), "No matches found.")
	wantErr(t, search("needle", "bin.dat", false), "cannot search bin.dat: it appears to be a binary file")
	wantErr(t, search("(unclosed", "", false), `invalid regex pattern "(unclosed": error parsing regexp: missing closing ): `+"`(unclosed`")
	wantErr(t, search("needle", "nope", false), "path not found: nope")
	for _, p := range []string{"..", "out_link", "../outside/leak.txt", "a/up"} {
		r := search("needle", p, false)
		want := "path '" + p + "' is outside the work directory '" + sb.Path() + "'"
		if !r.IsError || r.Content != want {
			t.Fatalf("search %q: got %+v, want %q", p, r, want)
		}
	}
}

func TestSearchSkipsLargeFiles(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "big.txt")
	// Text for longer than the sniffed head, then a sparse tail past the
	// size limit.
	if err := os.WriteFile(big, []byte("needle\n"+strings.Repeat("x", sniffLen)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxSearchFileSize+1); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"small.txt": "needle\n"})
	tool := &Search{Root: mustRoot(t, root)}
	wantOK(t, run(t, tool, searchArgs(t, "needle", "", false)), "small.txt:1: needle")
	wantErr(t, run(t, tool, searchArgs(t, "needle", "big.txt", false)), "cannot search big.txt: it is larger than 10 MB")
}

func TestSearchCapsAndTruncation(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	writeFiles(t, root, map[string]string{"a.txt": b.String(), "b.txt": b.String()})
	tool := &Search{Root: mustRoot(t, root)}
	r := run(t, tool, searchArgs(t, "hit", "", false))
	lines := strings.Split(r.Content, "\n")
	if r.IsError || len(lines) != maxSearchResults+1 {
		t.Fatalf("got %d lines, error=%v", len(lines), r.IsError)
	}
	if lines[0] != "a.txt:1: hit 1" || lines[149] != "a.txt:150: hit 150" || lines[199] != "b.txt:50: hit 50" {
		t.Fatalf("unexpected order: %q %q %q", lines[0], lines[149], lines[199])
	}
	if lines[200] != "[... more than 200 matches; showing the first 200. Narrow the pattern or path to see the rest.]" {
		t.Fatalf("note %q", lines[200])
	}

	// Exactly the cap: no note.
	root2 := t.TempDir()
	writeFiles(t, root2, map[string]string{"a.txt": strings.Repeat("hit\n", maxSearchResults)})
	r = run(t, &Search{Root: mustRoot(t, root2)}, searchArgs(t, "hit", "", false))
	if strings.Contains(r.Content, "more than") || strings.Count(r.Content, "\n") != maxSearchResults-1 {
		t.Fatalf("exactly %d matches reported wrongly", maxSearchResults)
	}

	long := strings.Repeat("ü", 600)
	writeFiles(t, root2, map[string]string{"long.txt": long + "\n"})
	r = run(t, &Search{Root: mustRoot(t, root2)}, searchArgs(t, "ü", "long.txt", false))
	wantOK(t, r, "long.txt:1: "+strings.Repeat("ü", 500)+" [... line truncated]")
}

func TestIgnoreRules(t *testing.T) {
	root := t.TempDir()
	layer := func(dir string, lines ...string) *ignoreLayer {
		l := &ignoreLayer{dir: filepath.Join(root, dir)}
		for _, line := range lines {
			if r, ok := parseIgnoreLine(line); ok {
				l.rules = append(l.rules, r)
			}
		}
		return l
	}
	stack := ignoreStack{
		layer("", "*.tmp", "out/", "!keep.tmp", "/rootonly", "a/b", `\!bang`, "!!lit", "trailing   ", "", "# c"),
		layer("sub", "!*.tmp", "local"),
	}
	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"x.tmp", false, true},
		{"keep.tmp", false, false},
		{"deep/x.tmp", false, true},
		{"sub/x.tmp", false, false},
		{"out", true, true},
		{"out", false, false},
		{"deep/out", true, true},
		{"rootonly", false, true},
		{"deep/rootonly", false, false},
		{"a/b", true, true},
		{"deep/a/b", true, false},
		{"!bang", false, true},
		{"!lit", false, false},
		{"trailing", false, true},
		{"sub/local", false, true},
		{"local", false, false},
		{"plain.txt", false, false},
	}
	for _, tc := range tests {
		if got := stack.ignored(filepath.Join(root, tc.path), tc.isDir); got != tc.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
}
