package fschannel

import "encoding/json"

// The replies of the fs channel, as the data of an envelope. Field names and
// order follow seed 000 (FsResponse). ID echoes the request's optional id
// unchanged; it is omitted when the request had none and on unsolicited
// messages (fs_event, watch-limit errors).

// Watching answers a watch request.
type Watching struct {
	Type string          `json:"type"` // "watching"
	Path string          `json:"path"`
	ID   json.RawMessage `json:"id,omitempty"`
}

// Unwatched answers an unwatch request.
type Unwatched struct {
	Type string          `json:"type"` // "unwatched"
	ID   json.RawMessage `json:"id,omitempty"`
}

// FileEntry is one entry of a FileList.
type FileEntry struct {
	Path     string `json:"path"` // absolute
	Name     string `json:"name"`
	IsDir    bool   `json:"is_dir"`
	Size     *int64 `json:"size"`     // null for directories
	Modified int64  `json:"modified"` // unix seconds
}

// FileList answers a list request.
type FileList struct {
	Type    string          `json:"type"` // "file_list"
	Path    string          `json:"path"`
	Entries []FileEntry     `json:"entries"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// FileContent answers a read request.
type FileContent struct {
	Type    string          `json:"type"` // "file_content"
	Path    string          `json:"path"`
	Content string          `json:"content"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// PathDone answers write, mkdir and delete: Type is "write_success",
// "mkdir_success" or "delete_success".
type PathDone struct {
	Type string          `json:"type"`
	Path string          `json:"path"`
	ID   json.RawMessage `json:"id,omitempty"`
}

// Renamed answers a rename request.
type Renamed struct {
	Type string          `json:"type"` // "rename_success"
	From string          `json:"from"`
	To   string          `json:"to"`
	ID   json.RawMessage `json:"id,omitempty"`
}

// FsEvent reports a change below the watched path. It never carries an id.
type FsEvent struct {
	Type      string   `json:"type"` // "fs_event"
	EventKind string   `json:"eventKind"`
	Paths     []string `json:"paths"` // absolute
}

// Error reports a failed request (with its id) or a watch problem (without).
type Error struct {
	Type    string          `json:"type"` // "error"
	Message string          `json:"message"`
	ID      json.RawMessage `json:"id,omitempty"`
}
