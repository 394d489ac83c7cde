package backend

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
	"github.com/openheim/openheim/runtime/storeerr"
)

// MigrateReport is what a migration found in the destination once done:
// every count is verified there, not merely what was sent.
type MigrateReport struct {
	Sessions int // live sessions, each with all its messages
	Messages int
	Copied   int // sessions created or completed by this run
	Agents   int
	Files    int
	Settings int
}

// MigrateOptions tune Migrate.
type MigrateOptions struct {
	// Progress is told how many sessions are done of how many.
	Progress func(done, total int)
	Warn     func(string)
}

// migrateChunk bounds the messages of one append while copying.
const migrateChunk = 64

// Migrate copies every live session (meta and messages, ids kept), the
// sessions API's settings, uploaded agents and session files from src to
// dst. It is resumable: what dst already has is kept, a session it holds
// in part is completed, and running it again copies nothing new. Each
// session is copied under its lease in src, so a turn running there is
// not copied half-way (it is reported busy: run again later). Trashed
// sessions stay behind.
func Migrate(src, dst Backend, opt MigrateOptions) (MigrateReport, error) {
	var r MigrateReport
	ids, err := src.Sessions().IDs()
	if err != nil {
		return r, fmt.Errorf("listing %s sessions: %w", src.Name(), err)
	}
	var busy []string
	for i, id := range ids {
		copied, n, err := migrateSession(src, dst, id)
		var locked *session.LockedError
		var b *session.BusyError
		switch {
		case errors.As(err, &locked), errors.As(err, &b):
			busy = append(busy, id)
		case err != nil:
			return r, fmt.Errorf("session %s: %w", id, err)
		default:
			r.Sessions++
			r.Messages += n
			if copied {
				r.Copied++
			}
		}
		if opt.Progress != nil {
			opt.Progress(i+1, len(ids))
		}
	}
	if r.Settings, err = migrateDocs(src, dst, "sessions-api"); err != nil {
		return r, fmt.Errorf("settings: %w", err)
	}
	if r.Agents, err = migrateAgents(src, dst, opt.Warn); err != nil {
		return r, fmt.Errorf("agents: %w", err)
	}
	if r.Files, err = migrateFiles(src, dst, ids); err != nil {
		return r, fmt.Errorf("files: %w", err)
	}
	if len(busy) > 0 {
		return r, fmt.Errorf("%d sessions have a turn running (%s...): run the migration again once they end", len(busy), busy[0])
	}
	return r, nil
}

// migrateSession brings dst's copy of session id up to src's and returns
// whether it changed anything and how many messages dst now holds.
func migrateSession(src, dst Backend, id string) (copied bool, n int, err error) {
	lease, err := src.Leaser().Acquire(id)
	if err != nil {
		return false, 0, err
	}
	defer lease.Release()
	conv, err := src.Sessions().Load(id)
	if err != nil {
		return false, 0, err
	}
	d := dst.Sessions()
	have := 0
	if _, err := d.LoadMeta(id); errors.Is(err, session.ErrNotFound) {
		if err := d.Create(conv.Meta); err != nil {
			return false, 0, err
		}
		copied = true
	} else if err != nil {
		return false, 0, err
	} else if have, err = d.MessageCount(id); err != nil {
		return false, 0, err
	}
	if have > len(conv.Messages) {
		return false, 0, fmt.Errorf("the destination holds %d messages, the source %d: it was written to since", have, len(conv.Messages))
	}
	for start := have; start < len(conv.Messages); start += migrateChunk {
		if err := d.Append(id, conv.Messages[start:min(start+migrateChunk, len(conv.Messages))]...); err != nil {
			return copied, 0, err
		}
		copied = true
	}
	if err := d.SaveMeta(conv.Meta); err != nil {
		return copied, 0, err
	}
	n, err = d.MessageCount(id)
	if err == nil && n != len(conv.Messages) {
		err = fmt.Errorf("verify: the destination holds %d messages, the source %d", n, len(conv.Messages))
	}
	return copied, n, err
}

func migrateDocs(src, dst Backend, name string) (int, error) {
	from, err := src.Docs(name)
	if err != nil {
		return 0, err
	}
	to, err := dst.Docs(name)
	if err != nil {
		return 0, err
	}
	keys, err := from.Keys()
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		data, found, err := from.Get(k)
		if err != nil {
			return 0, err
		}
		if found {
			if err := to.Put(k, data); err != nil {
				return 0, err
			}
		}
	}
	return len(keys), nil
}

func migrateAgents(src, dst Backend, warn func(string)) (int, error) {
	from, err := src.Bundles()
	if err != nil {
		return 0, err
	}
	to, err := dst.Bundles()
	if err != nil {
		return 0, err
	}
	agents, err := from.List()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ag := range agents {
		if _, err := to.Get(ag.ID); err == nil {
			n++
			continue
		}
		data, err := from.Bundle(ag.ID)
		if err != nil {
			return n, err
		}
		if err := to.Put(ag, data); errors.Is(err, storeerr.ErrConflict) && warn != nil {
			warn(fmt.Sprintf("agent %s (%s) left behind: %v", ag.ID, ag.Name, err))
			continue
		} else if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func migrateFiles(src, dst Backend, sessions []string) (int, error) {
	const unbounded = 1 << 40
	from, err := src.Files(unbounded, time.Now)
	if err != nil {
		return 0, err
	}
	to, err := dst.Files(unbounded, time.Now)
	if err != nil {
		return 0, err
	}
	imp, ok := to.(sessionfiles.Importer)
	if !ok {
		return 0, fmt.Errorf("the %s backend cannot import files", dst.Name())
	}
	n := 0
	for _, sid := range sessions {
		files, err := from.List(sid)
		if err != nil {
			return n, err
		}
		for _, f := range files {
			if _, err := to.Get(sid, f.ID); err == nil {
				n++
				continue
			}
			_, rc, err := from.Open(sid, f.ID)
			if err != nil {
				return n, err
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err == nil {
				err = imp.Import(sid, f, data)
			}
			if err != nil {
				return n, fmt.Errorf("file %s of session %s: %w", f.ID, sid, err)
			}
			n++
		}
	}
	return n, nil
}
