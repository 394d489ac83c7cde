// Package sessionfiles keeps the files uploaded to sessions (the sessions
// API's resources/files): each file's content and its record, listed per
// session. Store is what the API uses; Dir keeps them on the local disk,
// and a store shared by several servers can stand in for it.
package sessionfiles

import (
	"io"

	"github.com/openheim/openheim/runtime/storeerr"
)

// File is seed 003's session file resource, as the API shows it and as it
// is stored.
type File struct {
	ID        string `json:"id"`         // "file_" + 24 lowercase hex
	Object    string `json:"object"`     // "session.resource"
	Type      string `json:"type"`       // "file"
	SessionID string `json:"session_id"` // Upload.SessionID
	Name      string `json:"name"`
	Metadata  Meta   `json:"metadata"`
}

// Meta is what the upload told and what the store measured.
type Meta struct {
	Filename    string `json:"filename"`
	Bytes       int64  `json:"bytes"`
	CreatedAt   int64  `json:"created_at"` // unix seconds
	ContentType string `json:"content_type"`
}

// Upload is what a client tells about a file it uploads.
type Upload struct {
	// SessionID is what the File records as its session_id: the id the
	// client knows the session by.
	SessionID string
	// Filename is the client's name for it (any path is dropped) and
	// ContentType its declared type ("" when it declared none).
	Filename, ContentType string
}

// Store keeps the files of sessions. A session is named by its uuid; a
// file by the id the store gave it. Refusals are storeerr kinds: an
// unknown file ErrNotFound, a bad name ErrInvalid, content over the
// store's limit ErrTooLarge, a failed read of r ErrBody.
type Store interface {
	// Put stores the content read from r as a new file of the session;
	// nothing of it is kept unless all of it was.
	Put(session string, up Upload, r io.Reader) (File, error)
	// List returns the session's files, oldest first, ties by id.
	List(session string) ([]File, error)
	Get(session, id string) (File, error)
	// Open returns the file and its content, which the caller closes;
	// once open it stays readable even if the file is removed.
	Open(session, id string) (File, io.ReadSeekCloser, error)
	Remove(session, id string) error
	// RemoveAll removes every file of a session that was deleted.
	RemoveAll(session string) error
}

// IDPrefix begins every file id.
const IDPrefix = "file_"

// Read returns a file's whole content, for turning a reference to it into
// a message block; a file over max bytes is refused (ErrInvalid: too large
// to send to a model, not to store).
func Read(s Store, session, id string, max int64) (File, []byte, error) {
	f, c, err := s.Open(session, id)
	if err != nil {
		return File{}, nil, err
	}
	defer c.Close()
	tooBig := storeerr.Invalid("file %q is over %d bytes, too large to send to the model", id, max)
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
