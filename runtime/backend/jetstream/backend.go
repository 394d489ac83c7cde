// Package jetstream is the cluster backend: every store a replica shares
// (backend.Backend) kept in NATS JetStream, so several `openheim serve`
// replicas serve the same sessions.
//
// Layout, under a prefix P (default "openheim"):
//   - stream P_msgs, subject P.msg.<session>: each session's history, one
//     stream message per step (Append), so a step is stored whole or not
//     at all. Appends carry the expected last sequence of the session's
//     subject, so the log itself fences a holder that lost its lease, and a
//     message id <session>:<index>:<epoch> that makes a retried append
//     count once (the epoch is in it: on R3 a reused id is answered
//     "duplicate" before the sequence check, and a stale writer would
//     believe its step stored).
//   - KV P_sessions: the metas; KV P_leases: turn leases with a per-key
//     TTL, renewed by publishing with the TTL and the expected revision (a
//     plain kv.Update drops the TTL); KV P_files and P_agents: file and
//     agent records; KV P_doc_<name>: Docs; KV P_replicas: who is serving.
//   - object store P_blobs: file contents, agent bundles, and steps larger
//     than a message may be (max_payload defaults to 1 MiB).
package jetstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
)

// Defaults of Options.
const (
	DefaultPrefix   = "openheim"
	DefaultLeaseTTL = 10 * time.Second
	// opTimeout bounds one request to the cluster; a leader election takes
	// a few seconds, which retries ride out.
	opTimeout = 5 * time.Second
)

// Options say where the cluster is and how to use it.
type Options struct {
	// URL is one or more server URLs, comma separated.
	URL string
	// Credentials is a .creds file (JWT and seed); Token a plain token.
	Credentials, Token string
	// CAFile, CertFile and KeyFile configure TLS (a client certificate
	// needs both of the last two).
	CAFile, CertFile, KeyFile string
	// Prefix names the streams, buckets and subjects (letters, digits,
	// '-' and '_').
	Prefix string
	// Replicas is how many servers keep each stream and bucket (1-5).
	Replicas int
	// LeaseTTL is how long a turn's lease outlives its holder's last
	// renewal: a replica that dies mid-turn frees its sessions after it.
	LeaseTTL time.Duration
	// Replica names this process in leases and in cluster status; default
	// host-pid.
	Replica string
	// Version is this binary's, shown by cluster status.
	Version string
	// Announce lists this process in cluster status while it runs (a
	// server does; a one-off command does not).
	Announce bool
	// Warn receives recoverable problems; nil drops them.
	Warn func(string)
}

// Backend is a connection to the cluster and the stores over it.
type Backend struct {
	opts Options
	nc   *nats.Conn
	js   jetstream.JetStream

	metas, leases, files, agents, replicas jetstream.KeyValue
	blobs                                  jetstream.ObjectStore
	msgs                                   jetstream.Stream

	sessions *sessionStore
	leaser   *leaser

	// kvStreams holds the buckets' streams as lastSeq first looked them
	// up ("KV_<bucket>" -> jetstream.Stream): a listing then costs one
	// request to the leader, not two.
	kvStreams sync.Map

	mu    sync.Mutex
	docs  map[string]*docs
	relay *Relay
	stop  chan struct{}
	wg    sync.WaitGroup
}

var _ backend.Backend = (*Backend)(nil)

// Open connects and makes sure every stream and bucket exists.
func Open(ctx context.Context, opts Options) (*Backend, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	nc, err := connect(opts)
	if err != nil {
		return nil, err
	}
	b := &Backend{opts: opts, nc: nc, docs: map[string]*docs{}, stop: make(chan struct{})}
	if b.js, err = jetstream.New(nc, jetstream.WithDefaultTimeout(opTimeout)); err == nil {
		err = b.provisionRetrying(ctx)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("cluster %s: %w", opts.URL, err)
	}
	b.sessions = &sessionStore{b: b}
	b.leaser = &leaser{b: b, held: map[string]*lease{}}
	if opts.Announce {
		b.wg.Add(1)
		go b.announce()
	}
	return b, nil
}

