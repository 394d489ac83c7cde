package fschannel

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

func TestTempTarget(t *testing.T) {
	for name, want := range map[string]string{
		".a.txt.tmp-123":             "a.txt",
		"d/.notes.jsonl.tmp-8f3Ab":   "d/notes.jsonl",
		".x.tmp-1.tmp-2":             "x.tmp-1",
		"a.txt.tmp-1":                "",
		".a.txt.tmp-":                "",
		".tmp-1":                     "",
		".a.txt.tmp-1~":              "",
		"d/.hidden":                  "",
		"d/.config.tmp-12/inner.txt": "",
	} {
		got, ok := tempTarget(name)
		if ok != (want != "") || got != want {
			t.Errorf("tempTarget(%q) = %q %v, want %q", name, got, ok, want)
		}
	}
}

// TestChannelWritesReportTheFile: a write through the fs channel (an
// atomic write: a hidden temporary file renamed over the file) is
// reported as the file alone: Create(File) when it is new, Modify(File)
// when it existed; the temporary file is never named.
func TestChannelWritesReportTheFile(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	watch(t, c, r, "")
	file := filepath.Join(root, "a.txt")
	write := func(content string) {
		c.Handle(context.Background(), []byte(req(t, "action", "write", "path", "a.txt", "content", content)))
	}
	write("one")
	waitEvent(t, r, kindCreateFile, file)
	write("two")
	waitEvent(t, r, kindModifyFile, file)
	time.Sleep(50 * time.Millisecond) // anything else the writes caused
	for _, ev := range events(t, r) {
		if strings.Contains(ev.Paths[0], ".tmp-") || ev.Paths[0] != file {
			t.Errorf("event %v names another path than the file", ev)
		}
	}
	if n := countEvents(t, r, kindCreateFile, file); n != 1 {
		t.Errorf("Create(File) %d times, want once (the first write)", n)
	}
	if readFile(t, file) != "two" {
		t.Error("the write did not land")
	}
}

// TestOtherWritersAtomicWrites: an atomic write by another writer (a
// tool, another process) is told from the kernel's events and what the
// directory holds when they are read: the file replaced while its
// temporary file is still there existed; a temporary file already gone
// leaves the file's Create as it is.
func TestOtherWritersAtomicWrites(t *testing.T) {
	c, r := newChannel(t)
	root := c.root.Path()
	w, err := newWatcher(c.root, ".", "", 16, r.send)
	if err != nil {
		t.Fatal(err)
	}
	w.timer = time.NewTimer(time.Hour)
	defer w.n.close()
	at := func(rel string) string { return filepath.Join(root, rel) }
	last := func() string {
		w.flush()
		evs := events(t, r)
		if len(evs) == 0 {
			return ""
		}
		return evs[len(evs)-1].EventKind + " " + filepath.Base(evs[len(evs)-1].Paths[0])
	}
	// b.txt exists, its temporary file is still there when seen.
	writeFile(t, at("b.txt"), "old")
	writeFile(t, at(".b.txt.tmp-1"), "new")
	w.handle(fsnotify.Event{Name: at(".b.txt.tmp-1"), Op: fsnotify.Create})
	w.handle(fsnotify.Event{Name: at(".b.txt.tmp-1"), Op: fsnotify.Write})
	os.Rename(at(".b.txt.tmp-1"), at("b.txt"))
	w.handle(fsnotify.Event{Name: at(".b.txt.tmp-1"), Op: fsnotify.Rename})
	w.handle(fsnotify.Event{Name: at("b.txt"), Op: fsnotify.Create})
	if got := last(); got != "Modify(File) b.txt" {
		t.Errorf("a replaced file: %q", got)
	}
	// c.txt is new, its temporary file still there: Create.
	writeFile(t, at(".c.txt.tmp-2"), "new")
	w.handle(fsnotify.Event{Name: at(".c.txt.tmp-2"), Op: fsnotify.Create})
	os.Rename(at(".c.txt.tmp-2"), at("c.txt"))
	w.handle(fsnotify.Event{Name: at("c.txt"), Op: fsnotify.Create})
	if got := last(); got != "Create(File) c.txt" {
		t.Errorf("a new file: %q", got)
	}
	// The write was over before its events were read: c.txt exists now,
	// but nothing says it did before: Create, as the kernel said.
	writeFile(t, at(".c.txt.tmp-3"), "newer")
	os.Rename(at(".c.txt.tmp-3"), at("c.txt"))
	w.handle(fsnotify.Event{Name: at(".c.txt.tmp-3"), Op: fsnotify.Create})
	w.handle(fsnotify.Event{Name: at("c.txt"), Op: fsnotify.Create})
	if got := last(); got != "Create(File) c.txt" {
		t.Errorf("a write seen late: %q", got)
	}
	for _, ev := range events(t, r) {
		if strings.Contains(ev.Paths[0], ".tmp-") {
			t.Errorf("a temporary file was reported: %v", ev)
		}
	}
}
