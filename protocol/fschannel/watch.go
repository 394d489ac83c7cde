package fschannel

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/openheim/openheim/runtime/confine"
)

// coalesceWindow is how long an event is held so that identical ones
// arriving meanwhile (a burst of writes to one file) go out as one. Every
// change is still followed by an event sent after it arrived.
const coalesceWindow = 10 * time.Millisecond

// Event kinds, in the style of the Debug output of Rust's notify crate,
// which is what the Rust server sent.
const (
	kindCreateFile   = "Create(File)"
	kindCreateFolder = "Create(Folder)"
	kindCreateAny    = "Create(Any)" // the entry was gone before it could be looked at
	kindModifyFile   = "Modify(File)"
	kindModifyMeta   = "Modify(Metadata)"
	kindRemove       = "Remove(Any)"
	kindRename       = "Rename(Any)"
)

// watcher watches one path, recursively when it is a directory: the
// kernel watches single directories, so every directory below is added, at
// start and as it appears. Symlinks are never followed, and every watch is
// set on what was opened through the root (see notifier). After start,
// all fields but stop and done belong to the run goroutine.
type watcher struct {
	n     notifier
	root  *confine.Root
	send  func(msg any)
	name  string // the watched path's real name, relative to the root
	shown string // the path as the client sent it
	max   int

	dirs   map[string]struct{} // names of the directories watched
	warned bool                // the watch-limit error was sent (or queued)
	notes  []any               // messages queued before start

	held  *FsEvent // the event being coalesced, sent when timer fires
	timer *time.Timer
	// pending are the files atomic writes are replacing, and whether each
	// existed; unknown those whose state was not seen in time
	// (atomicwrites.go).
	pending, unknown map[string]bool

	started    bool
	stop, done chan struct{}
}

func newWatcher(root *confine.Root, name, shown string, max int, send func(msg any)) (*watcher, error) {
	fi, err := root.Stat(name)
	if err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		err = &confine.SpecialError{Path: shown, Mode: fi.Mode()}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot watch '%s': %s", shown, reason(err))
	}
	n, err := newNotifier(root)
	if err != nil {
		return nil, fmt.Errorf("cannot watch '%s': %s", shown, reason(err))
	}
	w := &watcher{
		n: n, root: root, send: send, name: name, shown: shown, max: max,
		dirs: map[string]struct{}{},
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	if fi.IsDir() {
		err = w.addTree(name)
	} else {
		err = n.add(name)
	}
	if err != nil {
		n.close()
		return nil, fmt.Errorf("cannot watch '%s': %s", shown, reason(err))
	}
	return w, nil
}

// start sends what was queued while setting up and starts the goroutine.
func (w *watcher) start() {
	for _, n := range w.notes {
		w.send(n)
	}
	w.notes = nil
	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	w.started = true
	go w.run()
}

// close stops the watch; once it returns nothing more is sent.
func (w *watcher) close() {
	close(w.stop)
	w.n.close()
	if w.started {
		<-w.done
	}
}

func (w *watcher) run() {
	defer close(w.done)
	defer w.flush() // a change seen before the stop is still reported
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.n.events():
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.n.errors():
			if !ok {
				return
			}
			msg := "watch: " + err.Error()
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				msg = "too many changes at once: some fs events were lost"
			}
			w.flush()
			w.send(Error{Type: "error", Message: "Tool execution error: " + msg})
		case <-w.timer.C:
			w.flush()
		}
	}
}

// handle reports one change. ev.Name is absolute, below the root's path;
// what it names is looked at through the root.
func (w *watcher) handle(ev fsnotify.Event) {
	name := w.root.Rel(ev.Name)
	if filepath.IsAbs(name) {
		return // not below the root: nothing to report
	}
	if w.tempEvent(name, ev.Has(fsnotify.Create), ev.Has(fsnotify.Remove)) {
		return
	}
	if ev.Has(fsnotify.Create) {
		kind := kindCreateAny
		if existed, ok := w.replaced(name, ev.Name); ok && existed {
			kind = kindModifyFile // an atomic write replaced the file
		} else if fi, err := w.root.Lstat(name); err == nil {
			kind = kindCreateFile
			if fi.IsDir() {
				kind = kindCreateFolder
				// Added before the event goes out, so a client that
				// reacts by creating something inside is seen.
				w.addTree(name)
			}
		}
		w.emit(kind, ev.Name)
		if kind == kindCreateFolder {
			w.announce(name)
		}
	}
	if ev.Has(fsnotify.Write) {
		w.emit(kindModifyFile, ev.Name)
	}
	if ev.Has(fsnotify.Chmod) {
		w.emit(kindModifyMeta, ev.Name)
	}
	if ev.Has(fsnotify.Rename) {
		// A moved directory's own watch reports the move again
		// (IN_MOVE_SELF, queued after its parent's events). Once forget
		// has removed that watch the echo is dropped; if it was read
		// first, coalescing absorbs it as an identical event.
		w.forget(name)
		w.emit(kindRename, ev.Name)
	}
	if ev.Has(fsnotify.Remove) {
		w.forget(name)
		w.emit(kindRemove, ev.Name)
	}
}

