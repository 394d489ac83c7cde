package history

import (
	"errors"
	"os"

	"github.com/openheim/openheim/index/sessions"
)

// IndexStatus is how the search index stands against the store.
type IndexStatus struct {
	Missing  bool // not built yet (the first listing builds it)
	Stale    bool // behind the store (the next listing catches up)
	Sessions int  // sessions indexed
	Changed  int  // sessions changed since they were indexed
}

// Status reports whether the index is in step with the store, without
// bringing it up to date (as listing and search do): for health checks.
func (c *Catalog) Status() (IndexStatus, error) {
	ix, err := sessions.Open(c.IndexDir, sessions.Options{ReadOnly: true, Timeout: c.timeout()})
	if errors.Is(err, sessions.ErrMissing) {
		return IndexStatus{Missing: true}, nil
	}
	if err != nil {
		return IndexStatus{}, err
	}
	defer ix.Close()
	marks, _ := os.ReadDir(c.dirtyDir())
	st := IndexStatus{Changed: len(marks)}
	if st.Stale, err = c.stale(ix); err != nil {
		return st, err
	}
	st.Sessions, err = ix.Count()
	return st, err
}
