package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// sessionStore is session.Source over the metas bucket and the history
// stream.
type sessionStore struct{ b *Backend }

var _ session.Source = (*sessionStore)(nil)

// record is a meta as the bucket keeps it: trashed sessions stay, marked.
type record struct {
	Meta    session.Meta `json:"meta"`
	Trashed bool         `json:"trashed,omitempty"`
}

func notFound(id string) error { return fmt.Errorf("%w: %s", session.ErrNotFound, id) }

// get returns session id's record and its revision.
func (s *sessionStore) get(id string) (record, uint64, error) {
	if err := session.ValidateID(id); err != nil {
		return record{}, 0, err
	}
	e, err := again(func(ctx context.Context) (jetstream.KeyValueEntry, error) { return s.b.metas.Get(ctx, id) })
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return record{}, 0, notFound(id)
	}
	if err != nil {
		return record{}, 0, err
	}
	var r record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return record{}, 0, fmt.Errorf("session %s: corrupt meta: %w", id, err)
	}
	if r.Meta.Skills == nil {
		r.Meta.Skills = []string{}
	}
	return r, e.Revision(), nil
}

func encodeRecord(r record) ([]byte, error) {
	if r.Meta.Skills == nil {
		r.Meta.Skills = []string{}
	}
	return json.Marshal(r)
}

