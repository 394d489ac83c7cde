package fschannel

import "github.com/fsnotify/fsnotify"

// notifier is the kernel side of a watch. add and remove take names
// relative to the root; events carry absolute paths below the root's
// path, as fsnotify's do. It is safe to call add and remove while events
// are read.
type notifier interface {
	// add watches name, a directory (the changes of its entries) or a
	// file, as reached through the root.
	add(name string) error
	// remove stops watching name; an unknown name is ignored.
	remove(name string)
	events() <-chan fsnotify.Event
	errors() <-chan error
	// close stops the watch; the channels are closed once it returns.
	close()
}
