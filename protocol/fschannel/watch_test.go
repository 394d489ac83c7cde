package fschannel

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// events returns the fs_event messages recorded so far, checking on the
// way that none carries an id.
func events(t *testing.T, r *recorder) []FsEvent {
	t.Helper()
	var out []FsEvent
	for _, m := range r.all() {
		if ev, ok := m.(FsEvent); ok {
			if _, has := wire(t, ev)["id"]; has {
				t.Errorf("fs_event carries an id: %v", ev)
			}
			out = append(out, ev)
		}
	}
	return out
}

func countEvents(t *testing.T, r *recorder, kind, path string) int {
	n := 0
	for _, ev := range events(t, r) {
		if ev.Type == "fs_event" && ev.EventKind == kind && len(ev.Paths) == 1 && ev.Paths[0] == path {
			n++
		}
	}
	return n
}

func waitEvent(t *testing.T, r *recorder, kind, path string) {
	t.Helper()
	eventually(t, kind+" "+path, func() bool { return countEvents(t, r, kind, path) > 0 })
}

func watch(t *testing.T, c *Channel, r *recorder, path string) {
	t.Helper()
	got := call(t, c, r, req(t, "action", "watch", "path", path, "id", 1))
	if got["type"] != "watching" || got["path"] != path || got["id"] != float64(1) {
		t.Fatalf("watch %q: %v", path, got)
	}
}

func TestWatchEvents(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	os.Mkdir(filepath.Join(root, "old"), 0o755) // present before the watch
	watch(t, c, r, "")
	at := func(rel string) string { return filepath.Join(root, rel) }

	steps := []struct {
		name       string
		do         func() error
		kind, path string
	}{
		{"create file", func() error { return os.WriteFile(at("a.txt"), nil, 0o644) }, kindCreateFile, at("a.txt")},
		{"write file", func() error { return os.WriteFile(at("a.txt"), []byte("data"), 0o644) }, kindModifyFile, at("a.txt")},
		{"chmod", func() error { return os.Chmod(at("a.txt"), 0o600) }, kindModifyMeta, at("a.txt")},
		{"create in an existing subdirectory", func() error { return os.WriteFile(at("old/b.txt"), nil, 0o644) }, kindCreateFile, at("old/b.txt")},
		{"mkdir", func() error { return os.Mkdir(at("new"), 0o755) }, kindCreateFolder, at("new")},
		// The directory made after the watch started is watched too.
		{"create in the new directory", func() error { return os.WriteFile(at("new/c.txt"), nil, 0o644) }, kindCreateFile, at("new/c.txt")},
		{"rename file", func() error { return os.Rename(at("a.txt"), at("new/a2.txt")) }, kindRename, at("a.txt")},
		{"rename target created", func() error { return nil }, kindCreateFile, at("new/a2.txt")},
		{"remove file", func() error { return os.Remove(at("new/c.txt")) }, kindRemove, at("new/c.txt")},
		{"symlink", func() error { return os.Symlink("new", at("ln")) }, kindCreateFile, at("ln")},
		{"rename directory", func() error { return os.Rename(at("new"), at("moved")) }, kindRename, at("new")},
		{"renamed directory appears", func() error { return nil }, kindCreateFolder, at("moved")},
		// Its watch follows the new name.
		{"create in the renamed directory", func() error { return os.WriteFile(at("moved/d.txt"), nil, 0o644) }, kindCreateFile, at("moved/d.txt")},
		{"remove directory", func() error { return os.RemoveAll(at("moved")) }, kindRemove, at("moved")},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		waitEvent(t, r, s.kind, s.path)
	}
	// The move of a watched directory is reported once, not also by its own watch.
	if n := countEvents(t, r, kindRename, at("new")); n != 1 {
		t.Errorf("Rename(Any) of the moved directory reported %d times, want 1", n)
	}
	for _, m := range r.all() {
		if _, ok := m.(FsEvent); !ok {
			t.Errorf("unexpected message %v", m)
		}
	}
}

