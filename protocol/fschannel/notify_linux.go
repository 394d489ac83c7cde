//go:build linux

package fschannel

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/openheim/openheim/runtime/confine"
)

// inotifyMask is what fsnotify asks for with every operation watched.
const inotifyMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_ATTRIB

// byHandle watches with inotify directly rather than through fsnotify,
// because fsnotify watches by path and the kernel follows the links of a
// path when the watch is added: a directory swapped for a link to the
// outside at that moment would be watched, and its changes reported. Here
// the file or directory is opened through the root and the watch is set
// on that open file (/proc/self/fd/N), which no later swap can redirect.
// Events and their meaning are fsnotify's, so the watcher works the same
// over either.
type byHandle struct {
	root *confine.Root
	fd   int
	file *os.File // the inotify descriptor, read through the poller

	mu    sync.Mutex
	names map[int32]string // watch descriptor -> name
	wds   map[string]int32

	evs  chan fsnotify.Event
	errs chan error
	quit chan struct{}
	done chan struct{}
	once sync.Once
}

func newNotifier(root *confine.Root) (notifier, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	n := &byHandle{
		root: root, fd: fd, file: os.NewFile(uintptr(fd), "inotify"),
		names: map[int32]string{}, wds: map[string]int32{},
		evs: make(chan fsnotify.Event), errs: make(chan error),
		quit: make(chan struct{}), done: make(chan struct{}),
	}
	go n.read()
	return n, nil
}

func (n *byHandle) add(name string) error {
	f, _, err := n.root.Open(name) // a regular file or directory, never blocking
	if err != nil {
		return err
	}
	defer f.Close()
	wd, err := unix.InotifyAddWatch(n.fd, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), inotifyMask)
	if err != nil {
		return os.NewSyscallError("inotify_add_watch", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	// The same directory added again (renamed, say) keeps its descriptor.
	if old, ok := n.names[int32(wd)]; ok {
		delete(n.wds, old)
	}
	n.names[int32(wd)] = name
	n.wds[name] = int32(wd)
	return nil
}

func (n *byHandle) remove(name string) {
	n.mu.Lock()
	wd, ok := n.wds[name]
	if ok {
		n.forget(wd)
	}
	n.mu.Unlock()
	if ok {
		unix.InotifyRmWatch(n.fd, uint32(wd))
	}
}

// forget drops wd from the maps; n.mu is held.
func (n *byHandle) forget(wd int32) {
	delete(n.wds, n.names[wd])
	delete(n.names, wd)
}

func (n *byHandle) events() <-chan fsnotify.Event { return n.evs }
func (n *byHandle) errors() <-chan error          { return n.errs }

func (n *byHandle) close() {
	n.once.Do(func() {
		close(n.quit)
		n.file.Close() // ends a blocked read
	})
	<-n.done
}

// read decodes the kernel's events until close. Each is translated just
// before it is sent, not when the batch is read, so that a watch removed
// while the previous event was handled (a moved directory) drops the
// events still queued for it.
func (n *byHandle) read() {
	defer close(n.done)
	defer close(n.evs)
	defer close(n.errs)
	buf := make([]byte, unix.SizeofInotifyEvent*4096)
	for {
		k, err := n.file.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) || !n.sendErr(err) {
				return
			}
			continue
		}
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			start := off + unix.SizeofInotifyEvent
			off = start + size
			if mask&unix.IN_Q_OVERFLOW != 0 {
				if !n.sendErr(fsnotify.ErrEventOverflow) {
					return
				}
				continue
			}
			name := strings.TrimRight(string(buf[start:min(off, k)]), "\x00")
			if ev, ok := n.translate(wd, mask, name); ok && !n.send(ev) {
				return
			}
		}
	}
}

// translate turns one kernel event into fsnotify's terms, or drops it.
func (n *byHandle) translate(wd int32, mask uint32, child string) (fsnotify.Event, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	name, ok := n.names[wd]
	if !ok {
		return fsnotify.Event{}, false // removed since: its events go with it
	}
	if mask&(unix.IN_IGNORED|unix.IN_UNMOUNT) != 0 {
		n.forget(wd)
		return fsnotify.Event{}, false
	}
	if child != "" {
		name = filepath.Join(name, child)
	}
	if mask&unix.IN_DELETE_SELF != 0 {
		n.forget(wd)
		// The parent, when watched, reports the deletion itself.
		if _, watched := n.wds[filepath.Dir(name)]; watched && name != "." {
			return fsnotify.Event{}, false
		}
	}
	if mask&unix.IN_MOVE_SELF != 0 {
		// Where it went is unknown here; the parent's watch reports the
		// new name, if it is below the root at all.
		n.forget(wd)
		unix.InotifyRmWatch(n.fd, uint32(wd))
	}
	return fsnotify.Event{Name: n.root.Abs(name), Op: opOf(mask)}, true
}

func opOf(mask uint32) fsnotify.Op {
	var op fsnotify.Op
	if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		op |= fsnotify.Create
	}
	if mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0 {
		op |= fsnotify.Remove
	}
	if mask&unix.IN_MODIFY != 0 {
		op |= fsnotify.Write
	}
	if mask&(unix.IN_MOVE_SELF|unix.IN_MOVED_FROM) != 0 {
		op |= fsnotify.Rename
	}
	if mask&unix.IN_ATTRIB != 0 {
		op |= fsnotify.Chmod
	}
	return op
}

func (n *byHandle) send(ev fsnotify.Event) bool {
	select {
	case n.evs <- ev:
		return true
	case <-n.quit:
		return false
	}
}

func (n *byHandle) sendErr(err error) bool {
	select {
	case n.errs <- err:
		return true
	case <-n.quit:
		return false
	}
}
