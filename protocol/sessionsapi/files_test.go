package sessionsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
)

// fileEnv is an API with only its file store, served like Register does:
// each route behind its body limit.
type fileEnv struct {
	t        *testing.T
	dir      string
	store    *sessionfiles.Dir
	sessions session.Store
	mux      *http.ServeMux
}

func newFileEnv(t *testing.T, maxBytes int64) *fileEnv {
	t.Helper()
	dir := t.TempDir()
	// Each upload a second after the previous: list order is then known.
	var mu sync.Mutex
	clock := time.Unix(1774118382, 0)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	store, err := sessionfiles.OpenDir(dir, maxBytes, now)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := session.NewFileStore(filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	a := &API{files: store, opts: Options{MaxFileBytes: maxBytes, Store: sessions}}
	mux := http.NewServeMux()
	for _, r := range a.fileRoutes() {
		mux.Handle(r.pattern, r.limited(bodyLimit))
	}
	return &fileEnv{t: t, dir: dir, store: store, sessions: sessions, mux: mux}
}

// newSession stores a new session, as every file route first finds it.
func (e *fileEnv) newSession() (convID, sessionUUID string) {
	e.t.Helper()
	m := session.NewMeta(time.Now())
	if err := e.sessions.Create(m); err != nil {
		e.t.Fatal(err)
	}
	return "conv_" + m.ID, m.ID
}

// filePart is one multipart part; a zero header means CreateFormFile's.
type filePart struct {
	name, filename, contentType string
	body                        []byte
}

func fileMultipart(t *testing.T, parts ...filePart) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := map[string]string{"name": p.name}
		if p.filename != "" {
			disp["filename"] = p.filename
		}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", disp))
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.body)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

func (e *fileEnv) do(method, target string, body io.Reader, contentType string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, target, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	return rec
}

func filesURL(convID string, rest ...string) string {
	return "/v1/sessions/" + convID + "/resources/files" + strings.Join(rest, "")
}

func (e *fileEnv) upload(convID string, p filePart) File {
	e.t.Helper()
	body, ct := fileMultipart(e.t, p)
	rec := e.do("POST", filesURL(convID), body, ct)
	if rec.Code != http.StatusCreated {
		e.t.Fatalf("upload %s: %d %s", p.filename, rec.Code, rec.Body)
	}
	var f File
	if err := json.Unmarshal(rec.Body.Bytes(), &f); err != nil {
		e.t.Fatal(err)
	}
	return f
}

func fileDecode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return v
}

// sessionFiles lists what is on disk for a session, temporaries included.
func (e *fileEnv) sessionFiles(sessionUUID string) []string {
	names, _ := filepath.Glob(filepath.Join(e.dir, sessionUUID, "*"))
	dots, _ := filepath.Glob(filepath.Join(e.dir, sessionUUID, ".*"))
	return append(names, dots...)
}

var filePNGHead = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")

