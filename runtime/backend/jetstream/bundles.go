package jetstream

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/storeerr"
)

// bundleStore is bundle.Store: agents in the agents bucket (key: the id),
// each name claimed by a key of its own (name_<hex>, created only if
// absent: two replicas uploading one name at once get one agent), the
// bundles in the blobs object store.
type bundleStore struct{ b *Backend }

var _ bundle.Store = (*bundleStore)(nil)

func nameKey(name string) string { return "name_" + hex.EncodeToString([]byte(name)) }

func agentNotFound(id string) error { return storeerr.NotFound("agent %q not found", id) }

// Put implements bundle.Store.
func (s *bundleStore) Put(ag bundle.Agent, data []byte) error {
	rec, err := json.Marshal(ag)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*opTimeout)
	defer cancel()
	if _, err := s.b.agents.Create(ctx, nameKey(ag.Name), []byte(ag.ID)); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		if e, gerr := s.b.agents.Get(ctx, nameKey(ag.Name)); gerr == nil {
			return bundle.NameTaken(ag.Name, string(e.Value()))
		}
		return storeerr.Conflict("an agent named %q is being uploaded", ag.Name)
	}
	err = s.b.putBlob(ctx, "bundle/"+ag.ID, data)
	if err == nil {
		_, err = s.b.agents.Put(ctx, ag.ID, rec)
	}
	if err != nil {
		s.b.agents.Purge(ctx, nameKey(ag.Name))
		s.b.blobs.Delete(ctx, "bundle/"+ag.ID)
		return fmt.Errorf("storing agent %s: %w", ag.Name, err)
	}
	return nil
}

// List implements bundle.Store.
func (s *bundleStore) List() ([]bundle.Agent, error) {
	ctx, cancel := s.b.ctx()
	defer cancel()
	var out []bundle.Agent
	err := s.b.eachValue(ctx, s.b.agents, func(key string, v []byte) {
		if strings.HasPrefix(key, "name_") {
			return
		}
		var ag bundle.Agent
		if json.Unmarshal(v, &ag) == nil {
			out = append(out, ag)
		}
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].CreatedAt, out[j].CreatedAt
		return a < b || (a == b && out[i].ID < out[j].ID)
	})
	return out, err
}

// Get implements bundle.Store.
func (s *bundleStore) Get(id string) (bundle.Agent, error) {
	if !strings.HasPrefix(id, bundle.IDPrefix) || kvKey(id) != id {
		return bundle.Agent{}, agentNotFound(id)
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	e, err := s.b.agents.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return bundle.Agent{}, agentNotFound(id)
	}
	if err != nil {
		return bundle.Agent{}, err
	}
	var ag bundle.Agent
	if err := json.Unmarshal(e.Value(), &ag); err != nil {
		return bundle.Agent{}, fmt.Errorf("agent %s: corrupt record: %w", id, err)
	}
	return ag, nil
}

// Remove implements bundle.Store: the record first (the agent is gone
// once it answers), then its name and its bundle.
func (s *bundleStore) Remove(id string) error {
	ag, err := s.Get(id)
	if err != nil {
		return err
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	if err := s.b.agents.Purge(ctx, id); err != nil {
		return err
	}
	if err := s.b.agents.Purge(ctx, nameKey(ag.Name)); err != nil {
		s.b.warn(fmt.Sprintf("agent %s: freeing its name: %v", id, err))
	}
	if err := s.b.blobs.Delete(ctx, "bundle/"+id); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		s.b.warn(fmt.Sprintf("agent %s: deleting its bundle: %v", id, err))
	}
	return nil
}

// Bundle implements bundle.Store.
func (s *bundleStore) Bundle(id string) ([]byte, error) {
	if _, err := s.Get(id); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*opTimeout)
	defer cancel()
	return s.b.blobs.GetBytes(ctx, "bundle/"+id)
}
