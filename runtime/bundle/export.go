package bundle

import (
	"os"
	"path/filepath"

	"github.com/openheim/openheim/runtime/storeerr"
)

// Exporter is a Store that hands back an agent's bundle as uploaded
// (moving a deployment between stores).
type Exporter interface {
	Bundle(id string) ([]byte, error)
}

var _ Exporter = (*Dir)(nil)

// Bundle implements Exporter.
func (d *Dir) Bundle(id string) ([]byte, error) {
	if _, err := d.Get(id); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(d.dir, id, bundleFile))
	if os.IsNotExist(err) {
		return nil, storeerr.NotFound("agent %q has no bundle", id)
	}
	return data, err
}
