package jetstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/atomicfile"
)

// CatchUp returns the function that brings a replica's derived data (its
// session index) up to date with what any replica wrote: it reads, headers
// only, the history stream and the metas bucket from where the last call
// stopped (kept in stampPath) and calls mark with every session changed
// since. The first call, with no stamp, marks every session.
func (b *Backend) CatchUp(stampPath string) func(mark func(id string)) error {
	return func(mark func(id string)) error {
		var from [2]uint64
		if data, err := os.ReadFile(stampPath); err == nil {
			fmt.Sscanf(string(data), "%d %d", &from[0], &from[1])
		}
		ctx, cancel := context.WithTimeout(context.Background(), 6*opTimeout)
		defer cancel()
		msgsPrefix := b.opts.Prefix + ".msg."
		metasPrefix := "$KV." + b.name("sessions") + "."
		var err error
		if from[0], err = b.follow(ctx, b.name("msgs"), from[0], msgsPrefix, mark); err != nil {
			return err
		}
		if from[1], err = b.follow(ctx, "KV_"+b.name("sessions"), from[1], metasPrefix, mark); err != nil {
			return err
		}
		return atomicfile.Write(stampPath, fmt.Appendf(nil, "%d %d\n", from[0], from[1]), 0o600)
	}
}

// follow marks the session of every entry of stream after seq and returns
// the last sequence read.
func (b *Backend) follow(ctx context.Context, stream string, seq uint64, prefix string, mark func(string)) (uint64, error) {
	s, err := b.js.Stream(ctx, stream)
	if err != nil {
		return seq, err
	}
	last := s.CachedInfo().State.LastSeq
	if last <= seq {
		return last, nil
	}
	cfg := jetstream.OrderedConsumerConfig{HeadersOnly: true, InactiveThreshold: 5 * time.Second}
	if seq > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, seq+1
	}
	cons, err := b.js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return seq, err
	}
	defer b.js.DeleteConsumer(context.Background(), stream, cons.CachedInfo().Name)
	for seq < last {
		batch, err := cons.Fetch(1024, jetstream.FetchMaxWait(opTimeout))
		if err != nil {
			return seq, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				return seq, err
			}
			seq = meta.Sequence.Stream
			if id, ok := strings.CutPrefix(m.Subject(), prefix); ok {
				mark(id)
			}
			if seq >= last || meta.NumPending == 0 {
				// Caught up: the batch would otherwise wait to fill.
				return max(seq, last), nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return seq, err
		}
		if got == 0 {
			break // the rest was deleted (a purged session)
		}
	}
	return max(seq, last), nil
}
