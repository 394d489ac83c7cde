package fschannel

import (
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// An atomic write (runtime/confine's, runtime/atomicfile's) writes a
// hidden temporary file ".<name>.tmp-<suffix>" beside the file and renames
// it over the file: the kernel reports Create, Modify and Rename of the
// temporary and then Create of the file, the same whether the file was
// new or replaced. The watcher reports only the file: Create(File) when
// it is new, Modify(File) when it existed.

// tempTarget is the file an atomic write's temporary file name stands in
// for ("dir/.a.txt.tmp-123" -> "dir/a.txt"); ok is false for other names.
func tempTarget(name string) (target string, ok bool) {
	dir, base := filepath.Split(name)
	rest, ok := strings.CutPrefix(base, ".")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, ".tmp-")
	if i <= 0 || i+len(".tmp-") == len(rest) {
		return "", false
	}
	for _, c := range rest[i+len(".tmp-"):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "", false
		}
	}
	return dir + rest[:i], true
}

// maxPending bounds the atomic writes a watcher follows at once: a
// temporary file that never became its file (a failed write) is dropped
// with the rest past it.
const maxPending = 1024

// tempEvent takes an event of an atomic write's temporary file (name,
// relative to the root) and reports whether it was one: it is never news
// itself. When the temporary file appears, whether its file exists is
// noted for the file's own Create that follows. The channels' own writes
// say so for sure (channelWrites); another writer's file is looked at
// now, and counts only if the temporary file is still there after the
// look: then the rename had not happened yet, and what was seen is what
// the write replaces. Otherwise the file's Create is told as it is.
func (w *watcher) tempEvent(name string, created, removed bool) bool {
	target, ok := tempTarget(name)
	if !ok {
		return false
	}
	if w.pending == nil || len(w.pending) >= maxPending {
		w.pending = map[string]bool{}
	}
	switch {
	case created:
		_, terr := w.root.Lstat(target)
		if _, err := w.root.Lstat(name); err == nil {
			w.pending[target] = terr == nil
		} else {
			w.pending[target] = false // unknown: see replaced
			w.unsure(target)
		}
	case removed:
		delete(w.pending, target) // a write that failed: no Create follows
	}
	return true
}

// unsure marks a pending write whose file's state was not seen in time.
func (w *watcher) unsure(target string) {
	if w.unknown == nil {
		w.unknown = map[string]bool{}
	}
	if len(w.unknown) >= maxPending {
		clear(w.unknown)
	}
	w.unknown[target] = true
}

// replaced reports how the Create of file name (relative, path absolute)
// that ends an atomic write is told: as a change of the file that was
// there (true), or as a new file; ok is false for a Create that ends no
// atomic write.
func (w *watcher) replaced(name, path string) (existed, ok bool) {
	existed, ok = w.pending[name]
	if !ok {
		return false, false
	}
	delete(w.pending, name)
	unsure := w.unknown[name]
	delete(w.unknown, name)
	if known, sure := channelWrites.existed(path); sure {
		return known, true
	}
	if unsure {
		return false, false
	}
	return existed, true
}

// writeNotes are the writes fs channels are making: whether each file
// existed, for the watchers (of every connection) that see the write
// happen. A note lasts noteTTL, long enough for a watcher to read the
// write's events.
type writeNotes struct {
	mu    sync.Mutex
	notes map[string]writeNote // absolute path
}

type writeNote struct {
	existed bool
	at      time.Time
}

const noteTTL = 5 * time.Second

var channelWrites = &writeNotes{notes: map[string]writeNote{}}

// note records that the file at path is about to be written, and whether
// it exists.
func (n *writeNotes) note(path string, existed bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	for p, w := range n.notes {
		if now.Sub(w.at) > noteTTL {
			delete(n.notes, p)
		}
	}
	n.notes[path] = writeNote{existed: existed, at: now}
}

func (n *writeNotes) existed(path string) (existed, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w, ok := n.notes[path]
	if !ok || time.Since(w.at) > noteTTL {
		return false, false
	}
	return w.existed, true
}
