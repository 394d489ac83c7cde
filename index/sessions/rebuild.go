package sessions

import (
	"errors"

	"github.com/blevesearch/bleve/v2"
	"github.com/openheim/openheim/index/bleveindex"
)

// rebuildBatch is how many documents Rebuild hands bleve at once: large
// enough to amortise each batch's segment build and fsync, small enough to
// keep memory flat (FIELD-NOTES: batches for bulk).
const rebuildBatch = 500

// Rebuild builds a fresh index of everything sessions yields beside dir,
// then swaps it in (bleveindex.Rebuild), so a reader opens either the old
// index or the complete new one. progress (may be nil) is called after each
// session with the count so far and total. ErrBusy, leaving dir untouched,
// when another process holds the current index for writing.
func Rebuild(dir string, sessions func(yield func(s Session, texts []string) bool) error, total int, progress func(done, total int)) error {
	return bleveindex.Rebuild(dir, DefaultTimeout, schema, "sessions index", func(x bleve.Index) error {
		return build(x, sessions, total, progress)
	})
}

func build(x bleve.Index, sessions func(yield func(s Session, texts []string) bool) error, total int, progress func(done, total int)) error {
	type entry struct {
		s     Session
		texts []string
	}
	each := func(yield func(entry) bool) error {
		return sessions(func(s Session, texts []string) bool { return yield(entry{s, texts}) })
	}
	bt := bleveindex.NewBatcher(x, rebuildBatch)
	err := bleveindex.Feed(each, func(e entry) error {
		if e.s.ID == "" {
			return errors.New("sessions index: rebuild: session with empty id")
		}
		if err := indexSession(bt.Batch(), e.s, e.texts); err != nil {
			return err
		}
		return bt.FlushFull()
	}, total, progress, "sessions index: rebuild: reading sessions")
	if err != nil {
		return err
	}
	return bt.Flush()
}
