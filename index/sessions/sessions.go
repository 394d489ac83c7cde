// Package sessions is the bleve full-text index of openheim's stored
// conversations: what `sessions ls` lists and `sessions search` searches.
//
// It is derived data (DESIGN.md §4): the session stores stay the source of
// truth, and Rebuild recreates the index from them at any time. Callers must
// treat ErrMissing, ErrStale and ErrBusy as "use the stores instead".
//
// Locking: scorch keeps a bolt file that one process holds exclusively while
// it has the index open for writing, or several processes hold shared while
// they have it open ReadOnly. Open waits up to Options.Timeout for the other
// side to close, then fails with ErrBusy rather than hanging.
package sessions

import (
	"errors"
	"sync"
	"time"

	"github.com/openheim/openheim/index/bleveindex"
)

// Session is one conversation as `sessions ls` shows it.
type Session struct {
	ID, Title, Model, Provider, Cwd string
	CreatedAt, UpdatedAt            time.Time
	Messages                        int
	// Parent is the session whose turn started this one (a subagent's
	// run), "" for a session of its own.
	Parent string
}

// Filter narrows List. Zero values mean "no restriction".
type Filter struct {
	Cwd   string    // exact working directory
	Since time.Time // UpdatedAt >= Since
	Limit int       // 0 = all
}

// Hit is one session found by Search, with its best-matching message.
type Hit struct {
	SessionID string
	Message   int // 0-based index of the matching message, -1 when the title matched
	Score     float64
}

// Options tune Open (ReadOnly, Timeout).
type Options = bleveindex.Options

// DefaultTimeout is how long Open waits for a busy index by default.
const DefaultTimeout = bleveindex.DefaultTimeout

var (
	// ErrMissing: there is no index at dir (only returned when ReadOnly).
	ErrMissing = bleveindex.ErrMissing
	// ErrBusy: another process (or another Open in this one) holds the index
	// in a conflicting mode and did not let go within Options.Timeout.
	ErrBusy = bleveindex.ErrBusy
	// ErrStale: the index was written with another schema; Rebuild it.
	ErrStale = bleveindex.ErrStale
	// ErrReadOnly: a write on an index opened ReadOnly. Checked by us because
	// scorch would accept the batch in memory and silently never persist it.
	ErrReadOnly = errors.New("sessions index: opened read-only")
)

// Index is an open sessions index. Its methods are safe for concurrent use.
type Index struct {
	b *bleveindex.Handle
	// wmu serialises writers, so DeleteSession/ReplaceSession's
	// find-then-delete cannot interleave with an AddMessages of this process.
	wmu sync.Mutex
}

// Open opens the index at dir, creating it when missing unless ReadOnly.
func Open(dir string, opts Options) (*Index, error) {
	b, err := bleveindex.OpenHandle(dir, opts, schema, "sessions index")
	if err != nil {
		return nil, err
	}
	return &Index{b: b}, nil
}

// schema stamps the indexes this version builds.
var schema = bleveindex.Schema{Mapping: newMapping, Key: schemaKey, Version: schemaVersion}

// Close releases the index and its lock. Closing twice is harmless.
func (x *Index) Close() error { return x.b.Close() }
