package sessionsapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/openheim/openheim/runtime/sessionfiles"
)

// File is seed 003's session file resource; FileMeta its metadata.
type (
	File     = sessionfiles.File
	FileMeta = sessionfiles.Meta
)

// fileFormSlack is the body beyond the file itself: multipart boundaries,
// part headers, small extra fields.
const fileFormSlack = 64 << 10

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
		f, err := a.files.Put(sid, sessionfiles.Upload{SessionID: convID, Filename: p.FileName(), ContentType: p.Header.Get("Content-Type")}, p)
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
	files, err := a.files.List(sid)
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
	f, err := a.files.Get(sid, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (a *API) fileContent(w http.ResponseWriter, r *http.Request, _, sid string) error {
	f, c, err := a.files.Open(sid, r.PathValue("id"))
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
	if err := a.files.Remove(sid, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}{id, "session.resource.deleted", true})
	return nil
}
