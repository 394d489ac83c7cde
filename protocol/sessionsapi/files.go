package sessionsapi

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/openheim/openheim/runtime/confine"
)

// File is seed 003's session file resource.
type File struct {
	ID        string   `json:"id"`         // "file_" + 24 lowercase hex
	Object    string   `json:"object"`     // "session.resource"
	Type      string   `json:"type"`       // "file"
	SessionID string   `json:"session_id"` // the session's API id, "conv_<uuid>"
	Name      string   `json:"name"`
	Metadata  FileMeta `json:"metadata"`
}

// FileMeta is what the upload told and what the server measured.
type FileMeta struct {
	Filename    string `json:"filename"`
	Bytes       int64  `json:"bytes"`
	CreatedAt   int64  `json:"created_at"` // unix seconds
	ContentType string `json:"content_type"`
}

// fileStore keeps each session's files as dir/<session uuid>/<id>.bin with
// the File beside it as <id>.json. The .json is written last, so a file is
// listed only once its content is complete. Every operation goes through a
// root on dir, so no name built from a request can reach anything else.
type fileStore struct {
	root     *confine.Root
	maxBytes int64
	now      func() time.Time
	mu       sync.Mutex // orders commits, removals and listings; uploads stream outside it
}

const (
	fileIDPrefix = "file_"
	fileIDHex    = 24
	// A leading dot marks a temporary (confine.Root.WriteFile's too), which
	// newFileStore sweeps: one left by a crash is unreachable.
	fileTempPrefix = ".upload-"
	maxFileName    = 255
	// fileFormSlack is the body beyond the file itself: multipart
	// boundaries, part headers, small extra fields.
	fileFormSlack = 64 << 10
)

func newFileStore(dir string, maxBytes int64, now func() time.Time) (*fileStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	root, err := confine.Open(dir)
	if err != nil {
		return nil, err
	}
	s := &fileStore{root: root, maxBytes: maxBytes, now: now}
	s.sweep()
	return s, nil
}

// sweep removes the temporaries a crash left in the session directories.
func (s *fileStore) sweep() {
	d, err := s.root.OpenDir(".")
	if err != nil {
		return
	}
	defer d.Close()
	d.Walk(func(name string, fi fs.FileInfo) error {
		dir, base := filepath.Split(name)
		switch {
		case dir == "" && fi.IsDir():
			return nil // a session directory: look inside
		case dir != "" && strings.HasPrefix(base, ".") && fi.Mode().IsRegular():
			s.root.Remove(name)
		}
		return fs.SkipDir
	})
}

// isFileID reports whether id has the exact shape the store issues, so that
// an id from a URL can never name a path outside its session directory.
func isFileID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, fileIDPrefix)
	if !ok || len(hexPart) != fileIDHex {
		return false
	}
	for _, c := range []byte(hexPart) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func newFileID() string {
	b := make([]byte, fileIDHex/2)
	rand.Read(b)
	return fileIDPrefix + hex.EncodeToString(b)
}

// sessionDir is the name of the directory of a session's files, relative
// to the store's root. The uuid must round-trip through uuid.Parse in
// canonical form: it becomes a path component, and "../x" or an
// alternative spelling must not.
func (s *fileStore) sessionDir(sessionUUID string) (string, error) {
	u, err := uuid.Parse(sessionUUID)
	if err != nil || u.String() != sessionUUID {
		return "", fmt.Errorf("sessionsapi: %q is not a canonical session uuid", sessionUUID)
	}
	return sessionUUID, nil
}

// cleanFileName keeps the last element of a client's file name, whichever
// separator the client's OS uses.
func cleanFileName(name string) (string, error) {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.TrimSpace(name)
	switch {
	case name == "" || name == "." || name == "/" || name == "..":
		return "", badRequest("the file part has no file name")
	case len(name) > maxFileName:
		return "", badRequest("file name is over %d bytes", maxFileName)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", badRequest("file name %q has invalid characters", name)
	}
	return name, nil
}

// fileContentType prefers the client's declared type, then the content,
// then the extension: sniffing only knows a few formats and says text/plain
// for JSON, CSV, Markdown, which the extension names better.
func fileContentType(declared, name string, head []byte) string {
	if mt, params, err := mime.ParseMediaType(declared); err == nil && mt != "application/octet-stream" {
		return mime.FormatMediaType(mt, params)
	}
	sniffed := http.DetectContentType(head)
	generic := sniffed == "application/octet-stream" || strings.HasPrefix(sniffed, "text/plain")
	if ext := mime.TypeByExtension(filepath.Ext(name)); generic && ext != "" {
		return ext
	}
	return sniffed
}

