package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temp file %s left behind", e.Name())
		}
	}
}

func TestWriteFile(t *testing.T) {
	sb, tmp := rootTree(t)
	tool := &WriteFile{Root: sb}
	write := func(path, content string) Result {
		return run(t, tool, argsJSON(t, map[string]any{"path": path, "content": content}))
	}

	wantOK(t, write("sub/dir/new.txt", "hello"), "Wrote 5 bytes to sub/dir/new.txt")
	if got := readString(t, filepath.Join(sb.Path(), "sub/dir/new.txt")); got != "hello" {
		t.Fatalf("content %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(sb.Path(), "sub/dir/new.txt")); fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v", fi.Mode().Perm())
	}
	wantOK(t, write("one.txt", "x"), "Wrote 1 byte to one.txt")
	wantOK(t, write("empty.txt", ""), "Wrote 0 bytes to empty.txt")

	// Overwriting keeps the existing permission bits.
	secret := filepath.Join(sb.Path(), "secret.sh")
	if err := os.WriteFile(secret, []byte("old"), 0o700); err != nil {
		t.Fatal(err)
	}
	wantOK(t, write(secret, "new content"), "Wrote 11 bytes to secret.sh")
	if fi, _ := os.Stat(secret); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}
	if got := readString(t, secret); got != "new content" {
		t.Fatalf("content %q", got)
	}
	noTempFiles(t, sb.Path())

	// A link inside the sandbox is written through, not replaced.
	wantOK(t, write("dangling_in", "via link"), "Wrote 8 bytes to a/new.txt")
	if fi, err := os.Lstat(filepath.Join(sb.Path(), "dangling_in")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink was replaced")
	}
	if got := readString(t, filepath.Join(sb.Path(), "a/new.txt")); got != "via link" {
		t.Fatalf("target content %q", got)
	}

	wantErr(t, write("a", "x"), "'a' is a directory, not a file")
	wantErr(t, write("", "x"), "'' is the work directory, not a file")
	for _, p := range []string{"../escape.txt", "out_link/new.txt", "dangling_out", "a/up/x.txt", "/tmp/x"} {
		r := write(p, "pwned")
		want := "path '" + p + "' is outside the work directory '" + sb.Path() + "'"
		if !r.IsError || r.Content != want {
			t.Fatalf("write %q: got %+v, want %q", p, r, want)
		}
	}
	for _, p := range []string{"escape.txt", "outside/new.txt", "outside/nope/new.txt", "x.txt"} {
		if _, err := os.Lstat(filepath.Join(tmp, p)); err == nil {
			t.Fatalf("%s was created outside the sandbox", p)
		}
	}
}

