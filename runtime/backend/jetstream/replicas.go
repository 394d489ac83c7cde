package jetstream

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"time"
)

// Replica is a process using the cluster, as it announces itself every
// few seconds (the announcement expires a minute after it stops).
type Replica struct {
	Name    string    `json:"name"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	Seen    time.Time `json:"seen"`
}

// announceEvery is how often a replica says it is alive.
const announceEvery = 10 * time.Second

// announce keeps this replica's entry in the replicas bucket until Close.
func (b *Backend) announce() {
	defer b.wg.Done()
	host, _ := os.Hostname()
	me := Replica{Name: b.opts.Replica, Host: host, PID: os.Getpid(), Version: b.opts.Version, Started: time.Now().UTC()}
	key := kvKey(b.opts.Replica)
	t := time.NewTicker(announceEvery)
	defer t.Stop()
	for {
		me.Seen = time.Now().UTC()
		data, _ := json.Marshal(me)
		ctx, cancel := b.ctx()
		b.replicas.Put(ctx, key, data)
		cancel()
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
	}
}

// Replicas lists the processes that announced themselves in the last
// minute.
func (b *Backend) Replicas() ([]Replica, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	var out []Replica
	err := b.eachValue(ctx, b.replicas, func(_ string, v []byte) {
		var r Replica
		if json.Unmarshal(v, &r) == nil {
			out = append(out, r)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// kvKey makes s a valid KV key: anything but letters, digits, '-' and
// '_' becomes '_'.
func kvKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, s)
}
