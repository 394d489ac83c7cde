package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The listing cache (index/sessions.recent) holds the newest sessions as
// the last listing read them from the index, with the state it read them
// in: the history directory's version (sessions created, trashed or
// purged change it), the index's bolt file (every write to the index
// rewrites it) and no re-indexing pending (no dirty marker). While that
// state holds, `sessions ls` answers from it without opening bleve, which
// is most of what a listing costs. It is derived data: written without
// fsync, ignored when it does not decode or its state differs.
type recentCache struct {
	State string    `json:"state"`
	All   bool      `json:"all"` // Rows is every session, not only the newest
	Rows  []Session `json:"rows"`
}

func (c *Catalog) recentPath() string { return c.IndexDir + ".recent" }

// listState describes the store and the index as a listing depends on
// them, "" when it cannot be told (a cluster's store, markers pending, no
// index).
func (c *Catalog) listState() string {
	if c.CatchUp != nil {
		return "" // other replicas' writes leave no trace here
	}
	if marks, _ := os.ReadDir(c.dirtyDir()); len(marks) > 0 {
		for _, m := range marks {
			if !strings.HasPrefix(m.Name(), ".") {
				return ""
			}
		}
	}
	v := c.Store.Version()
	fi, err := os.Stat(filepath.Join(c.IndexDir, "store", "root.bolt"))
	if v == "" || err != nil {
		return ""
	}
	return fmt.Sprintf("%s/%d/%d", v, fi.ModTime().UnixNano(), fi.Size())
}

// cachedList answers f from the cache when it is in step and holds the
// answer: the newest f.Limit sessions, filtered, or every session.
func (c *Catalog) cachedList(f Filter, state string) ([]Session, bool) {
	if state == "" {
		return nil, false
	}
	data, err := os.ReadFile(c.recentPath())
	if err != nil {
		return nil, false
	}
	var rc recentCache
	if json.Unmarshal(data, &rc) != nil || rc.State != state {
		return nil, false
	}
	out := []Session{}
	for _, s := range rc.Rows {
		if (f.Cwd != "" && s.Cwd != f.Cwd) || (!f.Since.IsZero() && s.UpdatedAt.Before(f.Since)) {
			continue
		}
		if f.Limit > 0 && len(out) == f.Limit {
			return out, true
		}
		out = append(out, s)
	}
	// Ran out of rows: right only if they were all of them, or every row
	// passed the filter and the limit was reached exactly.
	return out, rc.All || (f.Limit > 0 && len(out) == f.Limit)
}

// remember stores list, the answer to f read from the index in state.
// Only unfiltered listings are worth keeping: the newest sessions answer
// the common `sessions ls` and, filtered, often others.
func (c *Catalog) remember(f Filter, list []Session, state string) {
	if state == "" || f.Cwd != "" || !f.Since.IsZero() {
		return
	}
	rows := list
	if f.Limit == 0 && len(rows) > recentMax {
		rows = rows[:recentMax]
	}
	data, err := json.Marshal(recentCache{State: state, All: len(rows) == len(list) && (f.Limit == 0 || len(list) < f.Limit), Rows: rows})
	if err != nil {
		return
	}
	// A temp file of its own: listings run concurrently in a server.
	tf, err := os.CreateTemp(filepath.Dir(c.recentPath()), filepath.Base(c.recentPath())+".tmp-*")
	if err != nil {
		return
	}
	_, err = tf.Write(data)
	if cerr := tf.Close(); err != nil || cerr != nil || os.Rename(tf.Name(), c.recentPath()) != nil {
		os.Remove(tf.Name())
	}
}

// recentMax bounds the cache: what `sessions ls --limit 0` reads back must
// stay cheaper than asking the index.
const recentMax = 500
