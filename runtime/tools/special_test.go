//go:build unix

package tools

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO in the work directory is refused by every file tool at once: an
// open of it for reading would wait for a writer forever.
func TestFileToolsRefuseFIFO(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"plain.txt": "x\n"})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := Builtins(Options{WorkDir: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"pipe"}`, "'pipe' is a named pipe (FIFO), not a regular file or directory"},
		{"edit_file", `{"path":"pipe","old_string":"a","new_string":"b"}`, "'pipe' is a named pipe (FIFO), not a regular file or directory"},
		{"write_file", `{"path":"pipe","content":"x"}`, "cannot write pipe: 'pipe' is a named pipe (FIFO), not a regular file or directory"},
		{"list_dir", `{"path":"pipe"}`, "'pipe' is not a directory; use read_file to read a file"},
		{"search", `{"pattern":"x","path":"pipe"}`, "cannot search pipe: 'pipe' is a named pipe (FIFO), not a regular file or directory"},
	} {
		tool, _ := reg.Get(c.tool)
		done := make(chan Result, 1)
		go func() { done <- run(t, tool, c.args) }()
		select {
		case r := <-done:
			wantErr(t, r, c.want)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on a FIFO did not return", c.tool)
		}
	}
	// A search of the whole tree passes the FIFO by and finds the rest.
	tool, _ := reg.Get("search")
	if r := run(t, tool, `{"pattern":"x"}`); r.IsError || !strings.Contains(r.Content, "plain.txt:1: x") {
		t.Fatalf("search: %+v", r)
	}
}
