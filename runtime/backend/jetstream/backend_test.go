package jetstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/backend/backendtest"
	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/session"
)

const testTTL = time.Second

func open(t *testing.T, url, replica string, replicas int) *jetstream.Backend {
	t.Helper()
	b, err := jetstream.Open(context.Background(), jetstream.Options{URL: url, Replica: replica,
		Replicas: replicas, LeaseTTL: testTTL, Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func harness(replicas int, cluster func(testing.TB) *natstest.Cluster) backendtest.Harness {
	return backendtest.Harness{
		Open: func(t *testing.T) (backend.Backend, backend.Backend) {
			c := cluster(t)
			return open(t, c.URL(), "first", replicas), open(t, c.URL(), "peer", replicas)
		},
		Expire: func(t *testing.T, held session.Lease) {
			jetstream.Pause(held)
			time.Sleep(testTTL + 200*time.Millisecond)
		},
	}
}

// TestContractSingleNode runs the store contract on one node (R1).
func TestContractSingleNode(t *testing.T) {
	backendtest.Run(t, harness(1, natstest.Single))
}

// TestContractThreeNodes runs it on three nodes (R3): a reused message
// id is answered "duplicate" before the sequence check there, and a
// Create right after an expiry may be refused for a moment.
func TestContractThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster takes seconds to start")
	}
	backendtest.Run(t, harness(3, natstest.Three))
}
