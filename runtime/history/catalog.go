// Package history keeps the session store and its full-text index in step:
// the store (runtime/session) is the source of truth, the bleve index
// (index/sessions) is derived and serves `sessions ls` and `sessions search`.
//
// Writers do not touch the index. Opening and committing a bleve index costs
// milliseconds, which would tax every step of every turn; instead a writer
// leaves a marker file per changed session, and whoever reads the index next
// brings exactly those sessions up to date first. So the index always answers
// for everything that was appended, and a turn pays two tiny file creations
// per step.
package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/index/sessions"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// Catalog answers listing and search over a session store through its
// index: the FileStore, or a cluster's store.
type Catalog struct {
	Store    session.Source
	IndexDir string // the bleve index directory, e.g. <home>/index/sessions
	// Warn receives recoverable problems; Progress is called while the
	// index is rebuilt from scratch (a TTY caller draws a bar).
	Warn     func(string)
	Progress func(done, total int)
	// Timeout bounds waiting for another process that holds the index.
	Timeout time.Duration
	// CatchUp, when set, marks the sessions changed elsewhere since its
	// last call (by another replica of a cluster: its writes leave no
	// marker here); every reader of the index calls it first.
	CatchUp func(mark func(id string)) error

	markMu sync.Mutex
}

// dirtyDir holds one marker file per session changed since it was indexed.
func (c *Catalog) dirtyDir() string { return c.IndexDir + ".dirty" }

// MarkDirty records that session id changed and must be re-indexed. It is
// cheap (one file creation) and never fails the caller's write: the
// worst case of a lost marker is a stale entry until `sessions reindex`.
func (c *Catalog) MarkDirty(id string) {
	// A marker already there needs nothing: looking it up is far cheaper
	// than creating, which locks the directory (many turns at once).
	if _, err := os.Lstat(filepath.Join(c.dirtyDir(), id)); err == nil {
		return
	}
	// One creation at a time: each locks the directory in the kernel, and
	// many threads spinning on it cost more than waiting here.
	c.markMu.Lock()
	defer c.markMu.Unlock()
	f, err := os.OpenFile(filepath.Join(c.dirtyDir(), id), os.O_CREATE|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if os.MkdirAll(c.dirtyDir(), 0o700) == nil {
			f, err = os.OpenFile(filepath.Join(c.dirtyDir(), id), os.O_CREATE|os.O_WRONLY, 0o600)
		}
	}
	if err != nil {
		c.warn(fmt.Sprintf("session index: cannot mark %s for re-indexing: %v", id, err))
		return
	}
	f.Close()
}

func (c *Catalog) warn(msg string) {
	if c.Warn != nil {
		c.Warn(msg)
	}
}

func (c *Catalog) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 2 * time.Second
}

// open returns the index brought up to date with the store: rebuilt when
// missing, re-synced when its session count differs from the store's, and
// with every session marked dirty re-indexed.
func (c *Catalog) open() (*sessions.Index, error) {
	if c.CatchUp != nil {
		if err := c.CatchUp(c.MarkDirty); err != nil {
			c.warn(fmt.Sprintf("session index: catching up with the cluster: %v (results may be behind)", err))
		}
	}
	ix, err := sessions.Open(c.IndexDir, sessions.Options{ReadOnly: true, Timeout: c.timeout()})
	if errors.Is(err, sessions.ErrMissing) {
		if _, err := c.Reindex(); err != nil {
			return nil, err
		}
		ix, err = sessions.Open(c.IndexDir, sessions.Options{Timeout: c.timeout()})
	} else if err == nil {
		// Re-open for writing only when there is something to bring in.
		stale, serr := c.stale(ix)
		if serr != nil || stale {
			ix.Close()
			ix, err = sessions.Open(c.IndexDir, sessions.Options{Timeout: c.timeout()})
			if err == nil {
				err = c.sync(ix)
			}
		}
	}
	if err != nil {
		if ix != nil {
			ix.Close()
		}
		return nil, err
	}
	return ix, nil
}

