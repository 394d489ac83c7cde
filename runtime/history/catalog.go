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
	// ListBudget and SearchBudget bound how long List and Search spend
	// indexing sessions the index lags behind on (DefaultListBudget,
	// DefaultSearchBudget when zero); the rest wait for the next reader.
	ListBudget, SearchBudget time.Duration
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

// open returns the index brought up to date with the store as far as
// budget allows (created when missing, dirty sessions re-indexed, sessions
// that appeared behind openheim's back added in batches), and the ids of
// the sessions it does not answer for yet: the store's are authoritative
// for those until a later reader (or `sessions reindex`) catches up.
func (c *Catalog) open(budget time.Duration) (*sessions.Index, []string, error) {
	if c.CatchUp != nil {
		if err := c.CatchUp(c.MarkDirty); err != nil {
			c.warn(fmt.Sprintf("session index: catching up with the cluster: %v (results may be behind)", err))
		}
	}
	deadline := time.Now().Add(budget)
	ix, err := sessions.Open(c.IndexDir, sessions.Options{ReadOnly: true, Timeout: c.timeout()})
	stale := errors.Is(err, sessions.ErrMissing)
	if err == nil {
		// Re-open for writing only when there is something to bring in.
		s, serr := c.stale(ix)
		if stale = serr != nil || s; stale {
			ix.Close()
		}
	}
	if !stale {
		return ix, nil, err
	}
	ix, err = sessions.Open(c.IndexDir, sessions.Options{Timeout: c.timeout()})
	if errors.Is(err, sessions.ErrStale) {
		// Written by another schema: rebuild it (the one blocking case).
		if _, err = c.Reindex(); err == nil {
			ix, err = sessions.Open(c.IndexDir, sessions.Options{Timeout: c.timeout()})
		}
	}
	if err != nil {
		return nil, nil, err
	}
	// Whatever the listing cache holds is about to be out of date, on
	// filesystems whose timestamps would not tell too.
	os.Remove(c.recentPath())
	pending, err := c.sync(ix, deadline)
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	return ix, pending, nil
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

// sync re-indexes dirty sessions and reconciles the session sets until
// deadline, and returns the sessions left for later.
func (c *Catalog) sync(ix *sessions.Index, deadline time.Time) ([]string, error) {
	marks, _ := os.ReadDir(c.dirtyDir())
	var pending []string
	for _, m := range marks {
		if strings.HasPrefix(m.Name(), ".") {
			continue
		}
		if time.Now().After(deadline) {
			pending = append(pending, m.Name())
			continue
		}
		// Claim the marker before reading the store: a writer that appends
		// meanwhile creates a fresh marker, so its change is not lost.
		claimed := filepath.Join(c.dirtyDir(), "."+m.Name()+".claimed")
		if os.Rename(filepath.Join(c.dirtyDir(), m.Name()), claimed) != nil {
			continue
		}
		if err := c.reindexOne(ix, m.Name()); err != nil {
			os.Rename(claimed, filepath.Join(c.dirtyDir(), m.Name()))
			return nil, err
		}
		os.Remove(claimed)
	}
	// The mtime is taken before reading the ids: a session created
	// meanwhile changes it again, so the next reader looks once more.
	mtime := c.Store.Version()
	ids, err := c.Store.IDs()
	if err != nil {
		return nil, err
	}
	n, err := ix.Count()
	if err != nil {
		return nil, err
	}
	if n == len(ids) {
		c.stamp(mtime)
		return pending, nil
	}
	missing, err := c.reconcile(ix, ids)
	if err != nil {
		return nil, err
	}
	left, err := c.addMissing(ix, missing, deadline)
	if err != nil {
		return nil, err
	}
	if len(left) == 0 {
		c.stamp(mtime)
	}
	return append(pending, left...), nil
}

// reconcile drops from the index the sessions the store no longer has and
// returns the store's sessions the index lacks.
func (c *Catalog) reconcile(ix *sessions.Index, ids []string) ([]string, error) {
	indexed, err := ix.List(sessions.Filter{})
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(indexed))
	for _, s := range indexed {
		have[s.ID] = true
	}
	var missing []string
	for _, id := range ids {
		if !have[id] {
			missing = append(missing, id)
		}
		delete(have, id)
	}
	for id := range have {
		if err := ix.DeleteSession(id); err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// A reader indexes new sessions in batches: each builds a segment, so
// fewer, larger batches are cheaper, but one batch must fit the reader's
// budget. The first has firstCatchUp sessions (a reader always makes that
// much progress); the next are sized from the time per session measured
// so far to fit what is left of the budget, up to maxCatchUp.
const (
	firstCatchUp = 25
	maxCatchUp   = 500
)

// addMissing indexes ids (sessions not in the index) until deadline and
// returns the ones left.
func (c *Catalog) addMissing(ix *sessions.Index, ids []string, deadline time.Time) ([]string, error) {
	var spent time.Duration
	done := 0
	for k := firstCatchUp; len(ids) > 0 && k > 0; {
		k = min(k, len(ids))
		start := time.Now()
		entries := make([]sessions.Entry, 0, k)
		for _, id := range ids[:k] {
			conv, err := c.Store.Load(id)
			if err != nil {
				// Gone meanwhile, or damaged: the latter must not block the
				// index of every other session.
				if !errors.Is(err, session.ErrNotFound) {
					c.warn(fmt.Sprintf("session index: skipping %s: %v", id, err))
				}
				continue
			}
			entries = append(entries, sessions.Entry{Session: doc(conv), Texts: texts(conv.Messages)})
		}
		if err := ix.AddNew(entries); err != nil {
			return nil, err
		}
		ids = ids[k:]
		spent += time.Since(start)
		done += k
		per := spent / time.Duration(done)
		k = min(int(time.Until(deadline)/max(per, time.Microsecond)), maxCatchUp)
	}
	return ids, nil
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
	os.Remove(c.recentPath())
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
