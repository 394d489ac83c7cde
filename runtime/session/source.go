package session

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/openheim/openheim/runtime/message"
)

// Source is a Store that can also serve a search index: the ids of every
// live session, one message of a session, and a version that changes
// whenever the set of sessions may have changed. The FileStore is one; a
// cluster's store is another.
type Source interface {
	Store
	// LoadMessage returns message n (0-based) of a session.
	LoadMessage(id string, n int) (message.Message, error)
	// IDs returns every live session's id, sorted.
	IDs() ([]string, error)
	// Version is "" when unknown; two equal non-empty versions mean no
	// session was created, trashed or purged in between.
	Version() string
}

var _ Source = (*FileStore)(nil)

// IDs implements Source: the sessions whose meta is in Dir.
func (s *FileStore) IDs() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	var ids []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && ValidateID(id) == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Version implements Source: the history dir's mtime, which every session
// created, trashed or purged changes.
func (s *FileStore) Version() string {
	st, err := os.Stat(s.Dir)
	if err != nil {
		return ""
	}
	return fmt.Sprint(st.ModTime().UnixNano())
}
