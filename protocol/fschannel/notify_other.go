//go:build !linux

package fschannel

import (
	"github.com/fsnotify/fsnotify"

	"github.com/openheim/openheim/runtime/confine"
)

// byName watches through fsnotify, which watches by path: the path is
// checked through the root first, but a link swapped in between the check
// and the watch is followed. Linux watches what was opened instead (see
// notify_linux.go); elsewhere this is the best available.
type byName struct {
	root *confine.Root
	fw   *fsnotify.Watcher
}

func newNotifier(root *confine.Root) (notifier, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return &byName{root: root, fw: fw}, nil
}

func (b *byName) add(name string) error {
	f, _, err := b.root.Open(name) // refuses what leads out, and special files
	if err != nil {
		return err
	}
	f.Close()
	return b.fw.Add(b.root.Abs(name))
}

func (b *byName) remove(name string)            { b.fw.Remove(b.root.Abs(name)) }
func (b *byName) events() <-chan fsnotify.Event { return b.fw.Events }
func (b *byName) errors() <-chan error          { return b.fw.Errors }
func (b *byName) close()                        { b.fw.Close() }
