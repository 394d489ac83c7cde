package fschannel

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestActionReplies(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		req   []any
		want  map[string]any
		check func(t *testing.T, root string)
	}{
		{
			name: "read",
			setup: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "src/main.rs"), "fn main() {}\nhé\n")
			},
			req:  []any{"action", "read", "path", "src/main.rs"},
			want: map[string]any{"type": "file_content", "path": "src/main.rs", "content": "fn main() {}\nhé\n"},
		},
		{
			name: "read empty file",
			setup: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "empty"), "")
			},
			req:  []any{"action", "read", "path", "empty"},
			want: map[string]any{"type": "file_content", "path": "empty", "content": ""},
		},
		{
			name: "write creates parents",
			req:  []any{"action", "write", "path", "src/new/mod.rs", "content", "pub fn x() {}\n"},
			want: map[string]any{"type": "write_success", "path": "src/new/mod.rs"},
			check: func(t *testing.T, root string) {
				p := filepath.Join(root, "src/new/mod.rs")
				if got := readFile(t, p); got != "pub fn x() {}\n" {
					t.Errorf("content = %q", got)
				}
				fi, _ := os.Stat(p)
				if fi.Mode().Perm() != 0o644 {
					t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
				}
			},
		},
		{
			name: "write replaces and keeps mode",
			setup: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "run.sh"), "old old old")
				os.Chmod(filepath.Join(root, "run.sh"), 0o750)
			},
			req:  []any{"action", "write", "path", "run.sh", "content", "new"},
			want: map[string]any{"type": "write_success", "path": "run.sh"},
			check: func(t *testing.T, root string) {
				p := filepath.Join(root, "run.sh")
				if got := readFile(t, p); got != "new" {
					t.Errorf("content = %q", got)
				}
				fi, _ := os.Stat(p)
				if fi.Mode().Perm() != 0o750 {
					t.Errorf("mode = %v, want 0750", fi.Mode().Perm())
				}
				des, _ := os.ReadDir(root)
				if len(des) != 1 {
					t.Errorf("directory holds %d entries, want only run.sh (no temp file left)", len(des))
				}
			},
		},
		{
			name: "write through a symlink inside writes its target",
			setup: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "real.txt"), "a")
				os.Symlink("real.txt", filepath.Join(root, "link.txt"))
			},
			req:  []any{"action", "write", "path", "link.txt", "content", "b"},
			want: map[string]any{"type": "write_success", "path": "link.txt"},
			check: func(t *testing.T, root string) {
				if got := readFile(t, filepath.Join(root, "real.txt")); got != "b" {
					t.Errorf("target content = %q", got)
				}
				if fi, err := os.Lstat(filepath.Join(root, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("link.txt is no longer a symlink")
				}
			},
		},
		{
			name: "mkdir -p",
			req:  []any{"action", "mkdir", "path", "src/utils/helpers"},
			want: map[string]any{"type": "mkdir_success", "path": "src/utils/helpers"},
			check: func(t *testing.T, root string) {
				if fi, err := os.Stat(filepath.Join(root, "src/utils/helpers")); err != nil || !fi.IsDir() {
					t.Errorf("not a directory: %v", err)
				}
			},
		},
		{
			name:  "mkdir existing",
			setup: func(t *testing.T, root string) { os.Mkdir(filepath.Join(root, "d"), 0o755) },
			req:   []any{"action", "mkdir", "path", "d"},
			want:  map[string]any{"type": "mkdir_success", "path": "d"},
		},
		{
			name:  "delete file",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "src/old.rs"), "x") },
			req:   []any{"action", "delete", "path", "src/old.rs"},
			want:  map[string]any{"type": "delete_success", "path": "src/old.rs"},
			check: func(t *testing.T, root string) {
				if _, err := os.Lstat(filepath.Join(root, "src/old.rs")); !os.IsNotExist(err) {
					t.Errorf("still there: %v", err)
				}
			},
		},
		{
			name:  "delete directory recursively",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "d/e/f.txt"), "x") },
			req:   []any{"action", "delete", "path", "d"},
			want:  map[string]any{"type": "delete_success", "path": "d"},
			check: func(t *testing.T, root string) {
				if _, err := os.Lstat(filepath.Join(root, "d")); !os.IsNotExist(err) {
					t.Errorf("still there: %v", err)
				}
			},
		},
		{
			name: "delete a symlink deletes the link only",
			setup: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "dir/keep.txt"), "x")
				os.Symlink("dir", filepath.Join(root, "link"))
			},
			req:  []any{"action", "delete", "path", "link"},
			want: map[string]any{"type": "delete_success", "path": "link"},
			check: func(t *testing.T, root string) {
				if _, err := os.Lstat(filepath.Join(root, "link")); !os.IsNotExist(err) {
					t.Errorf("link still there: %v", err)
				}
				if got := readFile(t, filepath.Join(root, "dir/keep.txt")); got != "x" {
					t.Errorf("target damaged")
				}
			},
		},
		{
			name:  "rename",
			setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "src/old_name.rs"), "body") },
			req:   []any{"action", "rename", "from", "src/old_name.rs", "to", "src/new_name.rs"},
			want:  map[string]any{"type": "rename_success", "from": "src/old_name.rs", "to": "src/new_name.rs"},
			check: func(t *testing.T, root string) {
				if got := readFile(t, filepath.Join(root, "src/new_name.rs")); got != "body" {
					t.Errorf("content = %q", got)
				}
				if _, err := os.Lstat(filepath.Join(root, "src/old_name.rs")); !os.IsNotExist(err) {
					t.Errorf("old name still there: %v", err)
				}
			},
		},
		{
			name: "watch",
			req:  []any{"action", "watch", "path", ""},
			want: map[string]any{"type": "watching", "path": ""},
		},
		{
			name: "unwatch without a watch",
			req:  []any{"action", "unwatch"},
			want: map[string]any{"type": "unwatched"},
		},
	}
	ids := []struct {
		name string
		id   any // nil: no id sent
	}{{"no id", nil}, {"number id", 7}, {"string id", "req-7"}}
	for _, tt := range tests {
		for _, id := range ids {
			t.Run(tt.name+"/"+id.name, func(t *testing.T) {
				c, r := newChannel(t)
				root := c.root.Path()
				if tt.setup != nil {
					tt.setup(t, root)
				}
				kv := tt.req
				want := map[string]any{}
				for k, v := range tt.want {
					want[k] = v
				}
				if id.id != nil {
					kv = append(append([]any(nil), kv...), "id", id.id)
					want["id"] = wire(t, map[string]any{"v": id.id})["v"]
				}
				got := call(t, c, r, req(t, kv...))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("reply = %v\nwant    %v", got, want)
				}
				if tt.check != nil {
					tt.check(t, root)
				}
			})
		}
	}
}