// Create implements session.Store.
func (s *sessionStore) Create(meta session.Meta) error {
	if err := session.ValidateID(meta.ID); err != nil {
		return err
	}
	data, err := encodeRecord(record{Meta: meta})
	if err != nil {
		return err
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	if _, err := s.b.metas.Create(ctx, meta.ID, data); err != nil {
		return fmt.Errorf("create session %s: %w", meta.ID, err)
	}
	return nil
}

// LoadMeta implements session.Store.
func (s *sessionStore) LoadMeta(id string) (*session.Meta, error) {
	r, _, err := s.get(id)
	if err != nil {
		return nil, err
	}
	if r.Trashed {
		return nil, notFound(id)
	}
	return &r.Meta, nil
}

// Load implements session.Store. Under a lease held here the history is
// read up to where the lease found it, the place its appends continue.
func (s *sessionStore) Load(id string) (*session.Conversation, error) {
	meta, err := s.LoadMeta(id)
	if err != nil {
		return nil, err
	}
	var upTo uint64
	count := -1
	// Under a lease held here, read up to its mark (none until the mark is
	// written: the lease is still being taken, read it all).
	if l, at := s.b.leaser.marked(id); l != nil {
		if at.next == 0 { // nothing stored before our lease mark
			return &session.Conversation{Meta: *meta, Messages: []message.Message{}}, nil
		}
		upTo, count = at.seq, at.next
	}
	msgs, err := s.b.read(id, upTo, count, nil)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return &session.Conversation{Meta: *meta, Messages: msgs}, nil
}

// SaveMeta implements session.Store. Under a lease held here, the save is
// refused once another holder has the session.
func (s *sessionStore) SaveMeta(meta session.Meta) error {
	if err := session.ValidateID(meta.ID); err != nil {
		return err
	}
	if l := s.b.leaser.holding(meta.ID); l != nil {
		if err := l.check(); err != nil {
			return err
		}
	}
	data, err := encodeRecord(record{Meta: meta})
	if err != nil {
		return err
	}
	// A put sent again after a lost answer writes the same meta.
	_, err = again(func(ctx context.Context) (uint64, error) { return s.b.metas.Put(ctx, meta.ID, data) })
	return err
}

// Append implements session.Store: one history entry, acked by the
// cluster before it returns. Under a lease held here it continues the
// lease's tip (and is refused once another holder wrote); otherwise it
// continues whatever the tip is.
func (s *sessionStore) Append(id string, msgs ...message.Message) error {
	if err := session.ValidateID(id); err != nil {
		return err
	}
	if l, _ := s.b.leaser.marked(id); l != nil {
		return l.append(msgs)
	}
	for range 10 {
		ctx, cancel := s.b.ctx()
		t, err := s.b.tip(ctx, id)
		cancel()
		if err != nil {
			return err
		}
		if _, err = s.b.put(id, t, 0, msgs, false); !errors.Is(err, errFenced) {
			return err
		}
	}
	return fmt.Errorf("session %s: appending: the history kept changing", id)
}

// List implements session.Store.
func (s *sessionStore) List() ([]session.Meta, error) {
	var out []session.Meta
	err := s.each(func(r record) {
		if !r.Trashed {
			out = append(out, r.Meta)
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, err
}

// each calls f with every stored record, in one pass over the bucket.
func (s *sessionStore) each(f func(record)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 6*opTimeout)
	defer cancel()
	return s.b.eachValue(ctx, s.b.metas, func(key string, v []byte) {
		var r record
		if json.Unmarshal(v, &r) != nil {
			s.b.warn(fmt.Sprintf("skipping session %s: corrupt meta", key))
			return
		}
		f(r)
	})
}

// eachValue calls f with every live key of kv and its value, as of the
// call: the watch it reads may be served by a replica that has not yet
// applied what another replica just wrote (a session trashed on A still
// listed on B), so it reads on until it has seen the bucket's last
// message as the stream's leader has it (bounded by catchUp).
func (b *Backend) eachValue(ctx context.Context, kv jetstream.KeyValue, f func(key string, value []byte)) error {
	last, err := b.lastSeq(ctx, kv)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return err
	}
	defer w.Stop()
	live := map[string][]byte{}
	var seen uint64
	var behind <-chan time.Time // set once the watch's initial values are in
	for behind == nil || seen < last {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("watch ended early")
			}
			if e == nil {
				behind = time.After(catchUp)
				continue
			}
			seen = max(seen, e.Revision())
			if e.Operation() == jetstream.KeyValuePut {
				live[e.Key()] = e.Value()
			} else {
				delete(live, e.Key())
			}
		case <-behind:
			last = 0
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for k, v := range live {
		f(k, v)
	}
	return nil
}

// catchUp bounds how long eachValue waits for a lagging replica.
const catchUp = 2 * time.Second

// lastSeq is the sequence of kv's last stored message, from the stream's
// leader (0: none). Not the stream's LastSeq: that may name a message gone
// since (a key's TTL, the bucket's age limit), which no watch delivers.
func (b *Backend) lastSeq(ctx context.Context, kv jetstream.KeyValue) (uint64, error) {
	name := "KV_" + kv.Bucket()
	st, ok := b.kvStreams.Load(name)
	if !ok {
		s, err := b.js.Stream(ctx, name)
		if err != nil {
			return 0, err
		}
		st, _ = b.kvStreams.LoadOrStore(name, s)
	}
	m, err := st.(jetstream.Stream).GetLastMsgForSubject(ctx, "$KV."+kv.Bucket()+".>")
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return m.Sequence, nil
}

// IDs implements session.Source.
func (s *sessionStore) IDs() ([]string, error) {
	var ids []string
	err := s.each(func(r record) {
		if !r.Trashed {
			ids = append(ids, r.Meta.ID)
		}
	})
	sort.Strings(ids)
	return ids, err
}

// Version implements session.Source: the metas bucket's last sequence.
func (s *sessionStore) Version() string {
	ctx, cancel := s.b.ctx()
	defer cancel()
	st, err := s.b.metas.Status(ctx)
	if err != nil {
		return ""
	}
	info := st.(*jetstream.KeyValueBucketStatus).StreamInfo()
	return strconv.FormatUint(info.State.LastSeq, 10)
}

// MessageCount implements session.Store from the history's tip.
func (s *sessionStore) MessageCount(id string) (int, error) {
	if _, err := s.LoadMeta(id); err != nil {
		return 0, err
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	t, err := s.b.tip(ctx, id)
	return t.next, err
}

// LoadMessage implements session.Source.
func (s *sessionStore) LoadMessage(id string, n int) (message.Message, error) {
	from, msgs, err := s.b.entryHolding(id, n)
	if err != nil {
		return message.Message{}, err
	}
	if n < from || n >= from+len(msgs) {
		return message.Message{}, fmt.Errorf("session %s has no message %d", id, n)
	}
	return msgs[n-from], nil
}

// Trash implements session.Store, under the session's lease as the file
// store does: a running turn must not write on.
func (s *sessionStore) Trash(id string) error {
	l, err := s.b.leaser.Acquire(id)
	if err != nil {
		return err
	}
	defer l.Release()
	r, _, err := s.get(id)
	if err != nil {
		return err
	}
	r.Trashed = true
	data, err := encodeRecord(r)
	if err != nil {
		return err
	}
	ctx, cancel := s.b.ctx()
	defer cancel()
	_, err = s.b.metas.Put(ctx, id, data)
	return err
}

// Purge implements session.Store: the meta, the history and its large
// steps are deleted.
func (s *sessionStore) Purge(id string) error {
	l, err := s.b.leaser.Acquire(id)
	if err != nil {
		return err
	}
	defer l.Release()
	if _, _, err := s.get(id); err != nil {
		return err
	}
	var blobs []string
	if _, err := s.b.read(id, 0, -1, func(h nats.Header) {
		if name := h.Get(hBlob); name != "" {
			blobs = append(blobs, name)
		}
	}); err != nil {
		return fmt.Errorf("purge session %s: %w", id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*opTimeout)
	defer cancel()
	if err := s.b.msgs.Purge(ctx, jetstream.WithPurgeSubject(s.b.subject(id))); err != nil {
		return fmt.Errorf("purge session %s: %w", id, err)
	}
	for _, name := range blobs {
		if err := s.b.blobs.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			s.b.warn(fmt.Sprintf("purge session %s: %s: %v", id, name, err))
		}
	}
	return s.b.metas.Purge(ctx, id)
}
