package sessions

import (
	"errors"
	"fmt"

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
	bt := bleveindex.NewBatcher(x, rebuildBatch)
	done := 0
	var ierr error
	serr := sessions(func(s Session, texts []string) bool {
		if s.ID == "" {
			ierr = errors.New("sessions index: rebuild: session with empty id")
			return false
		}
		if ierr = indexSession(bt.Batch(), s, texts); ierr != nil {
			return false
		}
		if ierr = bt.FlushFull(); ierr != nil {
			return false
		}
		done++
		if progress != nil {
			progress(done, total)
		}
		return true
	})
	switch {
	case ierr != nil:
		return ierr
	case serr != nil:
		return fmt.Errorf("sessions index: rebuild: reading sessions: %w", serr)
	}
	return bt.Flush()
}