// Errors echo the request's id too; only its absence omits it.
func TestErrorEchoesID(t *testing.T) {
	c, r := newChannel(t)
	for _, tc := range []struct {
		req  string
		want map[string]any
	}{
		{`{"action":"read","path":"missing.txt","id":3}`,
			map[string]any{"type": "error", "message": "Tool execution error: cannot read 'missing.txt': no such file or directory", "id": float64(3)}},
		{`{"action":"read","path":"missing.txt","id":"x"}`,
			map[string]any{"type": "error", "message": "Tool execution error: cannot read 'missing.txt': no such file or directory", "id": "x"}},
		{`{"action":"read","path":"missing.txt"}`,
			map[string]any{"type": "error", "message": "Tool execution error: cannot read 'missing.txt': no such file or directory"}},
		{`{"action":"read","id":{"k":[1]}}`,
			map[string]any{"type": "error", "message": "Invalid payload: missing field `path`", "id": map[string]any{"k": []any{float64(1)}}}},
	} {
		if got := call(t, c, r, tc.req); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.req, got, tc.want)
		}
	}
}

func TestFailures(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	c.maxRead = 10
	writeFile(t, filepath.Join(root, "big"), "01234567890")
	writeFile(t, filepath.Join(root, "ten"), "0123456789")
	writeFile(t, filepath.Join(root, "latin1"), "caf\xe9")
	writeFile(t, filepath.Join(root, "dir/f"), "")
	tests := []struct{ req, want string }{
		{`{"action":"read","path":"dir"}`, "cannot read 'dir': it is a directory"},
		{`{"action":"read","path":"big"}`, "'big' is too large to read (11 bytes; the limit is 10 bytes)"},
		{`{"action":"read","path":"latin1"}`, "'latin1' is not a text file (its content is not valid UTF-8)"},
		{`{"action":"write","path":"dir","content":""}`, "cannot write 'dir': it is a directory"},
		{`{"action":"write","path":"ten/x","content":""}`, "cannot create the parent directories of 'ten/x': not a directory"},
		{`{"action":"mkdir","path":"ten"}`, "cannot create directory 'ten': not a directory"},
		{`{"action":"delete","path":"nope"}`, "cannot delete 'nope': no such file or directory"},
		{`{"action":"rename","from":"nope","to":"x"}`, "cannot rename 'nope': no such file or directory"},
		{`{"action":"rename","from":"ten","to":"no/such/dir/ten"}`, "cannot rename to 'no/such/dir/ten': its parent directory does not exist"},
	}
	for _, root := range []string{"", ".", "dir/..", root, root + "/"} {
		tests = append(tests,
			struct{ req, want string }{req(t, "action", "delete", "path", root), "refusing to delete the work directory itself"},
			struct{ req, want string }{req(t, "action", "rename", "from", root, "to", "x"), "refusing to rename the work directory itself"},
			struct{ req, want string }{req(t, "action", "rename", "from", "ten", "to", root), "refusing to rename onto the work directory itself"},
		)
	}
	for _, tt := range tests {
		got := call(t, c, r, tt.req)
		if want := "Tool execution error: " + tt.want; got["type"] != "error" || got["message"] != want {
			t.Errorf("%s:\n got %v\nwant message %q", tt.req, got, want)
		}
	}
	if got := call(t, c, r, `{"action":"read","path":"ten"}`); got["content"] != "0123456789" {
		t.Errorf("file at the read limit: %v", got)
	}
	if _, err := os.Stat(filepath.Join(root, "ten")); err != nil {
		t.Errorf("a refused rename touched the file: %v", err)
	}
	if des, _ := os.ReadDir(root); len(des) != 4 {
		t.Errorf("work directory changed: %d entries", len(des))
	}
}
