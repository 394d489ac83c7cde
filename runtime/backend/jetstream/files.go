package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
	"github.com/openheim/openheim/runtime/storeerr"
)

// fileStore is sessionfiles.Store: records in the files bucket (key
// <session>.<file id>), contents in the blobs object store.
type fileStore struct {
	b   *Backend
	max int64
	now func() time.Time
}

var _ sessionfiles.Store = (*fileStore)(nil)

func fileNotFound(id string) error {
	return storeerr.NotFound("file %q not found in this session", id)
}

func blobName(sess, id string) string { return "file/" + sess + "/" + id }

// Put implements sessionfiles.Store: the content is stored first, the
// record last, so a record always has its content.
func (s *fileStore) Put(sess string, up sessionfiles.Upload, r io.Reader) (sessionfiles.File, error) {
	if session.ValidateID(sess) != nil {
		return sessionfiles.File{}, storeerr.Invalid("invalid session id")
	}
	name, err := sessionfiles.CleanName(up.Filename)
	if err != nil {
		return sessionfiles.File{}, err
	}
	var buf bytes.Buffer
	src := &readErr{r: r}
	n, err := io.Copy(&buf, io.LimitReader(src, s.max+1))
	switch {
	case err != nil && src.err != nil:
		return sessionfiles.File{}, storeerr.Body("reading the file part", src.err)
	case err != nil:
		return sessionfiles.File{}, err
	case n > s.max:
		return sessionfiles.File{}, storeerr.TooLarge("file is over %d bytes", s.max)
	}
	head := buf.Bytes()[:min(buf.Len(), 512)]
	f := sessionfiles.File{ID: ids.New(sessionfiles.IDPrefix), Object: "session.resource", Type: "file",
		SessionID: up.SessionID, Name: name, Metadata: sessionfiles.Meta{Filename: name, Bytes: n,
			CreatedAt: s.now().Unix(), ContentType: sessionfiles.ContentType(up.ContentType, name, head)}}
	rec, err := json.Marshal(f)
	if err != nil {
		return sessionfiles.File{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*opTimeout)
	defer cancel()
	if err := s.b.putBlob(ctx, blobName(sess, f.ID), buf.Bytes()); err != nil {
		return sessionfiles.File{}, fmt.Errorf("storing the file: %w", err)
	}
	if _, err := s.b.files.Put(ctx, sess+"."+f.ID, rec); err != nil {
		s.b.blobs.Delete(ctx, blobName(sess, f.ID))
		return sessionfiles.File{}, err
	}
	return f, nil
}

type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// List implements sessionfiles.Store.
func (s *fileStore) List(sess string) ([]sessionfiles.File, error) {
	if session.ValidateID(sess) != nil {
		return nil, storeerr.Invalid("invalid session id")
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	lister, err := s.b.files.ListKeysFiltered(ctx, sess+".*")
	if err != nil {
		return nil, err
	}
	out := []sessionfiles.File{}
	seen := map[string]bool{} // a busy bucket may list a key twice
	for key := range lister.Keys() {
		_, id, _ := strings.Cut(key, ".")
		if seen[id] {
			continue
		}
		seen[id] = true
		if f, err := s.Get(sess, id); err == nil {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Metadata.CreatedAt, out[j].Metadata.CreatedAt
		return a < b || (a == b && out[i].ID < out[j].ID)
	})
	return out, nil
}

// Get implements sessionfiles.Store.
func (s *fileStore) Get(sess, id string) (sessionfiles.File, error) {
	if session.ValidateID(sess) != nil || !sessionfiles.ValidID(id) {
		return sessionfiles.File{}, fileNotFound(id)
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	e, err := s.b.files.Get(ctx, sess+"."+id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return sessionfiles.File{}, fileNotFound(id)
	}
	if err != nil {
		return sessionfiles.File{}, err
	}
	var f sessionfiles.File
	if err := json.Unmarshal(e.Value(), &f); err != nil {
		return sessionfiles.File{}, fmt.Errorf("file %s: corrupt record: %w", id, err)
	}
	return f, nil
}

// Open implements sessionfiles.Store: the content is read whole (files are
// bounded by the store's limit).
func (s *fileStore) Open(sess, id string) (sessionfiles.File, io.ReadSeekCloser, error) {
	f, err := s.Get(sess, id)
	if err != nil {
		return f, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*opTimeout)
	defer cancel()
	data, err := s.b.blobs.GetBytes(ctx, blobName(sess, id))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return f, nil, fileNotFound(id)
	}
	if err != nil {
		return f, nil, err
	}
	return f, nopCloser{bytes.NewReader(data)}, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// Remove implements sessionfiles.Store: the record goes first, so the
// file is gone at once.
func (s *fileStore) Remove(sess, id string) error {
	if _, err := s.Get(sess, id); err != nil {
		return err
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	if err := s.b.files.Purge(ctx, sess+"."+id); err != nil {
		return err
	}
	if err := s.b.blobs.Delete(ctx, blobName(sess, id)); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		s.b.warn(fmt.Sprintf("file %s: deleting its content: %v", id, err))
	}
	return nil
}

// RemoveAll implements sessionfiles.Store.
func (s *fileStore) RemoveAll(sess string) error {
	files, err := s.List(sess)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := s.Remove(sess, f.ID); err != nil && !errors.Is(err, storeerr.ErrNotFound) {
			return err
		}
	}
	return nil
}

var _ sessionfiles.Importer = (*fileStore)(nil)

// Import implements sessionfiles.Importer.
func (s *fileStore) Import(sess string, f sessionfiles.File, content []byte) error {
	if session.ValidateID(sess) != nil || !sessionfiles.ValidID(f.ID) {
		return storeerr.Invalid("invalid session or file id")
	}
	rec, err := json.Marshal(f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*opTimeout)
	defer cancel()
	if err := s.b.putBlob(ctx, blobName(sess, f.ID), content); err != nil {
		return err
	}
	_, err = s.b.files.Put(ctx, sess+"."+f.ID, rec)
	return err
}