// stale reports whether the index lags the store: dirty markers exist, or
// the number of sessions differs (a session added by hand or by an older
// openheim, or removed behind its back). Counting means reading the whole
// history directory, so it is skipped while the directory's mtime is the one
// stamped at the last check that found them equal.
func (c *Catalog) stale(ix *sessions.Index) (bool, error) {
	marks, _ := os.ReadDir(c.dirtyDir())
	if len(marks) > 0 {
		return true, nil
	}
	mtime := c.Store.Version()
	if stamp, err := os.ReadFile(c.stampPath()); err == nil && string(stamp) == mtime {
		return false, nil
	}
	ids, err := c.Store.IDs()
	if err != nil {
		return false, err
	}
	n, err := ix.Count()
	if err != nil || n != len(ids) {
		return true, err
	}
	c.stamp(mtime)
	return false, nil
}

// stampPath remembers the history directory's mtime when the index was last
// known to hold exactly the store's sessions.
func (c *Catalog) stampPath() string { return c.IndexDir + ".synced" }

func (c *Catalog) stamp(mtime string) {
	if mtime != "" {
		os.WriteFile(c.stampPath(), []byte(mtime), 0o600)
	}
}

// sync re-indexes dirty sessions and reconciles the session sets.
func (c *Catalog) sync(ix *sessions.Index) error {
	marks, _ := os.ReadDir(c.dirtyDir())
	for _, m := range marks {
		// Claim the marker before reading the store: a writer that appends
		// meanwhile creates a fresh marker, so its change is not lost.
		claimed := filepath.Join(c.dirtyDir(), "."+m.Name()+".claimed")
		if strings.HasPrefix(m.Name(), ".") || os.Rename(filepath.Join(c.dirtyDir(), m.Name()), claimed) != nil {
			continue
		}
		if err := c.reindexOne(ix, m.Name()); err != nil {
			os.Rename(claimed, filepath.Join(c.dirtyDir(), m.Name()))
			return err
		}
		os.Remove(claimed)
	}
	// The mtime is taken before reading the ids: a session created
	// meanwhile changes it again, so the next reader looks once more.
	mtime := c.Store.Version()
	ids, err := c.Store.IDs()
	if err != nil {
		return err
	}
	n, err := ix.Count()
	if err != nil {
		return err
	}
	if n == len(ids) {
		c.stamp(mtime)
		return nil
	}
	indexed, err := ix.List(sessions.Filter{})
	if err != nil {
		return err
	}
	have := make(map[string]bool, len(indexed))
	for _, s := range indexed {
		have[s.ID] = true
	}
	for _, id := range ids {
		if !have[id] {
			if err := c.reindexOne(ix, id); err != nil {
				return err
			}
		}
		delete(have, id)
	}
	for id := range have {
		if err := ix.DeleteSession(id); err != nil {
			return err
		}
	}
	c.stamp(mtime)
	return nil
}

// reindexOne replaces one session's documents with what the store holds,
// or removes them when the session is gone.
func (c *Catalog) reindexOne(ix *sessions.Index, id string) error {
	conv, err := c.Store.Load(id)
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalidID) {
		return ix.DeleteSession(id)
	}
	if err != nil {
		// A damaged session must not block the index of every other one.
		c.warn(fmt.Sprintf("session index: skipping %s: %v", id, err))
		return nil
	}
	return ix.ReplaceSession(doc(conv), texts(conv.Messages))
}

// Reindex rebuilds the index from the store, reporting progress, and
// returns how many sessions it holds.
func (c *Catalog) Reindex() (int, error) {
	ids, err := c.Store.IDs()
	if err != nil {
		return 0, err
	}
	indexed := 0
	// Markers are about to be covered by the rebuild.
	os.RemoveAll(c.dirtyDir())
	os.Remove(c.stampPath())
	err = sessions.Rebuild(c.IndexDir, func(yield func(sessions.Session, []string) bool) error {
		for _, id := range ids {
			conv, err := c.Store.Load(id)
			if err != nil {
				c.warn(fmt.Sprintf("session index: skipping %s: %v", id, err))
				continue
			}
			if !yield(doc(conv), texts(conv.Messages)) {
				return nil
			}
			indexed++
		}
		return nil
	}, len(ids), c.Progress)
	return indexed, err
}

func doc(conv *session.Conversation) sessions.Session {
	m := conv.Meta
	return sessions.Session{ID: m.ID, Title: deref(m.Title), Model: deref(m.Model), Provider: deref(m.Provider),
		Cwd: deref(m.Cwd), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Messages: len(conv.Messages), Parent: m.ParentID()}
}

func texts(msgs []message.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = session.SearchText(m)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
