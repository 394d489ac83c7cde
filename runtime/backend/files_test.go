package backend_test

import (
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/backend/backendtest"
	"github.com/openheim/openheim/runtime/session"
)

// TestFileBackendContract runs the store contract on the file backend;
// the peer stands for another process on another host, whose clock Expire
// moves past the lease's staleness.
func TestFileBackendContract(t *testing.T) {
	const stale = time.Minute
	var skew time.Duration
	backendtest.Run(t, backendtest.Harness{
		Open: func(t *testing.T) (backend.Backend, backend.Backend) {
			home := t.TempDir()
			skew = 0
			first, err := backend.OpenFiles(home, func(s string) { t.Log(s) })
			if err != nil {
				t.Fatal(err)
			}
			peer, err := backend.OpenFiles(home, func(s string) { t.Log(s) })
			if err != nil {
				t.Fatal(err)
			}
			first.Locker().Stale = stale
			pl := peer.Locker()
			pl.Stale, pl.Host = stale, "peer-host"
			pl.Now = func() time.Time { return time.Now().Add(skew) }
			return first, peer
		},
		Expire: func(t *testing.T, _ session.Lease) { skew = 2 * stale },
	})
}
