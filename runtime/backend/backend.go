// Package backend names what the replicas of a server must share, each
// behind an interface of its own: session metas and message logs with
// turn leases that fence them, uploaded files, agent bundles, and small
// per-session documents (the sessions API's settings). The file backend
// (Files) keeps them under the data directory, as a single process always
// has; a cluster backend (runtime/backend/jetstream) keeps them in NATS
// JetStream, so several `openheim serve` replicas behind a load balancer
// serve the same sessions. backendtest is the contract both pass.
//
// Derived data (the bleve indexes) is not here: every replica derives its
// own from what these stores hold.
package backend

import (
	"time"

	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
)

// Backend opens the stores of one deployment. Each call returns a view
// over the same data: two calls (or two processes, or two replicas) see
// each other's writes.
type Backend interface {
	// Name says which backend this is ("files", "jetstream"), for status
	// output and errors.
	Name() string
	// Sessions is the session store; its writes under a lease from
	// Leaser are fenced by session.Fenced.
	Sessions() session.Source
	// Leaser grants turns their sessions: one holder at a time across
	// every process sharing the backend, with a fencing epoch.
	Leaser() session.Leaser
	// Files keeps the sessions' uploaded files; a file over maxBytes is
	// refused.
	Files(maxBytes int64, now func() time.Time) (sessionfiles.Store, error)
	// Bundles keeps uploaded agents with their bundles.
	Bundles() (bundle.Store, error)
	// Docs keeps small JSON documents in the collection name.
	Docs(name string) (Docs, error)
	// Close releases connections; the stores must not be used after.
	Close() error
}

// Docs keeps small documents (JSON, at most a few KiB) by key: a session
// uuid, an agent id. Get of a key never put answers found false.
type Docs interface {
	Get(key string) (data []byte, found bool, err error)
	Put(key string, data []byte) error
	// Delete removes a key; a missing key is not an error.
	Delete(key string) error
	// Keys lists every key, sorted.
	Keys() ([]string, error)
}
