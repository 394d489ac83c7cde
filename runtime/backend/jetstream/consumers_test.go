package jetstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestReadWaitsForAConsumer: a history read needs a consumer of the
// stream for a moment; when the stream is at its consumer limit (a
// thousand sessions starting turns at once reach nats-server's default),
// the read waits for one to go rather than failing the turn.
func TestReadWaitsForAConsumer(t *testing.T) {
	c := natstest.Single(t)
	b := open(t, c.URL(), "A", 1)
	m := session.NewMeta(time.Now())
	if err := b.Sessions().Create(m); err != nil {
		t.Fatal(err)
	}
	l, err := b.Leaser().Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := session.Fenced(b.Sessions(), m.ID, l).Append(m.ID, message.Message{Role: message.RoleUser,
		Content: []message.Block{message.Text("hi")}}); err != nil {
		t.Fatal(err)
	}
	l.Release()
	ctx := context.Background()
	js, _ := jetstream.New(b.Conn())
	s, err := js.Stream(ctx, "openheim_msgs")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.MaxConsumers = 1
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	held, err := js.CreateConsumer(ctx, "openheim_msgs", jetstream.ConsumerConfig{Name: "held"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		js.DeleteConsumer(ctx, "openheim_msgs", held.CachedInfo().Name)
	}()
	conv, err := b.Sessions().Load(m.ID)
	if err != nil || len(conv.Messages) != 1 {
		t.Fatalf("load at the consumer limit: %v %+v", err, conv)
	}
}
