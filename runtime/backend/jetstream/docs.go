package jetstream

import (
	"context"
	"errors"
	"sort"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/backend"
)

// docs is backend.Docs over one KV bucket.
type docs struct{ kv jetstream.KeyValue }

func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

func (d *docs) Get(key string) ([]byte, bool, error) {
	if err := backend.ValidKey(key); err != nil {
		return nil, false, err
	}
	ctx, cancel := timeout()
	defer cancel()
	e, err := d.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return e.Value(), true, nil
}

func (d *docs) Put(key string, data []byte) error {
	if err := backend.ValidKey(key); err != nil {
		return err
	}
	ctx, cancel := timeout()
	defer cancel()
	_, err := d.kv.Put(ctx, key, data)
	return err
}

func (d *docs) Delete(key string) error {
	if err := backend.ValidKey(key); err != nil {
		return err
	}
	ctx, cancel := timeout()
	defer cancel()
	return d.kv.Purge(ctx, key)
}

func (d *docs) Keys() ([]string, error) {
	ctx, cancel := timeout()
	defer cancel()
	keys, err := d.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	sort.Strings(keys)
	return keys, err
}