func TestUnwatchStopsEvents(t *testing.T) {
	base := runtime.NumGoroutine()
	c, r := newChannel(t)
	root := c.root.Path()
	watch(t, c, r, ".")
	os.WriteFile(filepath.Join(root, "seen"), nil, 0o644)
	waitEvent(t, r, kindCreateFile, filepath.Join(root, "seen"))

	got := call(t, c, r, `{"action":"unwatch","id":"u"}`)
	if len(got) != 2 || got["type"] != "unwatched" || got["id"] != "u" {
		t.Fatalf("unwatch: %v", got)
	}
	os.WriteFile(filepath.Join(root, "unseen"), nil, 0o644)
	os.Mkdir(filepath.Join(root, "unseen-dir"), 0o755)
	time.Sleep(100 * time.Millisecond) // long enough for a watcher that was still running
	if msgs := r.all(); len(msgs) != 0 {
		t.Errorf("messages after unwatch: %v", msgs)
	}
	c.Close()
	eventually(t, "the watcher goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
}

func TestSecondWatchReplacesFirst(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	os.Mkdir(filepath.Join(root, "one"), 0o755)
	os.Mkdir(filepath.Join(root, "two"), 0o755)
	watch(t, c, r, "one")
	watch(t, c, r, filepath.Join(root, "two")) // absolute inside root is fine

	os.WriteFile(filepath.Join(root, "one/x"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "two/y"), nil, 0o644)
	waitEvent(t, r, kindCreateFile, filepath.Join(root, "two/y"))
	time.Sleep(50 * time.Millisecond)
	for _, ev := range events(t, r) {
		if ev.Paths[0] != filepath.Join(root, "two/y") {
			t.Errorf("event from the replaced watch or unexpected: %v", ev)
		}
	}

	// A failed watch keeps the current one.
	if got := call(t, c, r, `{"action":"watch","path":"missing"}`); got["type"] != "error" {
		t.Fatalf("watch missing: %v", got)
	}
	os.WriteFile(filepath.Join(root, "two/z"), nil, 0o644)
	waitEvent(t, r, kindCreateFile, filepath.Join(root, "two/z"))
}

func TestWatchLimit(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	for _, d := range []string{"a", "b", "c"} {
		os.Mkdir(filepath.Join(root, d), 0o755)
	}
	c.maxWatch = 2 // root and a
	got := call2(t, c, r, `{"action":"watch","path":"","id":5}`)
	if got[0]["type"] != "watching" || got[0]["id"] != float64(5) {
		t.Fatalf("first reply %v", got[0])
	}
	want := "Tool execution error: watch limit reached: only 2 directories under '' are watched; changes elsewhere are not reported"
	if len(got[1]) != 2 || got[1]["type"] != "error" || got[1]["message"] != want {
		t.Fatalf("second reply %v, want an error without id: %q", got[1], want)
	}
	// What fits is watched; a new directory past the limit is reported but
	// not watched, and the error is not repeated.
	os.Mkdir(filepath.Join(root, "d"), 0o755)
	waitEvent(t, r, kindCreateFolder, filepath.Join(root, "d"))
	os.WriteFile(filepath.Join(root, "a/f"), nil, 0o644)
	waitEvent(t, r, kindCreateFile, filepath.Join(root, "a/f"))
	for _, m := range r.all() {
		if _, ok := m.(FsEvent); !ok {
			t.Errorf("unexpected message %v", m)
		}
	}
}

// call2 sends a request expecting exactly two messages back.
func call2(t *testing.T, c *Channel, r *recorder, raw string) []map[string]any {
	t.Helper()
	r.take()
	c.Handle(t.Context(), []byte(raw))
	msgs := r.take()
	if len(msgs) != 2 {
		t.Fatalf("%s: got %d messages %v, want 2", raw, len(msgs), msgs)
	}
	return []map[string]any{wire(t, msgs[0]), wire(t, msgs[1])}
}

func TestWatchFile(t *testing.T) {
	c, r := newChannel(t)
	p := filepath.Join(c.root.Path(), "f.txt")
	writeFile(t, p, "a")
	watch(t, c, r, "f.txt")
	os.WriteFile(p, []byte("b"), 0o644)
	waitEvent(t, r, kindModifyFile, p)
}

func TestCloseIsIdempotentAndFinal(t *testing.T) {
	base := runtime.NumGoroutine()
	r := &recorder{}
	c, err := New(t.TempDir(), r.send)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // replaced watches leave nothing behind
		watch(t, c, r, "")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := call(t, c, r, `{"action":"watch","path":""}`)
	if got["message"] != "Tool execution error: the fs channel is closed" {
		t.Errorf("watch after Close: %v", got)
	}
	os.WriteFile(filepath.Join(c.root.Path(), "x"), nil, 0o644)
	eventually(t, "the watcher goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
	if msgs := r.all(); len(msgs) != 0 {
		t.Errorf("messages after Close: %v", msgs)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(t.TempDir(), nil); err == nil {
		t.Error("nil send accepted")
	}
	if _, err := New(filepath.Join(t.TempDir(), "missing"), func(any) {}); err == nil {
		t.Error("missing root accepted")
	}
}

// A tree created faster than its watches are added (mkdir -p, then a file)
// is still reported down to the file.
func TestWatchReportsTreeCreatedAtOnce(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	watch(t, c, r, "")
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(deep, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, r, kindCreateFolder, filepath.Join(root, "a", "b"))
	waitEvent(t, r, kindCreateFolder, deep)
	eventually(t, "an event for "+file, func() bool {
		for _, ev := range events(t, r) {
			if ev.Paths[0] == file {
				return true
			}
		}
		return false
	})
}