// uploadReader keeps the first bytes, for sniffing without holding the
// whole upload, and a read error, to tell the client's broken body (their
// fault) from a failed disk write (ours).
type uploadReader struct {
	r    io.Reader
	head []byte
	err  error
}

func (u *uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if k := min(n, 512-len(u.head)); k > 0 {
		u.head = append(u.head, p[:k]...)
	}
	if err != nil && err != io.EOF {
		u.err = err
	}
	return n, err
}

// put stores r as a new file of the session. Nothing is left on disk
// unless the whole content and its metadata were written.
func (s *fileStore) put(sessionUUID, convID, filename, contentType string, r io.Reader) (File, error) {
	dir, err := s.sessionDir(sessionUUID)
	if err != nil {
		return File{}, err
	}
	name, err := cleanFileName(filename)
	if err != nil {
		return File{}, err
	}
	if err := s.root.MkdirAll(dir, 0o700); err != nil {
		return File{}, err
	}
	tmpName := filepath.Join(dir, fileTempPrefix+rand.Text())
	tmp, err := s.root.Create(tmpName)
	if err != nil {
		return File{}, err
	}
	defer s.root.Remove(tmpName) // a no-op once renamed
	src := &uploadReader{r: r}
	n, err := io.Copy(tmp, io.LimitReader(src, s.maxBytes+1))
	if err == nil && n > s.maxBytes {
		err = tooLarge("file is over %d bytes", s.maxBytes)
	} else if err != nil && src.err != nil {
		err = readError("reading the file part", src.err)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return File{}, err
	}
	f := File{
		ID: newFileID(), Object: "session.resource", Type: "file", SessionID: convID, Name: name,
		Metadata: FileMeta{Filename: name, Bytes: n, CreatedAt: s.now().Unix(), ContentType: fileContentType(contentType, name, src.head)},
	}
	meta, err := json.Marshal(f)
	if err != nil {
		return File{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bin := filepath.Join(dir, f.ID+".bin")
	if err := s.root.Rename(tmpName, bin); err != nil {
		return File{}, err
	}
	if err := s.root.WriteFile(filepath.Join(dir, f.ID+".json"), meta); err != nil {
		s.root.Remove(bin)
		return File{}, err
	}
	return f, nil
}

// list returns the session's files, oldest first, ties by id.
func (s *fileStore) list(sessionUUID string) ([]File, error) {
	dir, err := s.sessionDir(sessionUUID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.root.OpenDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []File{}, nil
	} else if err != nil {
		return nil, err
	}
	ents, err := d.Entries()
	d.Close()
	if err != nil {
		return nil, err
	}
	files := []File{}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !isFileID(id) {
			continue
		}
		f, err := s.readMeta(dir, id)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b File) int {
		return cmp.Or(cmp.Compare(a.Metadata.CreatedAt, b.Metadata.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return files, nil
}

func (s *fileStore) readMeta(dir, id string) (File, error) {
	data, err := s.readAll(filepath.Join(dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, notFound("file %q not found in this session", id)
	} else if err != nil {
		return File{}, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return File{}, fmt.Errorf("sessionsapi: file %s: %w", id, err)
	}
	return f, nil
}

// readAll reads the store's file name.
func (s *fileStore) readAll(name string) ([]byte, error) {
	f, _, err := s.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// lookup resolves a session's file; an id the store could not have issued
// or a session uuid that is not one is a 404 before any path is built.
func (s *fileStore) lookup(sessionUUID, id string) (string, File, error) {
	dir, err := s.sessionDir(sessionUUID)
	if err != nil || !isFileID(id) {
		return "", File{}, notFound("file %q not found in this session", id)
	}
	f, err := s.readMeta(dir, id)
	return dir, f, err
}

func (s *fileStore) get(sessionUUID, id string) (File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, f, err := s.lookup(sessionUUID, id)
	return f, err
}

// open returns the file and its content; the caller closes it. Once open,
// the content stays readable even if the file is removed meanwhile.
func (s *fileStore) open(sessionUUID, id string) (File, *os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, f, err := s.lookup(sessionUUID, id)
	if err != nil {
		return File{}, nil, err
	}
	c, fi, err := s.root.Open(filepath.Join(dir, id+".bin"))
	if err == nil && fi.IsDir() {
		c.Close()
		err = fmt.Errorf("sessionsapi: file %s: content is a directory", id)
	}
	if err != nil {
		return File{}, nil, err
	}
	return f, c, nil
}

// read returns the whole content, for turning an input_image or input_file
// reference into a message block; max bounds what a turn may carry.
func (s *fileStore) read(sessionUUID, id string, max int64) (File, []byte, error) {
	f, c, err := s.open(sessionUUID, id)
	if err != nil {
		return File{}, nil, err
	}
	defer c.Close()
	tooBig := badRequest("file %q is over %d bytes, too large to send to the model", id, max)
	if f.Metadata.Bytes > max {
		return File{}, nil, tooBig
	}
	data, err := io.ReadAll(io.LimitReader(c, max+1))
	if err != nil {
		return File{}, nil, err
	}
	if int64(len(data)) > max {
		return File{}, nil, tooBig
	}
	return f, data, nil
}

// remove deletes the metadata first: should the content's removal fail,
// what remains is an unlisted orphan, not a listed file without content.
func (s *fileStore) remove(sessionUUID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, _, err := s.lookup(sessionUUID, id)
	if err != nil {
		return err
	}
	if err := s.root.Remove(filepath.Join(dir, id+".json")); err != nil {
		return err
	}
	if err := s.root.Remove(filepath.Join(dir, id+".bin")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeAll deletes every file of a session that was deleted. An upload
// still streaming fails at its rename.
func (s *fileStore) removeAll(sessionUUID string) error {
	dir, err := s.sessionDir(sessionUUID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.root.RemoveAll(dir)
}

func (a *API) fileRoutes() []route {
	const base = "/v1/sessions/{session_id}/resources/files"
	return []route{
		{pattern: "POST " + base, handler: a.fileHandler(a.fileUpload), upload: a.opts.MaxFileBytes + fileFormSlack},
		{pattern: "GET " + base, handler: a.fileHandler(a.fileList)},
		{pattern: "GET " + base + "/{id}", handler: a.fileHandler(a.fileGet)},
		{pattern: "GET " + base + "/{id}/content", handler: a.fileHandler(a.fileContent)},
		{pattern: "DELETE " + base + "/{id}", handler: a.fileHandler(a.fileDelete)},
	}
}

// fileHandler resolves the path's session first, so every file route 404s
// for an unknown session before looking at files, and answers h's error.
func (a *API) fileHandler(h func(w http.ResponseWriter, r *http.Request, convID, sessionUUID string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		convID := r.PathValue("session_id")
		sid, err := a.sessionUUID(convID)
		if err == nil {
			err = h(w, r, convID, sid)
		}
		if err != nil {
			writeError(w, err)
		}
	}
}

func (a *API) fileUpload(w http.ResponseWriter, r *http.Request, convID, sid string) error {
	// The part is streamed to disk: ParseMultipartForm would hold up to
	// its memory limit and spill the rest to a temporary file of its own.
	mr, err := r.MultipartReader()
	if err != nil {
		return badRequest("expected a multipart/form-data body: %v", err)
	}
	for {
		p, err := mr.NextPart()
		var tooBig *http.MaxBytesError
		switch {
		case err == io.EOF:
			return badRequest("missing file part")
		case errors.As(err, &tooBig):
			return err
		case err != nil:
			return badRequest("invalid multipart body: %v", err)
		case p.FormName() != "file":
			p.Close()
			continue
		}
		f, err := a.files.put(sid, convID, p.FileName(), p.Header.Get("Content-Type"), p)
		p.Close()
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, f)
		return nil
	}
}

func (a *API) fileList(w http.ResponseWriter, r *http.Request, _, sid string) error {
	p, err := parsePage(r.URL.Query(), "desc")
	if err != nil {
		return err
	}
	files, err := a.files.list(sid)
	if err != nil {
		return err
	}
	page, err := paginate(files, func(f File) string { return f.ID }, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (a *API) fileGet(w http.ResponseWriter, r *http.Request, _, sid string) error {
	f, err := a.files.get(sid, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (a *API) fileContent(w http.ResponseWriter, r *http.Request, _, sid string) error {
	f, c, err := a.files.open(sid, r.PathValue("id"))
	if err != nil {
		return err
	}
	defer c.Close()
	h := w.Header()
	h.Set("Content-Type", f.Metadata.ContentType)
	// The content is the uploader's: a browser must download it, never
	// render it (as HTML, say) in the API's origin.
	disp := mime.FormatMediaType("attachment", map[string]string{"filename": f.Metadata.Filename})
	if disp == "" {
		disp = "attachment"
	}
	h.Set("Content-Disposition", disp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	// ServeContent answers Range and conditional requests and sets
	// Content-Length.
	http.ServeContent(w, r, "", time.Unix(f.Metadata.CreatedAt, 0), c)
	return nil
}

func (a *API) fileDelete(w http.ResponseWriter, r *http.Request, _, sid string) error {
	id := r.PathValue("id")
	if err := a.files.remove(sid, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{id, "session.resource.deleted", true})
	return nil
}
