package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func readArgs(t *testing.T, path string, offset, limit int) string {
	a := map[string]any{"path": path}
	if offset > 0 {
		a["offset"] = offset
	}
	if limit > 0 {
		a["limit"] = limit
	}
	return argsJSON(t, a)
}

func TestReadFile(t *testing.T) {
	sb, _ := rootTree(t)
	writeFiles(t, sb.Path(), map[string]string{
		"five.txt":   "one\ntwo\nthree\nfour\nfive\n",
		"nonl.txt":   "a\nb",
		"empty.txt":  "",
		"bin.dat":    "text\x00more",
		"a/only.txt": "x\n",
	})
	tool := &ReadFile{Root: sb}
	outside := func(p string) string {
		return "path '" + p + "' is outside the work directory '" + sb.Path() + "'"
	}
	tests := []struct {
		name          string
		path          string
		offset, limit int
		want          string
		isErr         bool
	}{
		{"whole file", "five.txt", 0, 0, "one\ntwo\nthree\nfour\nfive\n", false},
		{"window with note", "five.txt", 2, 2, "two\nthree\n\n[... truncated: showing lines 2-3 of 5. Call read_file again with offset=4 to continue.]", false},
		{"limit reaching the end", "five.txt", 4, 10, "four\nfive\n", false},
		{"offset only", "five.txt", 5, 0, "five\n", false},
		{"last line without newline", "nonl.txt", 2, 0, "b", false},
		{"note counts unterminated line", "nonl.txt", 1, 1, "a\n\n[... truncated: showing lines 1-1 of 2. Call read_file again with offset=2 to continue.]", false},
		{"empty file", "empty.txt", 0, 0, "(empty file)", false},
		{"offset past end", "five.txt", 6, 0, "offset 6 is past the end of five.txt, which has 5 lines", true},
		{"offset past end of empty", "empty.txt", 2, 0, "offset 2 is past the end of empty.txt: the file is empty", true},
		{"binary", "bin.dat", 0, 0, "cannot read bin.dat: it appears to be a binary file (it contains NUL bytes)", true},
		{"directory", "a", 0, 0, "'a' is a directory, not a file; use list_dir to see its contents", true},
		{"missing", "nope.txt", 0, 0, "file not found: nope.txt", true},
		{"through inside link", "in_link/only.txt", 0, 0, "x\n", false},
		{"escaping link", "out_link/secret.txt", 0, 0, outside("out_link/secret.txt"), true},
		{"dotdot", "../outside/secret.txt", 0, 0, outside("../outside/secret.txt"), true},
		{"absolute outside", "/etc/passwd", 0, 0, outside("/etc/passwd"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tool, readArgs(t, tc.path, tc.offset, tc.limit))
			if r.Content != tc.want || r.IsError != tc.isErr {
				t.Fatalf("got %+v\nwant %q isError=%v", r, tc.want, tc.isErr)
			}
		})
	}
}

var noteRE = regexp.MustCompile(`\n\[\.\.\. truncated: showing lines (\d+)-(\d+) of (\d+)\. Call read_file again with offset=(\d+) to continue\.\]$`)

// TestReadFilePaging follows the continuation notes through a file three
// times the budget and checks the pages reassemble it exactly.
func TestReadFilePaging(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "line %05d %s\n", i, strings.Repeat("x", 88)) // 100 bytes
	}
	writeFiles(t, root, map[string]string{"big.txt": b.String()})
	tool := &ReadFile{Root: mustRoot(t, root)}

	var got strings.Builder
	offset, calls := 1, 0
	for {
		calls++
		r := run(t, tool, readArgs(t, "big.txt", offset, 0))
		if r.IsError {
			t.Fatal(r.Content)
		}
		m := noteRE.FindStringSubmatch(r.Content)
		if m == nil {
			got.WriteString(r.Content)
			break
		}
		page := strings.TrimSuffix(r.Content, m[0])
		if len(page) > maxReadBytes {
			t.Fatalf("page of %d bytes exceeds the budget", len(page))
		}
		first, _ := strconv.Atoi(m[1])
		last, _ := strconv.Atoi(m[2])
		next, _ := strconv.Atoi(m[4])
		if first != offset || m[3] != "3000" || next != last+1 {
			t.Fatalf("bad note %q at offset %d", m[0], offset)
		}
		got.WriteString(page)
		offset = next
	}
	if got.String() != b.String() {
		t.Fatal("pages do not reassemble the file")
	}
	if calls != 3 {
		t.Fatalf("took %d calls, want 3 (1024 lines of 100 bytes per page)", calls)
	}
}

func TestReadFileHugeLine(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("é", 150000) // 300000 bytes, one line
	writeFiles(t, root, map[string]string{"min.js": long + "\nsecond\n"})
	tool := &ReadFile{Root: mustRoot(t, root)}
	r := run(t, tool, readArgs(t, "min.js", 0, 0))
	note := "\n[... truncated: line 1 is longer than 102400 bytes and only its start is shown. Call read_file again with offset=2 to continue after it.]"
	if r.IsError || !strings.HasSuffix(r.Content, note) {
		t.Fatalf("got error=%v tail %q", r.IsError, r.Content[len(r.Content)-200:])
	}
	head := strings.TrimSuffix(r.Content, note)
	if len(head) != maxReadBytes || !strings.HasPrefix(long, head) {
		t.Fatalf("head is %d bytes, want %d whole runes of the line", len(head), maxReadBytes)
	}
	wantOK(t, run(t, tool, readArgs(t, "min.js", 2, 0)), "second\n")
}

func TestReadFileBinaryOnlyChecksHead(t *testing.T) {
	root := t.TempDir()
	// A NUL beyond the sniffed prefix does not make a file binary, the
	// same rule search uses.
	content := strings.Repeat("a", sniffLen) + "\n\x00\n"
	if err := os.WriteFile(filepath.Join(root, "late.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	wantOK(t, run(t, &ReadFile{Root: mustRoot(t, root)}, readArgs(t, "late.txt", 0, 0)), content)
}
