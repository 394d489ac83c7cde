package jetstream

import (
	"context"
	"encoding/json"
	"sort"
	"time"
)

// Status is what `openheim cluster status` shows.
type Status struct {
	Server   ServerInfo `json:"server"`
	Prefix   string     `json:"prefix"`
	Replicas int        `json:"replicas"`
	LeaseTTL string     `json:"lease_ttl"`
	Streams  []Store    `json:"streams"`
	Leases   []Lease    `json:"leases"`
	Seen     []Replica  `json:"replicas_seen"`
}

// ServerInfo is the server this process is connected to.
type ServerInfo struct {
	URL     string `json:"url"` // without credentials
	Name    string `json:"name"`
	Version string `json:"version"`
	Cluster string `json:"cluster,omitempty"`
	RTT     string `json:"rtt"`
}

// Store is one stream, bucket or object store.
type Store struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"` // "stream", "kv", "objects"
	Messages uint64   `json:"messages"`
	Bytes    uint64   `json:"bytes"`
	Leader   string   `json:"leader,omitempty"`
	Peers    []string `json:"peers,omitempty"` // "name" or "name (behind)" / "(offline)"
	Error    string   `json:"error,omitempty"`
}

// Lease is a session's turn lease.
type Lease struct {
	Session    string    `json:"session"`
	Replica    string    `json:"replica"`
	AcquiredAt time.Time `json:"acquired_at"`
}

// Status gathers the cluster's status.
func (b *Backend) Status() (Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*opTimeout)
	defer cancel()
	st := Status{Prefix: b.opts.Prefix, Replicas: b.opts.Replicas, LeaseTTL: b.opts.LeaseTTL.String(),
		Server: ServerInfo{URL: b.nc.ConnectedUrlRedacted(), Name: b.nc.ConnectedServerName(),
			Version: b.nc.ConnectedServerVersion(), Cluster: b.nc.ConnectedClusterName()}}
	if rtt, err := b.nc.RTT(); err == nil {
		st.Server.RTT = rtt.String()
	}
	streams := []struct{ name, kind string }{{b.name("msgs"), "stream"}, {"KV_" + b.name("sessions"), "kv"},
		{"KV_" + b.name("leases"), "kv"}, {"KV_" + b.name("files"), "kv"}, {"KV_" + b.name("agents"), "kv"},
		{"KV_" + b.name("replicas"), "kv"}, {"KV_" + b.name("doc_sessions-api"), "kv"}, {"OBJ_" + b.name("blobs"), "objects"}}
	for _, s := range streams {
		st.Streams = append(st.Streams, b.storeStatus(ctx, s.name, s.kind))
	}
	err := b.eachValue(ctx, b.leases, func(key string, v []byte) {
		var h holder
		json.Unmarshal(v, &h)
		st.Leases = append(st.Leases, Lease{Session: key, Replica: h.Replica, AcquiredAt: h.AcquiredAt})
	})
	if err != nil {
		return st, err
	}
	sort.Slice(st.Leases, func(i, j int) bool { return st.Leases[i].Session < st.Leases[j].Session })
	st.Seen, err = b.Replicas()
	sort.Slice(st.Seen, func(i, j int) bool { return st.Seen[i].Name < st.Seen[j].Name })
	return st, err
}

func (b *Backend) storeStatus(ctx context.Context, name, kind string) Store {
	out := Store{Name: name, Kind: kind}
	s, err := b.js.Stream(ctx, name)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	info := s.CachedInfo()
	out.Messages, out.Bytes = info.State.Msgs, info.State.Bytes
	if c := info.Cluster; c != nil {
		out.Leader = c.Leader
		for _, p := range c.Replicas {
			name := p.Name
			switch {
			case p.Offline:
				name += " (offline)"
			case !p.Current:
				name += " (behind)"
			}
			out.Peers = append(out.Peers, name)
		}
	}
	return out
}