func TestFileUploadGetListContentDelete(t *testing.T) {
	e := newFileEnv(t, 1<<20)
	conv, sid := e.newSession()

	md := e.upload(conv, filePart{"file", "notes.md", "text/markdown; charset=utf-8", []byte("# Notes\nhello world\n")})
	png := e.upload(conv, filePart{"file", `C:\shots\pixel`, "application/octet-stream", filePNGHead})
	js := e.upload(conv, filePart{"file", "data.json", "", []byte(`{"a":1}`)})

	if !ids.Is(md.ID, sessionfiles.IDPrefix) || md.Object != "session.resource" || md.Type != "file" || md.SessionID != conv || md.Name != "notes.md" {
		t.Errorf("upload = %+v", md)
	}
	if m := md.Metadata; m.Filename != "notes.md" || m.Bytes != 20 || m.CreatedAt != 1774118383 || m.ContentType != "text/markdown; charset=utf-8" {
		t.Errorf("declared metadata = %+v", m)
	}
	if m := png.Metadata; m.Filename != "pixel" || m.ContentType != "image/png" || m.Bytes != int64(len(filePNGHead)) {
		t.Errorf("sniffed metadata = %+v", m)
	}
	if m := js.Metadata; m.ContentType != "application/json" {
		t.Errorf("by-extension metadata = %+v", m)
	}

	if got := fileDecode[File](t, e.do("GET", filesURL(conv, "/", png.ID), nil, "")); got != png {
		t.Errorf("get = %+v, want %+v", got, png)
	}

	ids := func(l List[File]) string {
		var s []string
		for _, f := range l.Data {
			s = append(s, f.ID)
		}
		return strings.Join(s, ",")
	}
	l := fileDecode[List[File]](t, e.do("GET", filesURL(conv), nil, ""))
	if l.Object != "list" || ids(l) != js.ID+","+png.ID+","+md.ID || l.HasMore || *l.FirstID != js.ID || *l.LastID != md.ID {
		t.Errorf("list = %+v", l)
	}
	l = fileDecode[List[File]](t, e.do("GET", filesURL(conv, "?limit=2&order=asc"), nil, ""))
	if ids(l) != md.ID+","+png.ID || !l.HasMore {
		t.Errorf("first asc page = %+v", l)
	}
	l = fileDecode[List[File]](t, e.do("GET", filesURL(conv, "?limit=2&order=asc&after=", *l.LastID), nil, ""))
	if ids(l) != js.ID || l.HasMore {
		t.Errorf("second asc page = %+v", l)
	}
	if rec := e.do("GET", filesURL(conv, "?after=file_000000000000000000000000"), nil, ""); rec.Code != http.StatusBadRequest {
		t.Errorf("unknown cursor: %d %s", rec.Code, rec.Body)
	}

	rec := e.do("GET", filesURL(conv, "/", md.ID, "/content"), nil, "")
	h := rec.Header()
	if rec.Code != http.StatusOK || rec.Body.String() != "# Notes\nhello world\n" {
		t.Errorf("content: %d %q", rec.Code, rec.Body)
	}
	if h.Get("Content-Type") != "text/markdown; charset=utf-8" || h.Get("Content-Length") != "20" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("content headers = %v", h)
	}
	if disp, params, err := mime.ParseMediaType(h.Get("Content-Disposition")); err != nil || disp != "attachment" || params["filename"] != "notes.md" {
		t.Errorf("Content-Disposition = %q", h.Get("Content-Disposition"))
	}
	rec = e.do("GET", filesURL(conv, "/", md.ID, "/content"), nil, "", "Range", "bytes=2-6")
	if rec.Code != http.StatusPartialContent || rec.Body.String() != "Notes" || rec.Header().Get("Content-Range") != "bytes 2-6/20" {
		t.Errorf("range: %d %q %v", rec.Code, rec.Body, rec.Header())
	}

	rec = e.do("DELETE", filesURL(conv, "/", md.ID), nil, "")
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"id":"`+md.ID+`","object":"session.resource.deleted","deleted":true}` {
		t.Errorf("delete: %d %s", rec.Code, rec.Body)
	}
	for _, target := range []string{filesURL(conv, "/", md.ID), filesURL(conv, "/", md.ID, "/content")} {
		if rec := e.do("GET", target, nil, ""); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s after delete: %d %s", target, rec.Code, rec.Body)
		}
	}
	if rec := e.do("DELETE", filesURL(conv, "/", md.ID), nil, ""); rec.Code != http.StatusNotFound {
		t.Errorf("second delete: %d", rec.Code)
	}
	for _, p := range e.sessionFiles(sid) {
		if strings.Contains(p, md.ID) {
			t.Errorf("%s left after delete", p)
		}
	}
	if n := len(e.sessionFiles(sid)); n != 4 {
		t.Errorf("%d files on disk, want 4: %v", n, e.sessionFiles(sid))
	}
}

func TestFileOtherSession(t *testing.T) {
	e := newFileEnv(t, 1<<20)
	convA, sidA := e.newSession()
	convB, _ := e.newSession()
	f := e.upload(convA, filePart{"file", "a.txt", "", []byte("session A's")})
	for _, req := range [][2]string{
		{"GET", filesURL(convB, "/", f.ID)},
		{"GET", filesURL(convB, "/", f.ID, "/content")},
		{"DELETE", filesURL(convB, "/", f.ID)},
	} {
		rec := e.do(req[0], req[1], nil, "")
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "not found in this session") {
			t.Errorf("%s %s: %d %s", req[0], req[1], rec.Code, rec.Body)
		}
	}
	if l := fileDecode[List[File]](t, e.do("GET", filesURL(convB), nil, "")); len(l.Data) != 0 || l.FirstID != nil {
		t.Errorf("B's list = %+v", l)
	}
	if _, err := e.store.Get(sidA, f.ID); err != nil {
		t.Errorf("A's file after B's delete: %v", err)
	}
}

func TestFileUnknownSession(t *testing.T) {
	e := newFileEnv(t, 1<<20)
	unknown := uuid.NewString()
	for _, conv := range []string{"conv_" + unknown, unknown, "conv_nope", "conv_%2E%2E"} {
		body, ct := fileMultipart(t, filePart{"file", "a.txt", "", []byte("x")})
		for _, req := range []struct {
			method, target string
			body           io.Reader
		}{
			{"POST", filesURL(conv), body},
			{"GET", filesURL(conv), nil},
			{"GET", filesURL(conv, "/file_0123456789abcdef01234567"), nil},
			{"GET", filesURL(conv, "/file_0123456789abcdef01234567/content"), nil},
			{"DELETE", filesURL(conv, "/file_0123456789abcdef01234567"), nil},
		} {
			rec := e.do(req.method, req.target, req.body, ct)
			if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "session") {
				t.Errorf("%s %s: %d %s", req.method, req.target, rec.Code, rec.Body)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(e.dir, "*")); len(left) != 0 {
		t.Errorf("unknown sessions left %v", left)
	}
}

func TestFileBadIDs(t *testing.T) {
	e := newFileEnv(t, 1<<20)
	conv, sid := e.newSession()
	e.upload(conv, filePart{"file", "a.txt", "", []byte("x")})
	// Metadata an unvalidated id would reach: finding it would mean the
	// store built a path from the id.
	bait, _ := json.Marshal(File{ID: "bait"})
	for _, p := range []string{
		filepath.Join(e.dir, sid, "file_xyz.json"),
		filepath.Join(e.dir, sid, "file_ABCDEF0123456789ABCDEF01.json"),
		filepath.Join(e.dir, "secret.json"),
	} {
		if err := os.WriteFile(p, bait, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A literal "../" in a URL is cleaned (and redirected) by ServeMux; an
	// escaped one reaches the handler as part of {id}.
	for _, id := range []string{"file_xyz", "file_ABCDEF0123456789ABCDEF01", "..%2Fsecret", "%2E%2E%2F%2E%2E%2Fsecret", "file_0123456789abcdef01234567%2F..%2F..%2Fsecret"} {
		for _, suffix := range []string{"", "/content"} {
			rec := e.do("GET", filesURL(conv, "/", id, suffix), nil, "")
			if rec.Code != http.StatusNotFound {
				t.Errorf("GET %s%s: %d %s", id, suffix, rec.Code, rec.Body)
			}
		}
		if rec := e.do("DELETE", filesURL(conv, "/", id), nil, ""); rec.Code != http.StatusNotFound {
			t.Errorf("DELETE %s: %d %s", id, rec.Code, rec.Body)
		}
	}
	// The store's own refusals (ids and session uuids it could not have
	// issued) are tested in runtime/sessionfiles.
	if _, err := os.Stat(filepath.Join(e.dir, "secret.json")); err != nil {
		t.Errorf("bait outside the session: %v", err)
	}
}

func TestFileUploadRefused(t *testing.T) {
	e := newFileEnv(t, 16)
	conv, sid := e.newSession()
	for name, c := range map[string]struct {
		parts  []filePart
		status int
		msg    string
	}{
		"no file part":   {[]filePart{{"purpose", "", "", []byte("input")}}, 400, "missing file part"},
		"no parts":       {nil, 400, "missing file part"},
		"no file name":   {[]filePart{{"file", "", "", []byte("x")}}, 400, "no file name"},
		"over the limit": {[]filePart{{"file", "big.bin", "", bytes.Repeat([]byte("x"), 17)}}, 413, "file is over 16 bytes"},
		// A body over the route's limit before the file part is cut by
		// the server's MaxBytesReader.
		"over the body limit": {[]filePart{{"pad", "", "", bytes.Repeat([]byte("x"), 100<<10)}, {"file", "a.txt", "", []byte("x")}}, 413, "request body over"},
	} {
		body, ct := fileMultipart(t, c.parts...)
		rec := e.do("POST", filesURL(conv), body, ct)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.msg) {
			t.Errorf("%s: %d %s", name, rec.Code, rec.Body)
		}
	}
	if rec := e.do("POST", filesURL(conv), strings.NewReader(`{"file":"x"}`), "application/json"); rec.Code != http.StatusBadRequest {
		t.Errorf("JSON body: %d %s", rec.Code, rec.Body)
	}
	// A body cut in the middle of the file part, as by a client gone away.
	body, ct := fileMultipart(t, filePart{"file", "cut.txt", "", []byte("0123456789")})
	cut, _ := io.ReadAll(body)
	if rec := e.do("POST", filesURL(conv), bytes.NewReader(cut[:len(cut)-20]), ct); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "reading the file part") {
		t.Errorf("cut body: %d %s", rec.Code, rec.Body)
	}
	if left := e.sessionFiles(sid); len(left) != 0 {
		t.Errorf("refused uploads left %v", left)
	}
	// Exactly the limit is fine; the extra parts around the file are ignored.
	body, ct = fileMultipart(t, filePart{"purpose", "", "", []byte("input")}, filePart{"file", "max.bin", "", bytes.Repeat([]byte("x"), 16)}, filePart{"file", "second", "", nil})
	if rec := e.do("POST", filesURL(conv), body, ct); rec.Code != http.StatusCreated || fileDecode[File](t, rec).Metadata.Bytes != 16 {
		t.Errorf("upload at the limit: %d %s", rec.Code, rec.Body)
	}
}

func TestFileUploadConcurrent(t *testing.T) {
	e := newFileEnv(t, 1<<20)
	conv, sid := e.newSession()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			body, ct := fileMultipart(t, filePart{"file", fmt.Sprintf("f%d.txt", i), "", []byte("content")})
			if rec := e.do("POST", filesURL(conv), body, ct); rec.Code != http.StatusCreated {
				t.Errorf("upload %d: %d %s", i, rec.Code, rec.Body)
			}
		})
	}
	wg.Wait()
	if l, err := e.store.List(sid); err != nil || len(l) != 8 {
		t.Errorf("list = %d files, %v", len(l), err)
	}
}
