package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/confine"
)

func previewOf(t *testing.T, p Previewer, args map[string]any) *Change {
	t.Helper()
	return p.Preview(context.Background(), json.RawMessage(argsJSON(t, args)))
}

func openRoot(t *testing.T) *confine.Root {
	t.Helper()
	r, err := confine.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestEditFilePreviewShowsTheWholeFileBeforeAndAfter(t *testing.T) {
	root := openRoot(t)
	abs := filepath.Join(root.Path(), "notes.txt")
	os.WriteFile(abs, []byte("one\ntwo\nthree\n"), 0o644)
	tool := &EditFile{Root: root}
	args := map[string]any{"path": "notes.txt", "old_string": "two", "new_string": "TWO"}

	c := previewOf(t, tool, args)
	if c == nil || c.Diff.Path != abs || c.Diff.OldText == nil || *c.Diff.OldText != "one\ntwo\nthree\n" ||
		c.Diff.NewText != "one\nTWO\nthree\n" || c.Line != 2 {
		t.Fatalf("preview = %+v", c)
	}
	if got := readString(t, abs); got != "one\ntwo\nthree\n" {
		t.Fatalf("the preview changed the file: %q", got)
	}
	// The run reports the change it made: the same diff.
	r := run(t, tool, argsJSON(t, args))
	if r.IsError || r.Change == nil || r.Change.Diff.NewText != "one\nTWO\nthree\n" {
		t.Fatalf("run = %+v", r)
	}
	content, locs := r.Change.Content()
	if len(content) != 1 || content[0].Diff == nil || len(locs) != 1 || locs[0].Path != abs || *locs[0].Line != 2 {
		t.Fatalf("content %+v, locations %+v", content, locs)
	}
}

func TestEditFilePreviewOfACallThatWillFail(t *testing.T) {
	root := openRoot(t)
	os.WriteFile(filepath.Join(root.Path(), "a.txt"), []byte("x x\n"), 0o644)
	os.WriteFile(filepath.Join(root.Path(), "bin"), []byte("a\x00b"), 0o644)
	tool := &EditFile{Root: root}
	for _, args := range []map[string]any{
		{"path": "a.txt", "old_string": "missing", "new_string": "y"},
		{"path": "a.txt", "old_string": "x", "new_string": "y"}, // twice, no replace_all
		{"path": "nope.txt", "old_string": "x", "new_string": "y"},
		{"path": "bin", "old_string": "a", "new_string": "y"},
		{"path": "../outside", "old_string": "a", "new_string": "y"},
		{"path": "a.txt"},
	} {
		if c := previewOf(t, tool, args); c != nil {
			t.Errorf("%v: preview %+v of a call that fails", args, c)
		}
	}
}

func TestEditFilePreviewOfALargeFileShowsTheStrings(t *testing.T) {
	root := openRoot(t)
	big := strings.Repeat("filler line\n", maxPreviewBytes/12+10) + "needle\n"
	os.WriteFile(filepath.Join(root.Path(), "big.txt"), []byte(big), 0o644)
	c := previewOf(t, &EditFile{Root: root}, map[string]any{"path": "big.txt", "old_string": "needle", "new_string": "pin"})
	if c == nil || *c.Diff.OldText != "needle" || c.Diff.NewText != "pin" || c.Line != strings.Count(big, "\n") {
		t.Fatalf("preview = %+v", c)
	}
}

func TestWriteFilePreview(t *testing.T) {
	root := openRoot(t)
	tool := &WriteFile{Root: root}
	// A new file: no old text.
	c := previewOf(t, tool, map[string]any{"path": "sub/new.txt", "content": "hello\n"})
	if c == nil || c.Diff.OldText != nil || c.Diff.NewText != "hello\n" || c.Diff.Path != filepath.Join(root.Path(), "sub", "new.txt") {
		t.Fatalf("new file preview = %+v", c)
	}
	if _, err := os.Stat(filepath.Join(root.Path(), "sub")); err == nil {
		t.Fatal("the preview created the parent directory")
	}
	// A replaced file: the diff against what is there.
	os.WriteFile(filepath.Join(root.Path(), "old.txt"), []byte("a\nb\n"), 0o644)
	c = previewOf(t, tool, map[string]any{"path": "old.txt", "content": "a\nc\n"})
	if c == nil || c.Diff.OldText == nil || *c.Diff.OldText != "a\nb\n" || c.Line != 2 {
		t.Fatalf("replace preview = %+v", c)
	}
	// Nothing to show: a directory, a binary file, a huge content.
	os.Mkdir(filepath.Join(root.Path(), "dir"), 0o755)
	os.WriteFile(filepath.Join(root.Path(), "bin"), []byte("\x00\x01"), 0o644)
	for _, args := range []map[string]any{
		{"path": "dir", "content": "x"},
		{"path": "bin", "content": "x"},
		{"path": "huge.txt", "content": strings.Repeat("x", maxPreviewBytes+1)},
		{"path": "/etc/passwd", "content": "x"},
	} {
		if c := previewOf(t, tool, args); c != nil {
			t.Errorf("%v: preview %+v", args["path"], c)
		}
	}
}

// With an editor's buffers (ACP fs), the preview reads the buffer: what
// the edit will really change.
func TestPreviewReadsThroughTheFS(t *testing.T) {
	root := openRoot(t)
	abs := filepath.Join(root.Path(), "f.txt")
	os.WriteFile(abs, []byte("on disk\n"), 0o644)
	fsys := newFakeFS(map[string]string{abs: "in the buffer\n"})
	c := previewOf(t, &WriteFile{Root: root, FS: fsys}, map[string]any{"path": "f.txt", "content": "new\n"})
	if c == nil || *c.Diff.OldText != "in the buffer\n" {
		t.Fatalf("preview = %+v", c)
	}
	c = previewOf(t, &EditFile{Root: root, FS: fsys}, map[string]any{"path": "f.txt", "old_string": "buffer", "new_string": "editor"})
	if c == nil || c.Diff.NewText != "in the editor\n" {
		t.Fatalf("preview = %+v", c)
	}
	for _, call := range fsys.calls {
		if strings.HasPrefix(call, "write") {
			t.Fatalf("a preview wrote: %v", fsys.calls)
		}
	}
}
