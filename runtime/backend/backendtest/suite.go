// Package backendtest is the contract every backend passes: the same
// tests run against the file backend and the JetStream backend, so a
// transport never has to know which one answers.
package backendtest

import (
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// Harness opens the backend under test.
type Harness struct {
	// Open returns two views over the same fresh, empty storage: first
	// and peer stand for two processes (or two replicas).
	Open func(t *testing.T) (first, peer backend.Backend)
	// Expire makes held, a lease first holds, takeable by peer: as if its
	// holder were paused (no renewal) for longer than the lease lasts.
	Expire func(t *testing.T, held session.Lease)
	// Takeover bounds how long peer may keep retrying after Expire.
	Takeover time.Duration
}

// Run runs the whole contract.
func Run(t *testing.T, h Harness) {
	if h.Takeover <= 0 {
		h.Takeover = 10 * time.Second
	}
	t.Run("Sessions", func(t *testing.T) { testSessions(t, h) })
	t.Run("Leases", func(t *testing.T) { testLeases(t, h) })
	t.Run("Files", func(t *testing.T) { testFiles(t, h) })
	t.Run("Bundles", func(t *testing.T) { testBundles(t, h) })
	t.Run("Docs", func(t *testing.T) { testDocs(t, h) })
}

func text(role message.Role, s string) message.Message {
	return message.Message{Role: role, Content: []message.Block{message.Text(s)}}
}

func newSession(t *testing.T, s session.Store, title string) session.Meta {
	t.Helper()
	m := session.NewMeta(time.Now())
	m.Title = session.Str(title)
	if err := s.Create(m); err != nil {
		t.Fatal(err)
	}
	return m
}

func texts(t *testing.T, s session.Store, id string) []string {
	t.Helper()
	conv, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range conv.Messages {
		out = append(out, m.JoinText())
	}
	return out
}