// emit holds the event for coalesceWindow, absorbing identical ones that
// arrive meanwhile; a different event sends the held one first, so order
// is kept.
func (w *watcher) emit(kind, path string) {
	if h := w.held; h != nil && h.EventKind == kind && h.Paths[0] == path {
		return
	}
	w.flush()
	w.held = &FsEvent{Type: "fs_event", EventKind: kind, Paths: []string{path}}
	w.timer.Reset(coalesceWindow)
}

func (w *watcher) flush() {
	if w.held != nil {
		w.send(*w.held)
		w.held = nil
	}
}

// announceMax bounds the entries announce reports: a large tree moved in
// is one Create(Folder) that a client lists when it wants to.
const announceMax = 256

// announce reports what a new directory already holds: whatever was created
// in it before its watch was added (mkdir -p a/b && write a/b/f) would
// otherwise never be reported.
func (w *watcher) announce(dir string) {
	d, err := w.root.OpenDir(dir)
	if err != nil {
		return
	}
	defer d.Close()
	n := 0
	d.Walk(func(name string, fi fs.FileInfo) error {
		if n++; n > announceMax {
			return fs.SkipAll
		}
		kind := kindCreateFile
		if fi.IsDir() {
			kind = kindCreateFolder
		}
		w.emit(kind, w.root.Abs(name))
		return nil
	})
}

// addTree adds dir and every directory below it, without following
// symlinks, up to w.max directories. Only a failure to add dir itself is
// returned; a subdirectory that vanished or cannot be read is skipped.
func (w *watcher) addTree(dir string) error {
	switch err := w.addDir(dir); {
	case err == fs.SkipAll:
		return nil
	case err != nil:
		return err
	}
	d, err := w.root.OpenDir(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	return d.Walk(func(name string, fi fs.FileInfo) error {
		if !fi.IsDir() {
			return nil
		}
		switch err := w.addDir(name); {
		case err == fs.SkipAll:
			return err
		case err != nil:
			return fs.SkipDir
		}
		return nil
	})
}

// addDir watches one directory unless it is already watched; fs.SkipAll
// means the limit is reached.
func (w *watcher) addDir(name string) error {
	if _, ok := w.dirs[name]; ok {
		return nil
	}
	if len(w.dirs) >= w.max {
		w.limit()
		return fs.SkipAll
	}
	if err := w.n.add(name); err != nil {
		if errors.Is(err, syscall.ENOSPC) { // the system's inotify limit
			w.limit()
			return fs.SkipAll
		}
		return err
	}
	w.dirs[name] = struct{}{}
	return nil
}

// limit reports, once per watch, that not every directory is watched.
func (w *watcher) limit() {
	if w.warned {
		return
	}
	w.warned = true
	msg := Error{Type: "error", Message: fmt.Sprintf(
		"Tool execution error: watch limit reached: only %d directories under '%s' are watched; changes elsewhere are not reported",
		len(w.dirs), w.shown)}
	if w.started {
		w.flush()
		w.send(msg)
	} else {
		w.notes = append(w.notes, msg)
	}
}

// forget drops the watches of name and the directories below it, after
// it was removed or renamed away. It reports whether name was watched.
func (w *watcher) forget(name string) bool {
	if _, ok := w.dirs[name]; !ok {
		return false
	}
	prefix := name + string(filepath.Separator)
	for d := range w.dirs {
		if d == name || strings.HasPrefix(d, prefix) {
			delete(w.dirs, d)
			w.n.remove(d) // already gone with a removed directory: ignored
		}
	}
	return true
}
