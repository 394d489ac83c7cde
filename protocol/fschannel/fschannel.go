// Package fschannel serves the "fs" channel of the WebSocket protocol
// (seed 000): a client lists, reads and edits files below the work
// directory and watches it for changes.
//
// Every path a client sends is confined to the work directory by the same
// kernel-enforced root the file tools use (confine.Root), so the channel
// can reach nothing the agent could not, whatever another process does to
// the tree meanwhile; watches are set on what was opened through the root.
// Failures are reported as
// {"type":"error","message":...}: undecodable requests as
// "Invalid payload: ..." and failed operations as
// "Tool execution error: ...", the wording of the Rust server.
package fschannel

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/openheim/openheim/runtime/confine"
)

// Limits. They are fields of Channel, set from these, so tests can lower
// them.
const (
	// maxListEntries bounds a recursive list. A listing that would exceed
	// it fails with an error rather than being cut silently: the
	// file_list reply has no way to say it is incomplete, and a client
	// showing a partial tree as the whole would mislead its user.
	maxListEntries = 10_000
	// maxReadBytes bounds a read; larger files are refused.
	maxReadBytes = 10 << 20
	// maxWatchDirs bounds the directories one watch registers with the
	// kernel (inotify watches are a per-user resource). Past it, one
	// error is sent and the directories that fit stay watched.
	maxWatchDirs = 8192
)

// Channel serves one WebSocket connection's fs requests. Handle is called
// from one goroutine at a time, in the order requests arrived.
type Channel struct {
	root *confine.Root
	send func(msg any)

	maxList, maxRead, maxWatch int

	mu     sync.Mutex // guards watch and closed, against Close
	watch  *watcher   // the current watch, nil when none
	closed bool
}

// New returns a channel confined to root (the work directory), replying
// through send. send must not block (it feeds the connection's bounded
// queue) and must be safe for concurrent use: it is called from Handle's
// goroutine and from the watcher's. Each msg is one of this package's
// reply types, to be marshalled with encoding/json as the envelope's data.
func New(root string, send func(msg any)) (*Channel, error) {
	if send == nil {
		return nil, errors.New("fschannel: nil send")
	}
	r, err := confine.Open(root)
	if err != nil {
		return nil, err
	}
	return &Channel{
		root:     r,
		send:     send,
		maxList:  maxListEntries,
		maxRead:  maxReadBytes,
		maxWatch: maxWatchDirs,
	}, nil
}

var errClosed = errors.New("the fs channel is closed")

// Handle decodes one request (the envelope's data) and answers it through
// send. ctx cancels long work such as a recursive list.
func (c *Channel) Handle(ctx context.Context, raw json.RawMessage) {
	req, perr := parseRequest(raw)
	if perr != nil {
		c.send(Error{Type: "error", Message: perr.Error(), ID: req.ID})
		return
	}
	reply, err := c.do(ctx, req)
	if err != nil {
		c.send(Error{Type: "error", Message: "Tool execution error: " + err.Error(), ID: req.ID})
		return
	}
	if reply != nil { // a watch has sent its own reply
		c.send(reply)
	}
}

func (c *Channel) do(ctx context.Context, req request) (any, error) {
	switch req.Action {
	case "watch":
		return c.startWatch(req)
	case "unwatch":
		c.stopWatch()
		return Unwatched{Type: "unwatched", ID: req.ID}, nil
	case "list":
		entries, err := c.list(ctx, req.Path, req.Recursive)
		if err != nil {
			return nil, err
		}
		return FileList{Type: "file_list", Path: req.Path, Entries: entries, ID: req.ID}, nil
	case "read":
		content, err := c.read(req.Path)
		if err != nil {
			return nil, err
		}
		return FileContent{Type: "file_content", Path: req.Path, Content: content, ID: req.ID}, nil
	case "write":
		if err := c.write(req.Path, req.Content); err != nil {
			return nil, err
		}
		return PathDone{Type: "write_success", Path: req.Path, ID: req.ID}, nil
	case "mkdir":
		if err := c.mkdir(req.Path); err != nil {
			return nil, err
		}
		return PathDone{Type: "mkdir_success", Path: req.Path, ID: req.ID}, nil
	case "delete":
		if err := c.remove(req.Path); err != nil {
			return nil, err
		}
		return PathDone{Type: "delete_success", Path: req.Path, ID: req.ID}, nil
	case "rename":
		if err := c.rename(req.From, req.To); err != nil {
			return nil, err
		}
		return Renamed{Type: "rename_success", From: req.From, To: req.To, ID: req.ID}, nil
	}
	// parseRequest admits only the actions above.
	panic("fschannel: unhandled action " + req.Action)
}

// startWatch replaces the current watch, if any, by one on p; if the new
// one cannot be set up, the old one is kept. The watching reply is sent
// after the old watcher has stopped and before the new one starts, so no
// event crosses it.
func (c *Channel) startWatch(req request) (any, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	// Events name what the path really is, links resolved.
	name, err := c.root.Real(req.Path)
	if err != nil {
		return nil, err
	}
	w, err := newWatcher(c.root, name, req.Path, c.maxWatch, c.send)
	if err != nil {
		return nil, err
	}
	c.stopWatch()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		w.close()
		return nil, errClosed
	}
	c.watch = w
	c.send(Watching{Type: "watching", Path: req.Path, ID: req.ID})
	w.start()
	return nil, nil
}

// stopWatch ends the current watch, if any. When it returns the watcher
// goroutine has exited and will send nothing more.
func (c *Channel) stopWatch() {
	c.mu.Lock()
	w := c.watch
	c.watch = nil
	c.mu.Unlock()
	if w != nil {
		w.close()
	}
}

// Close stops the watch and releases the work directory. It is
// idempotent; later requests fail.
func (c *Channel) Close() error {
	c.mu.Lock()
	closed := c.closed
	c.closed = true
	c.mu.Unlock()
	c.stopWatch()
	if !closed {
		c.root.Close()
	}
	return nil
}
