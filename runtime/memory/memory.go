// Package memory is openheim's long-term memory: notes the model saves with
// `remember` and recalls with `search_memory`, across sessions and across
// processes (an `openheim prompt` while `openheim serve` runs).
//
// Storage, under Options.Dir (DESIGN.md §4):
//
//   - notes.jsonl, the source of truth: an append-only log of changes,
//     fsynced per change; a torn last line (a crash mid-write) is ignored
//     with a warning and cut off by the next write; compacted (temp file,
//     rename, directory fsync) once superseded records outnumber live
//     notes. Ids are integers, never reused. See log.go.
//   - vectors.jsonl, embeddings of notes keyed by note id, the seq of the
//     note's content and the model, when an Embedder is configured.
//   - lock, the file every operation flocks: shared to read, exclusive to
//     write. Each operation first reads what other processes appended, so
//     two Memory values (in one process or two) always see each other's
//     changes.
//
// The bleve index under Options.IndexDir (index/memory) is derived: updated
// on every change, stamped with the log's last seq, caught up or rebuilt
// whenever it is missing or out of step. While another process holds it,
// searches fall back to a plain scan of the log and say so.
package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofrs/flock"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
)

// Note is one remembered note.
type Note struct {
	ID        int64     `json:"id"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Options configure Open.
type Options struct {
	Dir      string // the memory store dir, e.g. <home>/memory
	IndexDir string // the bleve index dir, e.g. <home>/index/memory
	// TopK is Search's default number of notes (config memory.top_k),
	// clamped to 1..config.MaxTopK; 0 means config.DefaultTopK.
	TopK int
	// Embedder makes search semantic as well; nil means keyword only.
	Embedder llm.Embedder
	// EmbeddingModel is stored with each vector: vectors of another model
	// are ignored and the notes re-embedded from their text.
	EmbeddingModel string
	// EmbedTimeout bounds the query embedding of one Search (0: 10 s);
	// past it, Search answers from keywords with a notice.
	EmbedTimeout time.Duration
	// Timeout bounds waiting for another process that holds the index
	// (0: 2 s); past it, Search scans the log instead.
	Timeout time.Duration
	// Progress reports index rebuilds and Reindex's embedding (a TTY
	// bar); nil for none.
	Progress func(done, total int)
	// Warn receives recoverable problems (a torn record, an index that
	// could not be updated); nil discards them.
	Warn func(string)
}

// MaxNoteChars is the longest note, in characters (runes).
const MaxNoteChars = 4000

// lockTimeout bounds waiting for the store lock. Holders keep it for one
// append and an index update (milliseconds), a compaction at worst.
const lockTimeout = 10 * time.Second

var (
	// ErrNotFound is wrapped by errors about a note id that does not exist
	// (any more); the message reads "no note #12".
	ErrNotFound = errors.New("no such note")
	// ErrInvalidNote is wrapped by errors about a note's content: empty,
	// or longer than MaxNoteChars.
	ErrInvalidNote = errors.New("invalid note")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("memory: closed")

	errLocked = errors.New("locked by another process")
)

type notFoundError struct{ id int64 }

func (e *notFoundError) Error() string        { return fmt.Sprintf("no note #%d", e.id) }
func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalidNote }

// Memory is an open memory store. Its methods are safe for concurrent use.
type Memory struct {
	opts Options
	now  func() time.Time

	mu     sync.Mutex // guards everything below and serialises operations
	lock   *flock.Flock
	log    noteLog
	vec    vecStore
	closed bool
}

// Open opens (creating when needed) the memory at opts.Dir and reads the
// log (from notes.heads on, when that cache matches it). The index is
// checked on first use: cheap when it is in step, caught up or rebuilt
// (with Progress) when it is not. An index a search cannot use (another
// process holds it) is a notice, not an error: it scans meanwhile.
func Open(opts Options) (*Memory, error) {
	if opts.Dir == "" || opts.IndexDir == "" {
		return nil, errors.New("memory: Dir and IndexDir are required")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	m := &Memory{opts: opts, now: time.Now, lock: newLock(filepath.Join(opts.Dir, "lock"))}
	m.log = noteLog{file: newJSONL(filepath.Join(opts.Dir, logName)), warn: m.warn}
	m.vec = vecStore{file: newJSONL(filepath.Join(opts.Dir, vecName)), warn: m.warn}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.locked(false, func() error { return nil }); err != nil {
		m.closeLocked()
		return nil, err
	}
	// The index is checked by its first use, not here: a search opens it
	// anyway (in step: one open instead of two per `memory search`), and a
	// change catches it up or rebuilds it as this did.
	return m, nil
}

// Close releases the store. Closing twice is harmless.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked()
	return nil
}

func (m *Memory) closeLocked() {
	if m.closed {
		return
	}
	m.closed = true
	m.log.notes.release()
	m.log.file.close()
	m.vec.file.close()
	_ = m.lock.Close()
}

// locked runs fn holding the store lock (exclusive when excl), after
// reading what other processes appended. The caller holds m.mu.
func (m *Memory) locked(excl bool, fn func() error) error {
	if m.closed {
		return ErrClosed
	}
	if err := lockStore(m.lock, excl, lockTimeout); err != nil {
		return fmt.Errorf("memory: %s: %w", m.opts.Dir, err)
	}
	defer m.lock.Unlock()
	if err := m.log.refresh(); err != nil {
		return fmt.Errorf("memory: reading %s: %w", logName, err)
	}
	return fn()
}

func (m *Memory) warn(msg string) {
	if m.opts.Warn != nil {
		m.opts.Warn(msg)
	}
}

func (m *Memory) timeout() time.Duration {
	if m.opts.Timeout > 0 {
		return m.opts.Timeout
	}
	return 2 * time.Second
}

// TopK is the number of notes Search returns for topK: topK itself, or
// the default when it is 0 or less, clamped to 1..config.MaxTopK.
func (m *Memory) TopK(topK int) int {
	if topK <= 0 {
		topK = m.opts.TopK
	}
	if topK <= 0 {
		topK = config.DefaultTopK
	}
	return min(max(topK, 1), config.MaxTopK)
}

// checkContent trims surrounding white space (it carries no meaning and
// would defeat duplicate detection) and enforces 1..MaxNoteChars runes.
func checkContent(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", &invalidError{"note is empty"}
	}
	if n := utf8.RuneCountInString(s); n > MaxNoteChars {
		return "", &invalidError{fmt.Sprintf("note is %d characters; the limit is %d", n, MaxNoteChars)}
	}
	if !utf8.ValidString(s) {
		return "", &invalidError{"note is not valid UTF-8"}
	}
	return s, nil
}

// stamp is the time recorded for a change: UTC, without the monotonic
// reading, so it reads back from the log equal.
func (m *Memory) stamp() time.Time { return m.now().UTC().Round(0) }
