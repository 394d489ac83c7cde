package fschannel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
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

// watcher watches one path, recursively when it is a directory: fsnotify
// watches single directories, so every directory below is added, at start
// and as it appears. Symlinks are never followed. After start, all fields
// but stop and done belong to the run goroutine.
type watcher struct {
	fw    *fsnotify.Watcher
	send  func(msg any)
	root  string // absolute, as resolved by the sandbox
	shown string // the path as the client sent it
	max   int

	dirs   map[string]struct{} // directories added to fw
	warned bool                // the watch-limit error was sent (or queued)
	notes  []any               // messages queued before start

	held  *FsEvent // the event being coalesced, sent when timer fires
	timer *time.Timer

	started    bool
	stop, done chan struct{}
}

func newWatcher(abs, shown string, max int, send func(msg any)) (*watcher, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot watch '%s': %s", shown, reason(err))
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot watch '%s': %s", shown, reason(err))
	}
	w := &watcher{
		fw: fw, send: send, root: abs, shown: shown, max: max,
		dirs: map[string]struct{}{},
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	if fi.IsDir() {
		err = w.addTree(abs)
	} else {
		err = fw.Add(abs)
	}
	if err != nil {
		fw.Close()
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
	w.fw.Close()
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
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fw.Errors:
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

func (w *watcher) handle(ev fsnotify.Event) {
	name := ev.Name
	if ev.Has(fsnotify.Create) {
		kind := kindCreateAny
		if fi, err := os.Lstat(name); err == nil {
			kind = kindCreateFile
			if fi.IsDir() {
				kind = kindCreateFolder
				// Added before the event goes out, so a client that
				// reacts by creating something inside is seen.
				w.addTree(name)
			}
		}
		w.emit(kind, name)
		if kind == kindCreateFolder {
			w.announce(name)
		}
	}
	if ev.Has(fsnotify.Write) {
		w.emit(kindModifyFile, name)
	}
	if ev.Has(fsnotify.Chmod) {
		w.emit(kindModifyMeta, name)
	}
	if ev.Has(fsnotify.Rename) {
		// A moved directory's own watch reports the move again
		// (IN_MOVE_SELF, queued after its parent's events). Once forget
		// has removed that watch fsnotify drops the echo; if it read the
		// echo first, coalescing absorbs it as an identical event.
		w.forget(name)
		w.emit(kindRename, name)
	}
	if ev.Has(fsnotify.Remove) {
		w.forget(name)
		w.emit(kindRemove, name)
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
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil
		}
		if n++; n > announceMax {
			return fs.SkipAll
		}
		kind := kindCreateFile
		if d.IsDir() {
			kind = kindCreateFolder
		}
		w.emit(kind, path)
		return nil
	})
}

// addTree adds dir and every directory below it, without following
// symlinks, up to w.max directories. Only a failure to add dir itself is
// returned; a subdirectory that vanished or cannot be read is skipped.
func (w *watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && d == nil {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if _, ok := w.dirs[path]; ok {
			return nil
		}
		if len(w.dirs) >= w.max {
			w.limit()
			return fs.SkipAll
		}
		if err := w.fw.Add(path); err != nil {
			if errors.Is(err, syscall.ENOSPC) { // the system's inotify limit
				w.limit()
				return fs.SkipAll
			}
			if path == dir {
				return err
			}
			return fs.SkipDir
		}
		w.dirs[path] = struct{}{}
		return nil
	})
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

// forget drops the watches of path and the directories below it, after
// it was removed or renamed away. It reports whether path was watched.
func (w *watcher) forget(path string) bool {
	if _, ok := w.dirs[path]; !ok {
		return false
	}
	prefix := path + string(filepath.Separator)
	for d := range w.dirs {
		if d == path || strings.HasPrefix(d, prefix) {
			delete(w.dirs, d)
			w.fw.Remove(d) // already gone with a removed directory: ignored
		}
	}
	return true
}
