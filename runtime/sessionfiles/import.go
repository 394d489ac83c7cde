package sessionfiles

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/openheim/openheim/runtime/storeerr"
)

// Importer is a Store that can take a file as another store kept it, id
// and all (moving a deployment between stores keeps every reference).
type Importer interface {
	Import(session string, f File, content []byte) error
}

var _ Importer = (*Dir)(nil)

// ValidID reports whether id is a file id a store may have given.
func ValidID(id string) bool {
	rest, ok := strings.CutPrefix(id, IDPrefix)
	return ok && rest != "" && !strings.ContainsAny(rest, "./\\*> ")
}

// Import implements Importer: the content first, the record last, as Put.
func (s *Dir) Import(sessionUUID string, f File, content []byte) error {
	dir, err := sessionDir(sessionUUID)
	if err != nil {
		return err
	}
	if !ValidID(f.ID) {
		return storeerr.Invalid("invalid file id %q", f.ID)
	}
	meta, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := s.root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.root.WriteFile(filepath.Join(dir, f.ID+".bin"), content); err != nil {
		return err
	}
	return s.root.WriteFile(filepath.Join(dir, f.ID+".json"), meta)
}