func TestEditFile(t *testing.T) {
	sb, _ := rootTree(t)
	tool := &EditFile{Root: sb}
	path := filepath.Join(sb.Path(), "code.go")
	reset := func() {
		if err := os.WriteFile(path, []byte("a := 1\nb := 1\nc := 2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	edit := func(p, oldS, newS string, all any) Result {
		a := map[string]any{"path": p, "old_string": oldS, "new_string": newS}
		if all != nil {
			a["replace_all"] = all
		}
		return run(t, tool, argsJSON(t, a))
	}
	writeFiles(t, sb.Path(), map[string]string{"bin.dat": "\x00\x01x"})

	tests := []struct {
		name, path, oldS, newS string
		all                    any
		want, content          string
		isErr                  bool
	}{
		{"unique", "code.go", "c := 2", "c := 3", nil, "Replaced 1 occurrence in code.go", "a := 1\nb := 1\nc := 3\n", false},
		{"unique with context", "code.go", "b := 1\n", "b := 9\n", false, "Replaced 1 occurrence in code.go", "a := 1\nb := 9\nc := 2\n", false},
		{"replace all", "code.go", ":= 1", ":= 5", true, "Replaced 2 occurrences in code.go", "a := 5\nb := 5\nc := 2\n", false},
		{"replace all of one", "code.go", "c", "d", true, "Replaced 1 occurrence in code.go", "a := 1\nb := 1\nd := 2\n", false},
		{"delete text", "code.go", "a := 1\n", "", nil, "Replaced 1 occurrence in code.go", "b := 1\nc := 2\n", false},
		{"ambiguous", "code.go", ":= 1", ":= 5", nil, "old_string found 2 times in code.go; add surrounding context to make it unique, or set replace_all to true to replace every occurrence", "", true},
		{"not found", "code.go", "d := 4", "x", nil, "old_string not found in code.go. It must match the file exactly, including whitespace and indentation; read the file again to copy the current text.", "", true},
		{"whitespace matters", "code.go", "a:=1", "x", nil, "old_string not found in code.go", "", true},
		{"identical", "code.go", "a := 1", "a := 1", nil, "old_string and new_string are identical; nothing would change", "", true},
		{"empty old", "code.go", "", "x", nil, "old_string is empty; use write_file to create a file or replace its whole content", "", true},
		{"missing file", "nope.go", "a", "b", nil, "file not found: nope.go", "", true},
		{"directory", "a", "a", "b", nil, "'a' is a directory, not a file", "", true},
		{"binary", "bin.dat", "x", "y", nil, "cannot edit bin.dat: it appears to be a binary file", "", true},
		{"outside", "out_link/secret.txt", "secret", "x", nil, "path 'out_link/secret.txt' is outside the work directory '" + sb.Path() + "'", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			r := edit(tc.path, tc.oldS, tc.newS, tc.all)
			if tc.isErr {
				wantErr(t, r, tc.want)
				if got := readString(t, path); got != "a := 1\nb := 1\nc := 2\n" {
					t.Fatalf("failed edit changed the file to %q", got)
				}
				return
			}
			wantOK(t, r, tc.want)
			if got := readString(t, path); got != tc.content {
				t.Fatalf("content %q, want %q", got, tc.content)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode changed to %v", fi.Mode().Perm())
			}
			noTempFiles(t, sb.Path())
		})
	}
	if secret := readString(t, filepath.Join(filepath.Dir(sb.Path()), "outside", "secret.txt")); secret != "secret\n" {
		t.Fatalf("outside file changed: %q", secret)
	}
}

func TestListDir(t *testing.T) {
	sb, _ := rootTree(t)
	tool := &ListDir{Root: sb}
	writeFiles(t, sb.Path(), map[string]string{".hidden": "", "b.txt": "", "a/b/z.txt": ""})
	if err := os.Mkdir(filepath.Join(sb.Path(), "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	list := func(args string) Result { return run(t, tool, args) }

	wantOK(t, list(`{"path":"a/b"}`), "file.txt\nupin -> ..\nz.txt")
	root := list(`{}`)
	wantOK(t, root, strings.Join([]string{
		".hidden", "a/", "abs_in_link -> " + filepath.Join(sb.Path(), "a"), "abs_out_link -> " + filepath.Join(filepath.Dir(sb.Path()), "outside"),
		"b.txt", "chain -> in_link/b/upin", "chain_out -> a/up/outside", "dangling_abs_out -> /nonexistent-openheim-dir/x",
		"dangling_chain -> dangling_out", "dangling_in -> a/new.txt", "dangling_out -> ../outside/nope/new.txt", "emptydir/",
		"in_link -> a", "loop1 -> loop2", "loop2 -> loop1", "missing_trick -> a/missing/../../../outside", "out_link -> ../outside",
	}, "\n"))
	wantOK(t, list(`{"path":"."}`), root.Content)
	wantOK(t, list(`{"path":null}`), root.Content)
	wantOK(t, list(`{"path":"emptydir"}`), "(empty directory)")
	wantOK(t, list(`{"path":"in_link/b"}`), "file.txt\nupin -> ..\nz.txt")
	wantErr(t, list(`{"path":"b.txt"}`), "'b.txt' is not a directory; use read_file to read a file")
	wantErr(t, list(`{"path":"nope"}`), "directory not found: nope")
	for _, p := range []string{"..", "out_link", "a/up", "/"} {
		r := list(argsJSON(t, map[string]any{"path": p}))
		want := "path '" + p + "' is outside the work directory '" + sb.Path() + "'"
		if !r.IsError || r.Content != want {
			t.Fatalf("list %q: got %+v, want %q", p, r, want)
		}
	}
}

func TestListDirCap(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < maxListEntries+5; i++ {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, &ListDir{Root: mustRoot(t, root)}, `{}`)
	lines := strings.Split(r.Content, "\n")
	if r.IsError || len(lines) != maxListEntries+1 || lines[0] != "f0000" || lines[maxListEntries-1] != "f0999" {
		t.Fatalf("got %d lines, error=%v", len(lines), r.IsError)
	}
	if last := lines[maxListEntries]; last != "[... 5 more entries not shown]" {
		t.Fatalf("last line %q", last)
	}
}
