package sessionfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/storeerr"
)

// newDir is a store whose clock ticks one second per upload.
func newDir(t *testing.T, maxBytes int64) (*Dir, string) {
	t.Helper()
	dir := t.TempDir()
	var mu sync.Mutex
	clock := time.Unix(1774118382, 0)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	s, err := OpenDir(dir, maxBytes, now)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func put(t *testing.T, s *Dir, sid, name, ct, body string) File {
	t.Helper()
	f, err := s.Put(sid, Upload{SessionID: "conv_" + sid, Filename: name, ContentType: ct}, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func onDisk(dir, sid string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, sid, "*"))
	dots, _ := filepath.Glob(filepath.Join(dir, sid, ".*"))
	return append(names, dots...)
}

func TestDirRoundTrip(t *testing.T) {
	s, dir := newDir(t, 1<<20)
	sid := uuid.NewString()
	md := put(t, s, sid, `C:\notes\notes.md`, "text/markdown; charset=utf-8", "# Notes\n")
	png := put(t, s, sid, "pixel", "application/octet-stream", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	js := put(t, s, sid, "data.json", "", `{"a":1}`)
	if !ids.Is(md.ID, IDPrefix) || md.Object != "session.resource" || md.Type != "file" || md.SessionID != "conv_"+sid ||
		md.Name != "notes.md" || md.Metadata != (Meta{"notes.md", 8, 1774118383, "text/markdown; charset=utf-8"}) {
		t.Errorf("put = %+v", md)
	}
	if png.Metadata.ContentType != "image/png" || js.Metadata.ContentType != "application/json" {
		t.Errorf("sniffed %q, by extension %q", png.Metadata.ContentType, js.Metadata.ContentType)
	}
	list, err := s.List(sid)
	if err != nil || len(list) != 3 || list[0] != md || list[1] != png || list[2] != js {
		t.Fatalf("list = %+v %v", list, err)
	}
	f, c, err := s.Open(sid, md.ID)
	if err != nil || f != md {
		t.Fatalf("open = %+v %v", f, err)
	}
	if err := s.Remove(sid, md.ID); err != nil {
		t.Fatal(err)
	}
	// Open before the removal: still readable.
	c.Seek(2, io.SeekStart)
	if rest, _ := io.ReadAll(c); string(rest) != "Notes\n" {
		t.Errorf("content after removal = %q", rest)
	}
	c.Close()
	if _, err := s.Get(sid, md.ID); !errors.Is(err, storeerr.ErrNotFound) {
		t.Errorf("get after remove = %v", err)
	}
	if n := len(onDisk(dir, sid)); n != 4 {
		t.Errorf("%d files on disk, want 4: %v", n, onDisk(dir, sid))
	}
}

func TestDirRefusals(t *testing.T) {
	s, dir := newDir(t, 16)
	sid := uuid.NewString()
	broken := io.MultiReader(strings.NewReader("half"), iotestErr{})
	for _, c := range []struct {
		name, filename string
		body           io.Reader
		kind           error
		msg            string
	}{
		{"no name", "", strings.NewReader("x"), storeerr.ErrInvalid, "no file name"},
		{"dot dot", "..", strings.NewReader("x"), storeerr.ErrInvalid, "no file name"},
		{"long name", strings.Repeat("n", 256), strings.NewReader("x"), storeerr.ErrInvalid, "over 255 bytes"},
		{"control", "a\x01b", strings.NewReader("x"), storeerr.ErrInvalid, "invalid characters"},
		{"over the limit", "big", bytes.NewReader(make([]byte, 17)), storeerr.ErrTooLarge, "file is over 16 bytes"},
		{"broken body", "cut", broken, storeerr.ErrBody, "reading the file part: client went away"},
	} {
		_, err := s.Put(sid, Upload{Filename: c.filename}, c.body)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if left := onDisk(dir, sid); len(left) != 0 {
		t.Errorf("refused uploads left %v", left)
	}
	if f, err := s.Put(sid, Upload{Filename: "max"}, bytes.NewReader(make([]byte, 16))); err != nil || f.Metadata.Bytes != 16 {
		t.Errorf("exactly the limit: %+v %v", f, err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("client went away") }

// TestDirBadIDs: an id or session uuid the store could not have issued is
// not found before any path is built from it.
func TestDirBadIDs(t *testing.T) {
	s, dir := newDir(t, 1<<20)
	sid := uuid.NewString()
	put(t, s, sid, "a.txt", "", "x")
	// Metadata an unvalidated id would reach: finding it would mean the
	// store built a path from the id.
	bait, _ := json.Marshal(File{ID: "bait"})
	for _, p := range []string{
		filepath.Join(dir, sid, "file_xyz.json"),
		filepath.Join(dir, sid, "file_ABCDEF0123456789ABCDEF01.json"),
		filepath.Join(dir, "secret.json"),
	} {
		if err := os.WriteFile(p, bait, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"file_xyz", "file_ABCDEF0123456789ABCDEF01", "../secret", "../" + sid + "/file_xyz"} {
		if _, err := s.Get(sid, id); !errors.Is(err, storeerr.ErrNotFound) {
			t.Errorf("Get(%q) = %v", id, err)
		}
		if _, _, err := s.Open(sid, id); !errors.Is(err, storeerr.ErrNotFound) {
			t.Errorf("Open(%q) = %v", id, err)
		}
		if err := s.Remove(sid, id); !errors.Is(err, storeerr.ErrNotFound) {
			t.Errorf("Remove(%q) = %v", id, err)
		}
	}
	// The session uuid becomes a path component too.
	for _, bad := range []string{"..", "../" + sid, strings.ToUpper(sid), "{" + sid + "}", "urn:uuid:" + sid} {
		if _, err := s.Get(bad, "file_0123456789abcdef01234567"); !errors.Is(err, storeerr.ErrNotFound) {
			t.Errorf("Get in session %q = %v", bad, err)
		}
		if _, err := s.List(bad); err == nil {
			t.Errorf("List(%q) succeeded", bad)
		}
		if _, err := s.Put(bad, Upload{Filename: "a.txt"}, strings.NewReader("x")); err == nil {
			t.Errorf("Put(%q) succeeded", bad)
		}
		if err := s.RemoveAll(bad); err == nil {
			t.Errorf("RemoveAll(%q) succeeded", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "secret.json")); err != nil {
		t.Errorf("bait outside the session: %v", err)
	}
}

func TestDirRemoveAllAndRead(t *testing.T) {
	s, dir := newDir(t, 1<<20)
	sidA, sidB := uuid.NewString(), uuid.NewString()
	a1 := put(t, s, sidA, "a1.txt", "", "first")
	put(t, s, sidA, "a2.txt", "", "second")
	b := put(t, s, sidB, "b.txt", "", "bee")

	f, data, err := Read(s, sidA, a1.ID, 5)
	if err != nil || string(data) != "first" || f != a1 {
		t.Errorf("read = %+v %q %v", f, data, err)
	}
	if _, _, err := Read(s, sidA, a1.ID, 4); !errors.Is(err, storeerr.ErrInvalid) {
		t.Errorf("read over max = %v", err)
	}
	if _, _, err := Read(s, sidB, a1.ID, 100); !errors.Is(err, storeerr.ErrNotFound) {
		t.Errorf("read of another session's file = %v", err)
	}

	if err := s.RemoveAll(sidA); err != nil {
		t.Fatal(err)
	}
	if l, err := s.List(sidA); err != nil || len(l) != 0 {
		t.Errorf("list after RemoveAll = %v %v", l, err)
	}
	if _, err := os.Stat(filepath.Join(dir, sidA)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("session dir after RemoveAll: %v", err)
	}
	if l, err := s.List(sidB); err != nil || len(l) != 1 || l[0] != b {
		t.Errorf("other session after RemoveAll = %v %v", l, err)
	}
	if err := s.RemoveAll(uuid.NewString()); err != nil {
		t.Errorf("RemoveAll of a session without files: %v", err)
	}
}

func TestDirSweepsTemporaries(t *testing.T) {
	dir := t.TempDir()
	sid := uuid.NewString()
	os.MkdirAll(filepath.Join(dir, sid), 0o700)
	for _, name := range []string{tempPrefix + "123", ".file_0123456789abcdef01234567.json.tmp-9"} {
		os.WriteFile(filepath.Join(dir, sid, name), []byte("partial"), 0o600)
	}
	if _, err := OpenDir(dir, 10, time.Now); err != nil {
		t.Fatal(err)
	}
	if left := onDisk(dir, sid); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}

func TestDirConcurrentPuts(t *testing.T) {
	s, _ := newDir(t, 1<<20)
	sid := uuid.NewString()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := s.Put(sid, Upload{Filename: strings.Repeat("f", i+1)}, strings.NewReader("content")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if l, err := s.List(sid); err != nil || len(l) != 8 {
		t.Errorf("list = %d files, %v", len(l), err)
	}
}
