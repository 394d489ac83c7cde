package sessions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// PutSession inserts or replaces the session document (not its messages).
func (x *Index) PutSession(s Session) error {
	if err := x.writable(s.ID); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	return x.b.Index(sessionDocID(s.ID), sessionDoc(s))
}

// AddMessages indexes texts as messages first..first+len(texts)-1 of the
// session, replacing any already indexed under those numbers, in one batch.
// A blank text removes that message from the index: there is nothing in it
// to find, and it may be replacing text that was there before.
func (x *Index) AddMessages(sessionID string, first int, texts []string) error {
	if err := x.writable(sessionID); err != nil {
		return err
	}
	if first < 0 {
		return fmt.Errorf("sessions index: negative message number %d", first)
	}
	if len(texts) == 0 {
		return nil
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	b := x.b.NewBatch()
	if err := addMessages(b, sessionID, first, texts); err != nil {
		return err
	}
	return x.b.Batch(b)
}

func addMessages(b *bleve.Batch, sessionID string, first int, texts []string) error {
	for i, t := range texts {
		id := messageDocID(sessionID, first+i)
		if strings.TrimSpace(t) == "" {
			b.Delete(id)
			continue
		}
		if err := b.Index(id, messageDoc(sessionID, first+i, t)); err != nil {
			return err
		}
	}
	return nil
}

// DeleteSession removes the session document and all its messages.
// Deleting an unknown session is not an error.
func (x *Index) DeleteSession(id string) error {
	if err := x.writable(id); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	b := x.b.NewBatch()
	if err := x.deleteInto(b, id); err != nil {
		return err
	}
	return x.b.Batch(b)
}

// ReplaceSession deletes everything indexed for s.ID and indexes s with the
// given message texts in one batch, so searches see either the old or the
// new session, never a mix. Resync and reindex use it.
func (x *Index) ReplaceSession(s Session, texts []string) error {
	if err := x.writable(s.ID); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	b := x.b.NewBatch()
	if err := x.deleteInto(b, s.ID); err != nil {
		return err
	}
	// Index after Delete: a batch keeps the last operation per document id,
	// so messages that still exist are replaced rather than lost.
	if err := indexSession(b, s, texts); err != nil {
		return err
	}
	return x.b.Batch(b)
}

func indexSession(b *bleve.Batch, s Session, texts []string) error {
	if err := b.Index(sessionDocID(s.ID), sessionDoc(s)); err != nil {
		return err
	}
	return addMessages(b, s.ID, 0, texts)
}

// deleteInto queues deletes for the session doc and every message doc whose
// session field is id, found page by page so a huge session cannot make one
// search allocate without bound.
func (x *Index) deleteInto(b *bleve.Batch, id string) error {
	b.Delete(sessionDocID(id))
	q := query.NewTermQuery(id)
	q.SetField("session")
	const page = 10000
	for from := 0; ; from += page {
		req := bleve.NewSearchRequestOptions(q, page, from, false)
		req.SortBy([]string{"_id"}) // stable pages while nothing is deleted yet
		req.Score = "none"
		res, err := x.b.Search(req)
		if err != nil {
			return err
		}
		for _, h := range res.Hits {
			b.Delete(h.ID)
		}
		if len(res.Hits) < page {
			return nil
		}
	}
}

func (x *Index) writable(id string) error {
	if x.b.ReadOnly {
		return ErrReadOnly
	}
	if id == "" {
		return errors.New("sessions index: empty session id")
	}
	return nil
}

// Entry is one session with the text of its messages, as AddNew takes it.
type Entry struct {
	Session Session
	Texts   []string
}

// AddNew indexes sessions that are not in the index yet (copied into
// history behind openheim's back, or created since the last catch-up) in
// one batch: no lookup of old documents, so a thousand sessions cost one
// segment build rather than a thousand. A session that was indexed after
// all gets duplicate-free documents (same ids), only a stale message past
// its new end could remain, which ReplaceSession is for.
func (x *Index) AddNew(entries []Entry) error {
	if x.b.ReadOnly {
		return ErrReadOnly
	}
	if len(entries) == 0 {
		return nil
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	b := x.b.NewBatch()
	for _, e := range entries {
		if e.Session.ID == "" {
			return errors.New("sessions index: empty session id")
		}
		if err := indexSession(b, e.Session, e.Texts); err != nil {
			return err
		}
	}
	return x.b.Batch(b)
}
