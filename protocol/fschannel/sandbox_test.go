package fschannel

import (
	"os"
	"path/filepath"
	"testing"
)

// Every path is confined to the work directory through its root,
// and refusals use its wording.
func TestSandboxRefusals(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret")
	writeFile(t, filepath.Join(root, "mine.txt"), "mine")
	os.Symlink(outside, filepath.Join(root, "escape"))                                // a directory link out
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak.txt")) // a file link out
	os.Symlink("../../nowhere", filepath.Join(root, "dangling"))                      // a dangling link out

	outsideMsg := func(p string) string {
		return "Tool execution error: path '" + p + "' is outside the work directory '" + root + "'"
	}
	tests := []struct {
		req  []any
		path string // the path named in the refusal
	}{
		{[]any{"action", "read", "path", "../secrets"}, "../secrets"},
		{[]any{"action", "read", "path", "/etc/passwd"}, "/etc/passwd"},
		{[]any{"action", "read", "path", "escape/secret.txt"}, "escape/secret.txt"},
		{[]any{"action", "read", "path", "leak.txt"}, "leak.txt"},
		{[]any{"action", "write", "path", "../x", "content", "x"}, "../x"},
		{[]any{"action", "write", "path", filepath.Join(outside, "new.txt"), "content", "x"}, filepath.Join(outside, "new.txt")},
		{[]any{"action", "write", "path", "escape/secret.txt", "content", "pwned"}, "escape/secret.txt"},
		{[]any{"action", "write", "path", "leak.txt", "content", "pwned"}, "leak.txt"},
		{[]any{"action", "write", "path", "dangling", "content", "pwned"}, "dangling"},
		{[]any{"action", "list", "path", ".."}, ".."},
		{[]any{"action", "list", "path", "escape"}, "escape"},
		{[]any{"action", "list", "path", "escape", "recursive", true}, "escape"},
		{[]any{"action", "watch", "path", "../"}, "../"},
		{[]any{"action", "watch", "path", "escape"}, "escape"},
		{[]any{"action", "watch", "path", outside}, outside},
		{[]any{"action", "mkdir", "path", "../x"}, "../x"},
		{[]any{"action", "mkdir", "path", "escape/sub"}, "escape/sub"},
		{[]any{"action", "delete", "path", "../x"}, "../x"},
		{[]any{"action", "delete", "path", filepath.Join(outside, "secret.txt")}, filepath.Join(outside, "secret.txt")},
		{[]any{"action", "delete", "path", "escape/secret.txt"}, "escape/secret.txt"},
		{[]any{"action", "rename", "from", "../x", "to", "y"}, "../x"},
		{[]any{"action", "rename", "from", "escape/secret.txt", "to", "y"}, "escape/secret.txt"},
		{[]any{"action", "rename", "from", "mine.txt", "to", "../stolen.txt"}, "../stolen.txt"},
		{[]any{"action", "rename", "from", "mine.txt", "to", "/etc/x"}, "/etc/x"},
		{[]any{"action", "rename", "from", "mine.txt", "to", "escape/mine.txt"}, "escape/mine.txt"},
	}
	for _, tt := range tests {
		for _, id := range []any{nil, 9} {
			kv := tt.req
			want := map[string]any{"type": "error", "message": outsideMsg(tt.path)}
			if id != nil {
				kv = append(append([]any(nil), kv...), "id", id)
				want["id"] = float64(9)
			}
			got := call(t, c, r, req(t, kv...))
			if len(got) != len(want) || got["type"] != want["type"] || got["message"] != want["message"] || got["id"] != want["id"] {
				t.Errorf("%v:\n got %v\nwant %v", kv, got, want)
			}
		}
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "secret" {
		t.Errorf("outside file changed: %q", got)
	}
	des, _ := os.ReadDir(outside)
	if len(des) != 1 {
		t.Errorf("outside directory holds %d entries, want 1", len(des))
	}
	if got := readFile(t, filepath.Join(root, "mine.txt")); got != "mine" {
		t.Errorf("mine.txt changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "../stolen.txt")); !os.IsNotExist(err) {
		t.Errorf("rename escaped: %v", err)
	}
}

// Deleting a symlink that points outside removes the link, which is inside,
// and leaves its target alone.
func TestDeleteEscapingLinkRemovesOnlyTheLink(t *testing.T) {
	c, r := newChannel(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret")
	os.Symlink(outside, filepath.Join(c.root.Path(), "escape"))
	if got := call(t, c, r, `{"action":"delete","path":"escape"}`); got["type"] != "delete_success" {
		t.Fatalf("got %v", got)
	}
	if _, err := os.Lstat(filepath.Join(c.root.Path(), "escape")); !os.IsNotExist(err) {
		t.Errorf("link still there: %v", err)
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "secret" {
		t.Errorf("target changed: %q", got)
	}
}
