package memory

import (
	"fmt"
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/openheim/openheim/index/bleveindex"
)

// rebuildBatch is how many notes Rebuild hands bleve at once (FIELD-NOTES:
// batches for bulk loads). Measured on 100,000 notes: 250 per batch built
// in 4.5 s, 1,000 in 3.4 s, 5,000 in 2.9 s; 1,000 keeps memory flat.
const rebuildBatch = 1000

// Rebuild builds a fresh index of every note docs yields, stamped with seq,
// beside dir, then swaps it in (bleveindex.Rebuild), so a reader opens
// either the old index or the complete new one. progress (may be nil) is
// called after each note with the count so far and total. ErrBusy, leaving
// dir untouched, when another process holds the current index for writing.
func Rebuild(dir string, docs func(yield func(Doc) bool) error, total int, seq int64, progress func(done, total int)) error {
	return bleveindex.Rebuild(dir, DefaultTimeout, schema, "memory index", func(x bleve.Index) error {
		return build(x, docs, total, seq, progress)
	})
}

func build(x bleve.Index, docs func(yield func(Doc) bool) error, total int, seq int64, progress func(done, total int)) error {
	bt := bleveindex.NewBatcher(x, rebuildBatch)
	err := bleveindex.Feed(docs, func(d Doc) error {
		if d.ID <= 0 {
			return fmt.Errorf("memory index: rebuild: note id %d", d.ID)
		}
		return bt.Index(docID(d.ID), document(d))
	}, total, progress, "memory index: rebuild: reading notes")
	if err != nil {
		return err
	}
	// The stamp rides with the last batch; an index without it (a crash
	// before this point never gets swapped in anyway) would read as Seq 0.
	bt.Batch().SetInternal(seqKey, []byte(strconv.FormatInt(seq, 10)))
	return bt.Flush()
}
