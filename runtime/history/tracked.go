package history

import (
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// Tracked is a session.Store whose every change marks the session for
// re-indexing, before the write (so a crash mid-write is caught) and after
// it (so a reader that re-indexed in between does not miss it).
type Tracked struct {
	session.Store
	Catalog *Catalog
}

func (t *Tracked) around(id string, write func() error) error {
	t.Catalog.MarkDirty(id)
	err := write()
	t.Catalog.MarkDirty(id)
	return err
}

// Create implements session.Store.
func (t *Tracked) Create(meta session.Meta) error {
	return t.around(meta.ID, func() error { return t.Store.Create(meta) })
}

// SaveMeta implements session.Store.
func (t *Tracked) SaveMeta(meta session.Meta) error {
	return t.around(meta.ID, func() error { return t.Store.SaveMeta(meta) })
}

// Append implements session.Store.
func (t *Tracked) Append(id string, msgs ...message.Message) error {
	return t.around(id, func() error { return t.Store.Append(id, msgs...) })
}

// Trash implements session.Store.
func (t *Tracked) Trash(id string) error {
	return t.around(id, func() error { return t.Store.Trash(id) })
}

// Purge implements session.Store.
func (t *Tracked) Purge(id string) error {
	return t.around(id, func() error { return t.Store.Purge(id) })
}