func (o *Options) fill() error {
	if o.URL == "" {
		return errors.New("cluster: no nats_url")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := backend.ValidKey(o.Prefix); err != nil {
		return fmt.Errorf("cluster: prefix: %w", err)
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		return fmt.Errorf("cluster: replicas %d is not 1-5", o.Replicas)
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.LeaseTTL < time.Second {
		return fmt.Errorf("cluster: lease_ttl %s is under the server's minimum of 1s", o.LeaseTTL)
	}
	if o.Replica == "" {
		host, _ := os.Hostname()
		o.Replica = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	return nil
}

func connect(o Options) (*nats.Conn, error) {
	// NoEcho: the relay's watchers here must not get back the events this
	// replica publishes (nothing else subscribes to what it publishes).
	opts := []nats.Option{nats.Name("openheim " + o.Replica), nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond), nats.Timeout(opTimeout), nats.NoEcho(),
		nats.ErrorHandler(asyncErrors(o.Warn))}
	if o.Credentials != "" {
		opts = append(opts, nats.UserCredentials(o.Credentials))
	}
	if o.Token != "" {
		opts = append(opts, nats.Token(o.Token))
	}
	if o.CAFile != "" {
		opts = append(opts, nats.RootCAs(o.CAFile))
	}
	if o.CertFile != "" || o.KeyFile != "" {
		opts = append(opts, nats.ClientCert(o.CertFile, o.KeyFile))
	}
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connecting to %s: %w", redactURL(o.URL), err)
	}
	return nc, nil
}

// asyncErrors is the connection's handler of errors no call returns: they
// go to warn (the process's redacting log), never straight to stderr as
// nats.go's default handler writes them. A watch whose consumer went away
// (a server restarted, an idle read's consumer removed) is recreated by
// the library: that is not worth a word.
func asyncErrors(warn func(string)) nats.ErrHandler {
	return func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if warn == nil || errors.Is(err, nats.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			return
		}
		if sub != nil {
			warn(fmt.Sprintf("cluster: %v (subscription %s)", err, sub.Subject))
			return
		}
		warn("cluster: " + err.Error())
	}
}

// redactURL drops credentials from server URLs before they are shown.
func redactURL(u string) string {
	parts := strings.Split(u, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if s := strings.Index(p, "://"); s >= 0 && s < at {
				parts[i] = p[:s+3] + "<redacted>@" + p[at+1:]
			}
		}
	}
	return strings.Join(parts, ",")
}

// name is the stream, bucket or object store called suffix.
func (b *Backend) name(suffix string) string { return b.opts.Prefix + "_" + suffix }

// subject is the history subject of session id.
func (b *Backend) subject(id string) string { return b.opts.Prefix + ".msg." + id }

// errNoSuitablePeers is JetStream's "no suitable peers for placement".
const errNoSuitablePeers jetstream.ErrorCode = 10005

// provisionRetrying retries provision while the cluster is still
// forming (no peers to place a stream of the wanted replicas on yet).
func (b *Backend) provisionRetrying(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := b.provision(ctx)
		var api *jetstream.APIError
		if err == nil || !errors.As(err, &api) || api.ErrorCode != errNoSuitablePeers || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// provision looks each stream and bucket up, creating the missing ones
// (a lookup is cheap; creating one on R3 takes tens of ms).
func (b *Backend) provision(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 4*opTimeout)
	defer cancel()
	var err error
	if b.msgs, err = b.js.Stream(ctx, b.name("msgs")); errors.Is(err, jetstream.ErrStreamNotFound) {
		b.msgs, err = b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: b.name("msgs"), Subjects: []string{b.opts.Prefix + ".msg.*"}, Storage: jetstream.FileStorage,
			Replicas: b.opts.Replicas, Discard: jetstream.DiscardOld,
			Duplicates: 2 * time.Minute, MaxMsgSize: -1,
		})
	}
	if err == nil && b.msgs.CachedInfo().Config.AllowDirect { // made elsewhere with direct gets on
		if err = b.leaderReads(ctx, b.name("msgs")); err == nil {
			b.msgs, err = b.js.Stream(ctx, b.name("msgs")) // bound after, so its reads go to the leader
		}
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", b.name("msgs"), err)
	}
	kvs := []struct {
		kv  *jetstream.KeyValue
		cfg jetstream.KeyValueConfig
	}{
		{&b.metas, jetstream.KeyValueConfig{Bucket: b.name("sessions")}},
		{&b.leases, jetstream.KeyValueConfig{Bucket: b.name("leases"), LimitMarkerTTL: max(b.opts.LeaseTTL, time.Second)}},
		{&b.files, jetstream.KeyValueConfig{Bucket: b.name("files")}},
		{&b.agents, jetstream.KeyValueConfig{Bucket: b.name("agents")}},
		{&b.replicas, jetstream.KeyValueConfig{Bucket: b.name("replicas"), TTL: time.Minute}},
	}
	for _, k := range kvs {
		if *k.kv, err = b.bucket(ctx, k.cfg); err != nil {
			return err
		}
	}
	if _, err = b.js.ObjectStore(ctx, b.name("blobs")); errors.Is(err, jetstream.ErrBucketNotFound) {
		_, err = b.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: b.name("blobs"), Storage: jetstream.FileStorage, Replicas: b.opts.Replicas})
	}
	if err == nil {
		err = b.leaderReads(ctx, "OBJ_"+b.name("blobs"))
	}
	if err == nil {
		b.blobs, err = b.js.ObjectStore(ctx, b.name("blobs"))
	}
	if err != nil {
		return fmt.Errorf("object store %s: %w", b.name("blobs"), err)
	}
	return nil
}

