package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/openheim/openheim/runtime/atomicfile"
	"github.com/openheim/openheim/runtime/message"
)

// TrashDir is the subdirectory of the history dir holding trashed sessions.
const TrashDir = "trash"

func (s *FileStore) trashPath(name string) string { return filepath.Join(s.Dir, TrashDir, name) }

// locker takes the session's turn lease around Trash and Purge: a turn still
// running would otherwise recreate the jsonl with its next Append.
func (s *FileStore) locker() *Locker { return &Locker{Dir: s.Dir, Warn: s.warn} }

// Trash implements Store. The meta moves first so a crash midway leaves a
// session that is merely invisible, never one that lists with no messages;
// calling Trash again finishes the move.
func (s *FileStore) Trash(id string) error {
	lease, err := s.locker().Acquire(id)
	if err != nil {
		return err
	}
	defer lease.Release()
	names := []string{id + ".json", id + ".jsonl"}
	var live []string
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(s.Dir, n)); err == nil {
			live = append(live, n)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if len(live) == 0 {
		removeLease(s.Dir, id) // the one taking the lease just made
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, TrashDir), 0o700); err != nil {
		return fmt.Errorf("trash session %s: %w", id, err)
	}
	for _, n := range live {
		if err := os.Rename(filepath.Join(s.Dir, n), s.trashPath(n)); err != nil {
			return fmt.Errorf("trash session %s: %w", id, err)
		}
	}
	if err := atomicfile.SyncDir(filepath.Join(s.Dir, TrashDir)); err != nil {
		return err
	}
	removeLease(s.Dir, id)
	return atomicfile.SyncDir(s.Dir)
}

// removeLease removes the session's lease and fence files once the session
// is gone; the caller holds its lease, so a fence that still runs is
// refused by its lease check (the lease is gone), whichever file it
// locked, and the caller's release finds nothing to mark. Files left
// behind are harmless.
func removeLease(dir, id string) {
	os.Remove(LockPath(dir, id))
	os.Remove(fencePath(dir, id))
}

// Purge implements Store.
func (s *FileStore) Purge(id string) error {
	lease, err := s.locker().Acquire(id)
	if err != nil {
		return err
	}
	defer lease.Release()
	found := false
	for _, p := range []string{s.metaPath(id), s.msgsPath(id), s.trashPath(id + ".json"), s.trashPath(id + ".jsonl")} {
		err := os.Remove(p)
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("purge session %s: %w", id, err)
		}
	}
	removeLease(s.Dir, id) // taking the lease made one even if !found
	if !found {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return nil
}

// MessageCount implements Store by counting newlines: Append writes one
// message per line, and an unterminated torn tail is not a message, exactly
// as Load sees it, without paying for JSON decoding.
func (s *FileStore) MessageCount(id string) (int, error) {
	if err := ValidateID(id); err != nil {
		return 0, err
	}
	f, err := os.Open(s.msgsPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(s.metaPath(id)); err != nil {
			return 0, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 128<<10)
	n := 0
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// Fork copies the first upTo messages of session id into a new session
// created at now (upTo < 0 or past the end copies all). The cut is moved
// forward past tool results answering the last assistant's tool calls,
// because providers reject a tool_use with no matching tool_result.
func Fork(s Store, id string, upTo int, now time.Time) (Meta, error) {
	conv, err := s.Load(id)
	if err != nil {
		return Meta{}, err
	}
	msgs := conv.Messages[:forkCut(conv.Messages, upTo)]
	old := conv.Meta
	m := NewMeta(now)
	if old.Title != nil {
		m.Title = Str(*old.Title + " (fork)")
	}
	m.Model, m.Provider, m.Cwd = cloneStr(old.Model), cloneStr(old.Provider), cloneStr(old.Cwd)
	m.Skills = append([]string{}, old.Skills...)
	if err := s.Create(m); err != nil {
		return Meta{}, err
	}
	if len(msgs) > 0 {
		if err := s.Append(m.ID, msgs...); err != nil {
			// A fork missing messages would pass for a real one; drop it.
			s.Purge(m.ID)
			return Meta{}, fmt.Errorf("fork session %s: %w", id, err)
		}
	}
	return m, nil
}

// forkCut returns how many of msgs a fork at upTo keeps.
func forkCut(msgs []message.Message, upTo int) int {
	if upTo < 0 || upTo >= len(msgs) {
		return len(msgs)
	}
	if upTo == 0 {
		return 0
	}
	// Find the message the tool results at the cut would answer.
	i := upTo - 1
	for i >= 0 && msgs[i].Role == message.RoleTool {
		i--
	}
	if i < 0 || msgs[i].Role != message.RoleAssistant || len(msgs[i].ToolUses()) == 0 {
		return upTo
	}
	n := upTo
	for n < len(msgs) && msgs[n].Role == message.RoleTool {
		n++
	}
	return n
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
