package fschannel

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestList(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	writeFile(t, filepath.Join(root, "b.txt"), "12345")
	writeFile(t, filepath.Join(root, "a/inner.txt"), "x")
	writeFile(t, filepath.Join(root, "c/d/deep.txt"), "yy")
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret"), "s")
	os.Symlink(outside, filepath.Join(root, "z-out"))

	entry := func(rel string) map[string]any {
		p := filepath.Join(root, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		e := map[string]any{"path": p, "name": filepath.Base(p), "is_dir": fi.IsDir(), "size": nil, "modified": float64(fi.ModTime().Unix())}
		if !fi.IsDir() {
			e["size"] = float64(fi.Size())
		}
		return e
	}
	list := func(rels ...string) []any {
		out := []any{}
		for _, rel := range rels {
			out = append(out, entry(rel))
		}
		return out
	}
	tests := []struct {
		req  string
		want map[string]any
	}{
		{`{"action":"list","path":""}`, map[string]any{"type": "file_list", "path": "", "entries": list("a", "b.txt", "c", "z-out")}},
		{`{"action":"list","path":".","recursive":false,"id":1}`, map[string]any{"type": "file_list", "path": ".", "id": float64(1), "entries": list("a", "b.txt", "c", "z-out")}},
		{`{"action":"list","path":"c"}`, map[string]any{"type": "file_list", "path": "c", "entries": list("c/d")}},
		{`{"action":"list","path":"` + root + `/c/d"}`, map[string]any{"type": "file_list", "path": root + "/c/d", "entries": list("c/d/deep.txt")}},
		// Recursive: depth first, the symlink listed but not followed.
		{`{"action":"list","path":"","recursive":true}`, map[string]any{"type": "file_list", "path": "", "entries": list("a", "a/inner.txt", "b.txt", "c", "c/d", "c/d/deep.txt", "z-out")}},
		{`{"action":"list","path":"a","recursive":null}`, map[string]any{"type": "file_list", "path": "a", "entries": list("a/inner.txt")}},
		{`{"action":"list","path":"b.txt"}`, map[string]any{"type": "error", "message": "Tool execution error: cannot list 'b.txt': not a directory"}},
		{`{"action":"list","path":"nope"}`, map[string]any{"type": "error", "message": "Tool execution error: cannot list 'nope': no such file or directory"}},
	}
	for _, tt := range tests {
		if got := call(t, c, r, tt.req); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %v\nwant %v", tt.req, got, tt.want)
		}
	}

	// An empty directory lists as [], not null.
	os.Mkdir(filepath.Join(root, "empty"), 0o755)
	got := call(t, c, r, `{"action":"list","path":"empty"}`)
	if e, ok := got["entries"].([]any); !ok || len(e) != 0 {
		t.Errorf("empty dir entries = %#v, want []", got["entries"])
	}
}

func TestListLimitAndCancel(t *testing.T) {
	c, r := newChannel(t)
	for _, n := range []string{"1", "2", "3/4", "3/5"} {
		writeFile(t, filepath.Join(c.root.Path(), n), "")
	}
	// 1, 2, 3, 3/4, 3/5: five entries recursively, three at the top.
	count := func(recursive string) (int, string) {
		got := call(t, c, r, `{"action":"list","path":"","recursive":`+recursive+`}`)
		e, _ := got["entries"].([]any)
		msg, _ := got["message"].(string)
		return len(e), msg
	}
	c.maxList = 5
	if n, msg := count("true"); n != 5 {
		t.Errorf("recursive at the limit: %d entries, error %q", n, msg)
	}
	c.maxList = 4
	if n, msg := count("false"); n != 3 {
		t.Errorf("flat under the limit: %d entries, error %q", n, msg)
	}
	want := "Tool execution error: cannot list '': more than 4 entries; list a subdirectory or without recursive"
	if _, msg := count("true"); msg != want {
		t.Errorf("recursive over the limit: error %q, want %q", msg, want)
	}
	c.maxList = 2
	want = "Tool execution error: cannot list '': more than 2 entries; list a subdirectory or without recursive"
	if _, msg := count("false"); msg != want {
		t.Errorf("flat over the limit: error %q, want %q", msg, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := callCtx(t, ctx, c, r, `{"action":"list","path":"","recursive":true}`)
	if got["message"] != "Tool execution error: listing '' was cancelled" {
		t.Errorf("cancelled list = %v", got)
	}
}