// leaderReads turns direct gets off on stream name: the client libraries
// turn them on for buckets, and then any replica answers a read, a
// follower with what it has applied so far; a replica reading what
// another one just wrote (a session's meta, a file) would miss it. Reads
// go to the stream's leader instead.
func (b *Backend) leaderReads(ctx context.Context, name string) error {
	s, err := b.js.Stream(ctx, name)
	if err != nil {
		return err
	}
	cfg := s.CachedInfo().Config
	if !cfg.AllowDirect {
		return nil
	}
	cfg.AllowDirect = false
	_, err = b.js.UpdateStream(ctx, cfg)
	return err
}

func (b *Backend) bucket(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	_, err := b.js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		cfg.Storage, cfg.Replicas = jetstream.FileStorage, b.opts.Replicas
		_, err = b.js.CreateOrUpdateKeyValue(ctx, cfg)
	}
	if err == nil {
		err = b.leaderReads(ctx, "KV_"+cfg.Bucket)
	}
	var kv jetstream.KeyValue
	if err == nil {
		kv, err = b.js.KeyValue(ctx, cfg.Bucket) // bound after, so its reads go to the leader
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

func (b *Backend) warn(msg string) {
	if b.opts.Warn != nil {
		b.opts.Warn(msg)
	}
}

// ctx bounds one operation.
func (b *Backend) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// Name implements backend.Backend.
func (*Backend) Name() string { return "jetstream" }

// Sessions implements backend.Backend.
func (b *Backend) Sessions() session.Source { return b.sessions }

// Leaser implements backend.Backend.
func (b *Backend) Leaser() session.Leaser { return b.leaser }

// Files implements backend.Backend.
func (b *Backend) Files(maxBytes int64, now func() time.Time) (sessionfiles.Store, error) {
	return &fileStore{b: b, max: maxBytes, now: now}, nil
}

// Bundles implements backend.Backend.
func (b *Backend) Bundles() (bundle.Store, error) { return &bundleStore{b: b}, nil }

// Docs implements backend.Backend.
func (b *Backend) Docs(name string) (backend.Docs, error) {
	if err := backend.ValidKey(name); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := b.docs[name]; d != nil {
		return d, nil
	}
	ctx, cancel := b.ctx()
	defer cancel()
	kv, err := b.bucket(ctx, jetstream.KeyValueConfig{Bucket: b.name("doc_" + name)})
	if err != nil {
		return nil, err
	}
	d := &docs{kv: kv}
	b.docs[name] = d
	return d, nil
}

// Conn is the connection, for the live fan-out that shares it.
func (b *Backend) Conn() *nats.Conn { return b.nc }

// Options are the options the backend was opened with, defaults filled.
func (b *Backend) Options() Options { return b.opts }

// Close implements backend.Backend: it releases the leases still held,
// stops announcing this replica and closes the connection.
func (b *Backend) Close() error {
	b.mu.Lock()
	select {
	case <-b.stop:
		b.mu.Unlock()
		return nil
	default:
		close(b.stop)
	}
	b.mu.Unlock()
	b.leaser.releaseAll()
	b.wg.Wait()
	ctx, cancel := b.ctx()
	b.replicas.Delete(ctx, kvKey(b.opts.Replica))
	cancel()
	b.nc.Drain()
	return nil
}
