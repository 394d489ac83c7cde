package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/message"
)

// Headers of a history entry (one stream message per step).
const (
	hIndex = "Oh-Index" // the step's first message's place in the history
	hCount = "Oh-Count" // how many messages it holds (0: a lease marker)
	hBlob  = "Oh-Blob"  // the object holding the step, when it is too large
	hLease = "Oh-Lease" // a lease marker: the new holder's epoch
)

// errFenced says the history moved on under an append: another holder
// wrote since this writer last did (it lost its lease).
var errFenced = errors.New("the session's history was written by another holder")

// isWrongSeq tells a failed expected-sequence check (10071 on one node,
// 10164 on replicated streams).
func isWrongSeq(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// tip is where a session's history ends: the stream sequence of its last
// entry (0: none) and the index the next message gets.
type tip struct {
	seq  uint64
	next int
	id   string // the last entry's message id
}

func (b *Backend) tip(_ context.Context, id string) (tip, error) {
	m, err := again(func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return b.msgs.GetLastMsgForSubject(ctx, b.subject(id))
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return tip{}, nil
	}
	if err != nil {
		return tip{}, err
	}
	idx, n := entryRange(m.Header)
	return tip{seq: m.Sequence, next: idx + n, id: m.Header.Get(jetstream.MsgIDHeader)}, nil
}

func entryRange(h nats.Header) (index, count int) {
	index, _ = strconv.Atoi(h.Get(hIndex))
	count, _ = strconv.Atoi(h.Get(hCount))
	return index, count
}

// put appends one entry to session id's history at t, with a message id
// that names the writer's epoch: retried after a lost answer it is stored
// once. It returns the new tip; errFenced when the history moved past t.
func (b *Backend) put(id string, t tip, epoch uint64, msgs []message.Message, lease bool) (tip, error) {
	m := nats.NewMsg(b.subject(id))
	m.Header.Set(hIndex, strconv.Itoa(t.next))
	m.Header.Set(hCount, strconv.Itoa(len(msgs)))
	msgID := fmt.Sprintf("%s:%d:%d", id, t.next, epoch)
	if lease {
		m.Header.Set(hLease, strconv.FormatUint(epoch, 10))
		msgID = fmt.Sprintf("%s:lease:%d", id, epoch)
	} else {
		data, err := json.Marshal(msgs)
		if err != nil {
			return t, err
		}
		if len(data) > b.inlineMax() {
			name := fmt.Sprintf("step/%s/%d-%d", id, t.next, epoch)
			ctx, cancel := context.WithTimeout(context.Background(), 4*opTimeout)
			err := b.putBlob(ctx, name, data)
			cancel()
			if err != nil {
				return t, fmt.Errorf("storing a large step: %w", err)
			}
			m.Header.Set(hBlob, name)
			data = nil
		}
		m.Data = data
	}
	return b.publish(m, t, msgID, len(msgs))
}

// ackWait bounds waiting for one attempt's ack: an append takes a few ms
// on R3, and one sent to a leader that just died is never answered, so
// waiting long only lengthens the gap an election leaves.
const ackWait = 500 * time.Millisecond

// publish sends m with the expected sequence of t, riding out a leader
// election (no answer) by retrying with the same message id.
func (b *Backend) publish(m *nats.Msg, t tip, msgID string, count int) (tip, error) {
	deadline := time.Now().Add(4 * opTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), ackWait)
		ack, err := b.js.PublishMsg(ctx, m, jetstream.WithMsgID(msgID), jetstream.WithExpectLastSequencePerSubject(t.seq))
		cancel()
		if err == nil {
			return tip{seq: ack.Sequence, next: t.next + count, id: msgID}, nil
		}
		if isWrongSeq(err) {
			cur, moved, err := b.movedTip(m.Subject[len(b.opts.Prefix)+5:], t, msgID)
			if err != nil || moved {
				return cur, err
			}
			// The history is where we left it: the answer came from a
			// leader not caught up yet (an election); try again.
			if time.Now().After(deadline) {
				return t, errFenced
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if !retryable(err) && !inProcess(err) || time.Now().After(deadline) {
			return t, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// movedTip reads the history's tip after an append was answered "wrong
// last sequence" (moved false: the history is still at t, the answer
// stale). Moved, it is ours when its last entry is our earlier attempt,
// else errFenced. A leader just elected may not have applied everything
// yet when it answers, so a tip that is neither is read again for a
// little while.
func (b *Backend) movedTip(id string, t tip, msgID string) (tip, bool, error) {
	for try := 0; ; try++ {
		ctx, cancel := b.ctx()
		cur, err := b.tip(ctx, id)
		cancel()
		switch {
		case err != nil:
			return t, true, err // unknown: not a reason to give the lease up
		case cur.id == msgID:
			return cur, true, nil
		case cur.seq == t.seq:
			return t, false, nil
		case try >= 5:
			return t, true, errFenced
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// errCodeDuplicateInProcess is nats-server's JSStreamDuplicateMessageConflict.
const errCodeDuplicateInProcess = 10158

// inProcess tells that a message of this id is being stored: our earlier
// attempt, its ack not back within ackWait (a loaded cluster); the next
// attempt gets that entry's ack as a duplicate, or the wrong sequence
// that publish checks against our id.
func inProcess(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == errCodeDuplicateInProcess
}

// retryable errors are the cluster not answering for now, or the
// stream's consumer limit reached: every read holds a consumer for a
// moment, and nats-server caps a stream at 1,000 by default, which a
// thousand sessions starting turns at once reach (serve-cluster.sh).
// errBehind says the stream's leader lacks a message known to be stored:
// one just elected that has not caught up.
var errBehind = errors.New("the stream's leader is behind")

func retryable(err error) bool {
	return errors.Is(err, errBehind) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, jetstream.ErrMaximumConsumersLimit)
}

// again runs the read f, again while the cluster does not answer for now
// (an election after a server died takes a few seconds).
func again[T any](f func(ctx context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(4 * opTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		v, err := f(ctx)
		cancel()
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			return v, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// putBlob stores data as object name in chunks that fit in a message: the
// library's default chunk (128 KiB) is refused by a server whose
// max_payload is smaller.
func (b *Backend) putBlob(ctx context.Context, name string, data []byte) error {
	chunk := uint32(min(128<<10, max(b.nc.MaxPayload()-1024, 512)))
	_, err := b.blobs.Put(ctx, jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}, bytes.NewReader(data))
	return err
}

// inlineMax is the largest step kept in the stream message itself.
func (b *Backend) inlineMax() int {
	return int(min(b.nc.MaxPayload()/2, 512<<10))
}

// read returns session id's history up to the entry at seq (0: all), of
// count messages (-1: not known), calling visit with each entry's headers
// when set.
func (b *Backend) read(id string, upTo uint64, count int, visit func(nats.Header)) ([]message.Message, error) {
	deadline := time.Now().Add(4 * opTimeout)
	for {
		msgs, err := b.readOnce(id, upTo, count, visit)
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			return msgs, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shortHistory is the most messages read entry by entry from the stream's
// leader rather than through a consumer: creating and deleting one are
// requests to the meta leader, which every turn of a busy server would
// queue on (1,000 first turns at once waited seconds).
const shortHistory = 64

func (b *Backend) readOnce(id string, upTo uint64, count int, visit func(nats.Header)) ([]message.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*opTimeout)
	defer cancel()
	if upTo == 0 {
		t, err := b.tip(ctx, id)
		if err != nil || t.seq == 0 || t.next == 0 {
			return []message.Message{}, err // no message stored (lease marks at most)
		}
		upTo, count = t.seq, t.next
	}
	if count >= 0 && count <= shortHistory {
		return b.readByGet(ctx, id, upTo, visit)
	}
	return b.readByConsumer(ctx, id, upTo, visit)
}

// readByGet reads the history entry by entry: each the subject's next
// message, from the stream's leader.
func (b *Backend) readByGet(ctx context.Context, id string, upTo uint64, visit func(nats.Header)) ([]message.Message, error) {
	out := []message.Message{}
	for seq := uint64(1); seq <= upTo; {
		m, err := again(func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
			return b.msgs.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(b.subject(id)))
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) || (err == nil && m.Sequence > upTo) {
			// A leader just elected may not have it yet: read again.
			return nil, fmt.Errorf("session %s: history ends before sequence %d: %w", id, upTo, errBehind)
		}
		if err != nil {
			return nil, err
		}
		if visit != nil {
			visit(m.Header)
		}
		if out, err = b.decode(ctx, out, m.Header, m.Data); err != nil {
			return nil, err
		}
		seq = m.Sequence + 1
	}
	return out, nil
}

// readByConsumer reads the history through an ordered consumer, in
// batches.
func (b *Backend) readByConsumer(ctx context.Context, id string, upTo uint64, visit func(nats.Header)) ([]message.Message, error) {
	cons, err := again(func(ctx context.Context) (jetstream.Consumer, error) {
		return b.js.OrderedConsumer(ctx, b.name("msgs"), jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{b.subject(id)}, InactiveThreshold: 5 * time.Second})
	})
	if err != nil {
		return nil, err
	}
	defer b.js.DeleteConsumer(context.Background(), b.name("msgs"), cons.CachedInfo().Name)
	out := []message.Message{}
	for {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(opTimeout))
		if err != nil {
			return nil, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			if meta.Sequence.Stream > upTo {
				return out, nil
			}
			if visit != nil {
				visit(m.Headers())
			}
			if out, err = b.decode(ctx, out, m.Headers(), m.Data()); err != nil {
				return nil, err
			}
			if meta.Sequence.Stream == upTo {
				return out, nil
			}
		}
		if err := batch.Error(); err != nil {
			return nil, err
		}
		if got == 0 {
			return nil, fmt.Errorf("session %s: history ends before sequence %d", id, upTo)
		}
	}
}

// decode appends the messages of one entry to out.
func (b *Backend) decode(ctx context.Context, out []message.Message, h nats.Header, data []byte) ([]message.Message, error) {
	idx, n := entryRange(h)
	if n == 0 {
		return out, nil
	}
	if idx != len(out) {
		return nil, fmt.Errorf("history entry at index %d follows %d messages", idx, len(out))
	}
	msgs, err := b.entry(ctx, h, data)
	return append(out, msgs...), err
}

// entry decodes one entry's messages, reading its object when it has one.
func (b *Backend) entry(ctx context.Context, h nats.Header, data []byte) ([]message.Message, error) {
	idx, _ := entryRange(h)
	if name := h.Get(hBlob); name != "" {
		var err error
		if data, err = b.blobs.GetBytes(ctx, name); err != nil {
			return nil, fmt.Errorf("reading a large step (%s): %w", name, err)
		}
	}
	var msgs []message.Message
	if err := json.Unmarshal(data, &msgs); err != nil {
		return nil, fmt.Errorf("corrupt history entry at index %d: %w", idx, err)
	}
	return msgs, nil
}

// entryHolding returns the messages around message p of session id's
// history, and the index of the first: the last entry's when it holds p
// (a watcher reading what was just committed: one request and its object),
// else the whole history's.
func (b *Backend) entryHolding(id string, p int) (int, []message.Message, error) {
	m, err := again(func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return b.msgs.GetLastMsgForSubject(ctx, b.subject(id))
	})
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil, err
	}
	if err == nil {
		if idx, n := entryRange(m.Header); idx <= p && p < idx+n {
			ctx, cancel := context.WithTimeout(context.Background(), 4*opTimeout)
			defer cancel()
			msgs, err := b.entry(ctx, m.Header, m.Data)
			return idx, msgs, err
		}
	}
	msgs, err := b.read(id, 0, -1, nil)
	return 0, msgs, err
}
