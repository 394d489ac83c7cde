package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/openheim/openheim/runtime/atomicfile"
	"github.com/openheim/openheim/runtime/message"
)

// Store keeps conversations. FileStore is the embedded default; the
// interface lets another backend be added later.
type Store interface {
	// Create stores a new, empty session.
	Create(meta Meta) error
	// Load returns a session's meta and messages.
	Load(id string) (*Conversation, error)
	// LoadMeta returns a session's meta only.
	LoadMeta(id string) (*Meta, error)
	// SaveMeta replaces a session's meta atomically.
	SaveMeta(meta Meta) error
	// Append adds messages and makes them durable before returning.
	Append(id string, msgs ...message.Message) error
	// List returns every live session's meta, most recently updated first.
	List() ([]Meta, error)
	// Trash moves a session out of List's sight without deleting anything.
	Trash(id string) error
	// Purge deletes a session for good, whether live or in the trash.
	Purge(id string) error
	// MessageCount returns how many messages a session holds, cheaply.
	MessageCount(id string) (int, error)
}

// FileStore keeps sessions as files under Dir (the data dir's history/).
type FileStore struct {
	Dir string
	// Warn receives recoverable problems (a torn last line); default slog.
	Warn func(msg string)
}

// NewFileStore returns a store in dir, creating it if needed.
func NewFileStore(dir string) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return &FileStore{Dir: dir}, nil
}

func (s *FileStore) metaPath(id string) string { return filepath.Join(s.Dir, id+".json") }
func (s *FileStore) msgsPath(id string) string { return filepath.Join(s.Dir, id+".jsonl") }

func (s *FileStore) warn(msg string) {
	if s.Warn != nil {
		s.Warn(msg)
		return
	}
	slog.Warn(msg)
}

// Create implements Store.
func (s *FileStore) Create(meta Meta) error {
	if err := ValidateID(meta.ID); err != nil {
		return err
	}
	// Its lease file too (empty: free), so that its first turn, when 1,000
	// may start at once, creates no file (see writeLease).
	err := inDir(s.Dir, func() error {
		if err := createEmpty(s.msgsPath(meta.ID), os.O_EXCL); err != nil {
			return err
		}
		return createEmpty(LockPath(s.Dir, meta.ID), 0)
	})
	if err != nil {
		return fmt.Errorf("create session %s: %w", meta.ID, err)
	}
	return s.writeMeta(meta, true)
}

// createEmpty creates the empty file at path (with flag os.O_EXCL: only if
// it does not exist).
func createEmpty(path string, flag int) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|flag, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// LoadMeta implements Store.
func (s *FileStore) LoadMeta(id string) (*Meta, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(s.metaPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", s.metaPath(id), err)
	}
	if m.Skills == nil {
		m.Skills = []string{}
	}
	return &m, nil
}

// Load implements Store.
func (s *FileStore) Load(id string) (*Conversation, error) {
	meta, err := s.LoadMeta(id)
	if err != nil {
		return nil, err
	}
	msgs, err := s.readMessages(id)
	if err != nil {
		return nil, err
	}
	return &Conversation{Meta: *meta, Messages: msgs}, nil
}

// readMessages parses the jsonl file. A torn last line (a crash mid-append)
// is dropped with a warning; a corrupt line anywhere else fails the load with
// the file and line, because silently skipping it would lose history.
func (s *FileStore) readMessages(id string) ([]message.Message, error) {
	path := s.msgsPath(id)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []message.Message{}, nil
	}
	if err != nil {
		return nil, err
	}
	msgs := []message.Message{}
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m message.Message
		if err := json.Unmarshal(line, &m); err != nil {
			if isLastLine(lines, i) {
				s.warn(fmt.Sprintf("%s:%d: dropped a torn last line (%d bytes)", path, i+1, len(line)))
				break
			}
			return nil, fmt.Errorf("%s:%d: corrupt message: %w", path, i+1, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func isLastLine(lines [][]byte, i int) bool {
	for _, l := range lines[i+1:] {
		if len(bytes.TrimSpace(l)) > 0 {
			return false
		}
	}
	return true
}

// SaveMeta implements Store: temp file, fsync, rename, so a crash leaves
// either the old meta or the new one.
func (s *FileStore) SaveMeta(meta Meta) error { return s.writeMeta(meta, false) }

// writeMeta replaces the meta file atomically. Only a new session's needs
// the directory synced: a rewrite lost to a crash leaves the previous,
// complete meta, and each directory sync is a journal commit that stalls
// every other session's file creation.
func (s *FileStore) writeMeta(meta Meta, isNew bool) error {
	if err := ValidateID(meta.ID); err != nil {
		return err
	}
	if meta.Skills == nil {
		meta.Skills = []string{}
	}
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	sync := atomicfile.SyncFile
	if isNew {
		sync = atomicfile.SyncAll
	}
	return replaceFile(s.metaPath(meta.ID), append(data, '\n'), sync)
}

// Append implements Store.
func (s *FileStore) Append(id string, msgs ...message.Message) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, m := range msgs {
		line, err := json.Marshal(m)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	// Without O_CREATE first: creating takes the directory's lock even when
	// the file exists, and a server appends to many sessions at once.
	f, err := os.OpenFile(s.msgsPath(id), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		err = inDir(s.Dir, func() (err error) {
			f, err = os.OpenFile(s.msgsPath(id), os.O_RDWR|os.O_CREATE, 0o600)
			return err
		})
	}
	if err != nil {
		return err
	}
	defer f.Close()
	end, err := dropTornTail(f)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(buf.Bytes(), end); err != nil {
		return err
	}
	return f.Sync()
}

// dropTornTail truncates an unterminated last line left by a crash, so the
// next append starts on a line of its own, and returns the new end offset.
func dropTornTail(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size == 0 {
		return 0, nil
	}
	const chunk = 64 << 10
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	// Find the last newline, scanning backwards.
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	return end, f.Truncate(end)
}

// List implements Store.
func (s *FileStore) List() ([]Meta, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, e := range entries {
		if e.IsDir() { // trash/ and anything else that is not a session
			continue
		}
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || ValidateID(id) != nil {
			continue
		}
		m, err := s.LoadMeta(id)
		if err != nil {
			s.warn(fmt.Sprintf("skipping session %s: %v", id, err))
			continue
		}
		out = append(out, *m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

// Latest returns the most recently updated session whose cwd is cwd, not
// counting subagents' runs (sessions with a Parent): they are not the
// conversation the user continues.
func Latest(s Store, cwd string) (*Meta, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, m := range all {
		if m.Cwd != nil && *m.Cwd == cwd && m.Parent == nil {
			return &m, nil
		}
	}
	return nil, fmt.Errorf("%w: no session in %s", ErrNotFound, cwd)
}

// LoadMessage returns message n (0-based) of a session, decoding only that
// line: search results show a snippet of one message per session.
func (s *FileStore) LoadMessage(id string, n int) (message.Message, error) {
	if err := ValidateID(id); err != nil {
		return message.Message{}, err
	}
	data, err := os.ReadFile(s.msgsPath(id))
	if err != nil {
		return message.Message{}, err
	}
	for i := 0; len(data) > 0; {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue // as readMessages does
		}
		if i == n {
			var m message.Message
			err := json.Unmarshal(line, &m)
			return m, err
		}
		i++
	}
	return message.Message{}, fmt.Errorf("session %s has no message %d", id, n)
}
