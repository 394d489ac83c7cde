package bundle

import (
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/openheim/openheim/runtime/atomicfile"
	"github.com/openheim/openheim/runtime/storeerr"
)

// Dir keeps each uploaded agent in dir/<id>/: the bundle as uploaded
// (bundle.tar.gz) and the agent (agent.json), written last: a directory
// without it is an upload that never finished, not an agent. The agents
// are read once, at OpenDir, and kept in memory.
type Dir struct {
	dir string

	mu      sync.Mutex
	agents  map[string]Agent // by id
	pending map[string]bool  // names of uploads being written
}

var _ Store = (*Dir)(nil)

const (
	agentFile  = "agent.json"
	bundleFile = "bundle.tar.gz"
)

// OpenDir opens (creating) the store in dir. An agent whose agent.json
// cannot be read is skipped with a warning.
func OpenDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	d := &Dir{dir: dir, agents: map[string]Agent{}, pending: map[string]bool{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		ag, err := readAgent(filepath.Join(dir, e.Name(), agentFile))
		if err == nil && ag.ID != e.Name() {
			err = errors.New("its id is not its directory's name")
		}
		if err != nil {
			// An upload cut short by a crash has no agent.json: it never
			// answered 201, so it is not an agent.
			slog.Warn("agents: skipping an unreadable uploaded agent", "dir", filepath.Join(dir, e.Name()), "err", err)
			continue
		}
		d.agents[ag.ID] = ag
	}
	return d, nil
}

func readAgent(path string) (Agent, error) {
	var ag Agent
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &ag)
	}
	if ag.Skills == nil {
		ag.Skills = []string{}
	}
	ag.Object, ag.Source = "agent", "bundle"
	return ag, err
}

// Put implements Store. The name is claimed without holding the lock
// through the disk writes; a concurrent upload of the same name still
// finds it taken.
func (d *Dir) Put(ag Agent, bundle []byte) error {
	if ag.Kind != KindSession {
		if err := d.claim(ag.Name); err != nil {
			return err
		}
		defer func() {
			d.mu.Lock()
			delete(d.pending, ag.Name)
			d.mu.Unlock()
		}()
	}
	if err := d.write(ag, bundle); err != nil {
		return err
	}
	d.mu.Lock()
	d.agents[ag.ID] = ag.Clone()
	d.mu.Unlock()
	return nil
}

// claim marks name as being uploaded, unless an agent has it.
func (d *Dir) claim(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, b := range d.agents {
		if b.Name == name && b.Kind != KindSession {
			return NameTaken(name, b.ID)
		}
	}
	if d.pending[name] {
		return storeerr.Conflict("an agent named %q is being uploaded", name)
	}
	d.pending[name] = true
	return nil
}

// write stores the agent under dir/<id>/, agent.json last.
func (d *Dir) write(ag Agent, bundle []byte) (err error) {
	ad := filepath.Join(d.dir, ag.ID)
	if err := os.Mkdir(ad, 0o700); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(ad)
		}
	}()
	meta, err := json.MarshalIndent(ag, "", "  ")
	if err != nil {
		return err
	}
	// Each file synced; the directories once both are in place.
	w := atomicfile.Writer{Perm: 0o644, Sync: atomicfile.SyncFile}
	if err := w.Write(filepath.Join(ad, bundleFile), bundle); err != nil {
		return err
	}
	if err := w.Write(filepath.Join(ad, agentFile), meta); err != nil {
		return err
	}
	atomicfile.SyncDir(ad)
	atomicfile.SyncDir(d.dir)
	return nil
}

// List implements Store.
func (d *Dir) List() ([]Agent, error) {
	d.mu.Lock()
	out := make([]Agent, 0, len(d.agents))
	for _, ag := range d.agents {
		out = append(out, ag.Clone())
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b Agent) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Get implements Store.
func (d *Dir) Get(id string) (Agent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ag, ok := d.agents[id]
	if !ok {
		return Agent{}, storeerr.NotFound("agent %q not found", id)
	}
	return ag.Clone(), nil
}

// Bundle implements Store.
func (d *Dir) Bundle(id string) ([]byte, error) {
	if _, err := d.Get(id); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(d.dir, id, bundleFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, storeerr.NotFound("agent %q not found", id)
	}
	return data, err
}

// Remove implements Store. Removing agent.json is the commit: once it is
// gone the agent does not come back on restart, whatever becomes of the
// rest of its directory.
func (d *Dir) Remove(id string) error {
	ad := filepath.Join(d.dir, id)
	d.mu.Lock()
	if _, ok := d.agents[id]; !ok {
		d.mu.Unlock()
		return storeerr.NotFound("agent %q not found", id)
	}
	if err := os.Remove(filepath.Join(ad, agentFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.mu.Unlock()
		return err
	}
	delete(d.agents, id)
	d.mu.Unlock()
	if err := os.RemoveAll(ad); err != nil {
		slog.Warn("agents: removing a deleted agent's files", "dir", ad, "err", err)
	}
	return nil
}
