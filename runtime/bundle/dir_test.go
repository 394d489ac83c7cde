package bundle

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	bt "github.com/openheim/openheim/runtime/bundle/bundletest"
	"github.com/openheim/openheim/runtime/storeerr"
)

func newAgent(t *testing.T, cfg string, at int64) (Agent, []byte) {
	t.Helper()
	data := bt.Config(cfg)
	ag, err := New(data, testMax, time.Unix(at, 0))
	if err != nil {
		t.Fatal(err)
	}
	return ag, data
}

func TestDirPutGetListRemove(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, bData := newAgent(t, "name: b\n", 20)
	a, aData := newAgent(t, fullConfig, 10)
	for _, p := range []struct {
		ag   Agent
		data []byte
	}{{b, bData}, {a, aData}} {
		if err := d.Put(p.ag, p.data); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := os.ReadFile(filepath.Join(dir, a.ID, bundleFile))
	if err != nil || !bytes.Equal(stored, aData) {
		t.Errorf("stored bundle: %v", err)
	}
	if got, err := d.Get(a.ID); err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("get = %+v %v", got, err)
	}
	got, _ := d.Get(a.ID)
	got.Tools[0] = "changed"
	if again, _ := d.Get(a.ID); again.Tools[0] != "read_file" {
		t.Error("Get shares its slices with the store")
	}
	if err := d.Put(Agent{ID: "ag_000000000000000000000000", Name: "b"}, nil); !errors.Is(err, storeerr.ErrConflict) ||
		err.Error() != `an agent named "b" exists (id `+b.ID+")" {
		t.Errorf("same name: %v", err)
	}

	// Another store over the same directory has them, in order.
	d2, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := d2.List(); err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], a) || !reflect.DeepEqual(list[1], b) {
		t.Errorf("list after reopen = %+v %v", list, err)
	}
	if err := d2.Remove(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, a.ID)); !os.IsNotExist(err) {
		t.Errorf("files left: %v", err)
	}
	for _, err := range []error{d2.Remove(a.ID), func() error { _, err := d2.Get(a.ID); return err }()} {
		if !errors.Is(err, storeerr.ErrNotFound) {
			t.Errorf("after remove: %v", err)
		}
	}
	if err := d2.Put(a, aData); err != nil {
		t.Errorf("the name is not free again: %v", err)
	}
}

func TestDirConcurrentSameName(t *testing.T) {
	dir := t.TempDir()
	d, _ := OpenDir(dir)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ag, data := newAgent(t, "name: racer\n", 1)
			errs[i] = d.Put(ag, data)
		})
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, storeerr.ErrConflict):
			t.Errorf("unexpected: %v", err)
		}
	}
	if entries, _ := os.ReadDir(dir); created != 1 || len(entries) != 1 {
		t.Errorf("%d puts stored the agent, %d directories", created, len(entries))
	}
}

func TestDirSkipsUnreadable(t *testing.T) {
	dir := t.TempDir()
	d, _ := OpenDir(dir)
	ok, data := newAgent(t, "name: fine\n", 1)
	if err := d.Put(ok, data); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "ag_0123456789abcdef01234567")
	os.MkdirAll(bad, 0o700)
	os.WriteFile(filepath.Join(bad, agentFile), []byte("{not json"), 0o600)
	os.MkdirAll(filepath.Join(dir, "ag_fedcba9876543210fedcba98"), 0o700) // cut short: no agent.json
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := d.List(); len(all) != 1 || all[0].ID != ok.ID {
		t.Errorf("agents after reopen: %+v", all)
	}
}

// TestDirSessionScopedAgents: a session-scoped agent claims no name (the
// same bundle starts several sessions, beside an agent of its own of that
// name), keeps its kind across a reopen, and hands back its bundle.
func TestDirSessionScopedAgents(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	own, data := newAgent(t, "name: r\n", 10)
	if err := d.Put(own, data); err != nil {
		t.Fatal(err)
	}
	var scoped []Agent
	for range 2 {
		ag, _ := newAgent(t, "name: r\n", 20)
		ag.Kind = KindSession
		if err := d.Put(ag, data); err != nil {
			t.Fatalf("a session-scoped agent named like another: %v", err)
		}
		scoped = append(scoped, ag)
	}
	if err := d.Put(Agent{ID: "ag_000000000000000000000001", Name: "r"}, data); !errors.Is(err, storeerr.ErrConflict) {
		t.Errorf("an agent of its own still needs a free name: %v", err)
	}
	d2, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d2.Get(scoped[1].ID); err != nil || got.Kind != KindSession {
		t.Errorf("after reopen: %+v %v", got, err)
	}
	if b, err := d2.Bundle(scoped[0].ID); err != nil || !bytes.Equal(b, data) {
		t.Errorf("bundle: %v", err)
	}
	if _, err := d2.Bundle("ag_nope"); !errors.Is(err, storeerr.ErrNotFound) {
		t.Errorf("bundle of an unknown agent: %v", err)
	}
}
