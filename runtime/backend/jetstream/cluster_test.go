package jetstream_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestStreamLeaderKilledMidLoad: turns keep appending on R3 while the
// history stream's leader is killed; every acked step is stored exactly
// once and in order, and no lease is lost to the election.
func TestStreamLeaderKilledMidLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster takes seconds to start")
	}
	c := natstest.Three(t)
	// The default TTL: a lease must outlast an election (its key's
	// expiry waits for the new leader too), which takes a second or two.
	b, err := jetstream.Open(context.Background(), jetstream.Options{URL: c.URL(), Replica: "writer", Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const sessions, steps = 4, 60
	var ids []string
	for range sessions {
		m := session.NewMeta(time.Now())
		if err := b.Sessions().Create(m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	acked := make([]int, sessions)
	var wg sync.WaitGroup
	halfway := make(chan struct{}, sessions)
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := b.Leaser().Acquire(id)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Release()
			s := session.Fenced(b.Sessions(), id, l)
			for n := range steps {
				if n == steps/2 {
					halfway <- struct{}{}
				}
				msg := message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(fmt.Sprint(n))}}
				if err := s.Append(id, msg); err != nil {
					t.Errorf("session %d step %d: %v", i, n, err)
					return
				}
				acked[i]++
			}
		}()
	}
	for range sessions {
		<-halfway
	}
	leader := c.Leader("openheim_msgs")
	if leader == nil {
		t.Fatal("no stream leader")
	}
	killed := time.Now()
	leader.Stop()
	wg.Wait()
	t.Logf("leader %s killed; the writers finished %v later", leader.Name, time.Since(killed))
	for i, id := range ids {
		got := texts(t, b, id)
		if len(got) != acked[i] {
			t.Fatalf("session %d: %d acked, %d stored", i, acked[i], len(got))
		}
		for n, s := range got {
			if s != fmt.Sprint(n) {
				t.Fatalf("session %d: message %d is %q", i, n, s)
			}
		}
	}
}

func texts(t *testing.T, b interface{ Sessions() session.Source }, id string) []string {
	t.Helper()
	conv, err := b.Sessions().Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range conv.Messages {
		out = append(out, m.JoinText())
	}
	return out
}
