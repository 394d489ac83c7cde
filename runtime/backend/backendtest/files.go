package backendtest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/bundle/bundletest"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
	"github.com/openheim/openheim/runtime/storeerr"
)

func testFiles(t *testing.T, h Harness) {
	first, peer := h.Open(t)
	fs1, err := first.Files(2<<20, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	fs2, err := peer.Files(2<<20, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	sid := session.NewMeta(time.Now()).ID
	content := bytes.Repeat([]byte("x"), 1<<20+17) // past NATS's default max_payload
	f, err := fs1.Put(sid, sessionfiles.Upload{SessionID: "conv_" + sid, Filename: "dir/a.txt"}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "a.txt" || f.Metadata.Bytes != int64(len(content)) || !strings.HasPrefix(f.ID, sessionfiles.IDPrefix) {
		t.Fatalf("file %+v", f)
	}
	g, err := fs1.Put(sid, sessionfiles.Upload{SessionID: "conv_" + sid, Filename: "b.md"}, strings.NewReader("# b"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := fs2.List(sid)
	if err != nil || len(list) != 2 {
		t.Fatalf("peer list %+v %v", list, err)
	}
	got, rc, err := fs2.Open(sid, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if got.ID != f.ID || !bytes.Equal(data, content) {
		t.Fatalf("peer read %d bytes of %+v", len(data), got)
	}
	if _, err := fs1.Put(sid, sessionfiles.Upload{Filename: "huge"}, bytes.NewReader(make([]byte, 2<<20+1))); !errors.Is(err, storeerr.ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := fs2.Get(sid, "file_000000000000000000000000"); !errors.Is(err, storeerr.ErrNotFound) {
		t.Fatalf("unknown file: %v", err)
	}
	if err := fs2.Remove(sid, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := fs1.Get(sid, f.ID); !errors.Is(err, storeerr.ErrNotFound) {
		t.Fatalf("removed file: %v", err)
	}
	if err := fs1.RemoveAll(sid); err != nil {
		t.Fatal(err)
	}
	if _, err := fs2.Get(sid, g.ID); !errors.Is(err, storeerr.ErrNotFound) {
		t.Fatalf("file after RemoveAll: %v", err)
	}
}

func testBundles(t *testing.T, h Harness) {
	first, peer := h.Open(t)
	b1, err := first.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	data := bundletest.Config("name: helper\ninstructions: be brief\n")
	ag, err := bundle.New(data, 1<<20, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := b1.Put(ag, data); err != nil {
		t.Fatal(err)
	}
	dup, _ := bundle.New(data, 1<<20, time.Now())
	if err := b1.Put(dup, data); !errors.Is(err, storeerr.ErrConflict) {
		t.Fatalf("a second agent of the same name: %v", err)
	}
	b2, err := peer.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b2.Get(ag.ID); err != nil || got.Name != "helper" || got.Instructions != "be brief" {
		t.Fatalf("peer get %+v %v", got, err)
	}
	if list, err := b2.List(); err != nil || len(list) != 1 || list[0].ID != ag.ID {
		t.Fatalf("peer list %+v %v", list, err)
	}
	if err := b2.Remove(ag.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Get(ag.ID); !errors.Is(err, storeerr.ErrNotFound) {
		t.Fatalf("removed agent: %v", err)
	}
	if err := b2.Remove(ag.ID); !errors.Is(err, storeerr.ErrNotFound) {
		t.Fatalf("removing twice: %v", err)
	}
	// The name is free again.
	again, _ := bundle.New(data, 1<<20, time.Now())
	if err := b2.Put(again, data); err != nil {
		t.Fatalf("re-using a removed agent's name: %v", err)
	}
}

func testDocs(t *testing.T, h Harness) {
	first, peer := h.Open(t)
	d1, err := first.Docs("settings")
	if err != nil {
		t.Fatal(err)
	}
	d2, err := peer.Docs("settings")
	if err != nil {
		t.Fatal(err)
	}
	if _, found, err := d1.Get("k1"); found || err != nil {
		t.Fatalf("missing key: %v %v", found, err)
	}
	if err := d1.Put("k1", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := d1.Put("k2", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if data, found, err := d2.Get("k1"); !found || err != nil || string(data) != `{"a":1}` {
		t.Fatalf("peer get %s %v %v", data, found, err)
	}
	if keys, err := d2.Keys(); err != nil || len(keys) != 2 || keys[0] != "k1" {
		t.Fatalf("keys %v %v", keys, err)
	}
	if err := d2.Delete("k1"); err != nil {
		t.Fatal(err)
	}
	if err := d2.Delete("k1"); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if _, found, _ := d1.Get("k1"); found {
		t.Fatal("deleted key found")
	}
	if err := d1.Put("../x", nil); !errors.Is(err, storeerr.ErrInvalid) {
		t.Fatalf("bad key: %v", err)
	}
}
