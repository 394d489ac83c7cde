package commands

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/message"
)

// TestClusterCommands: with [cluster] in the config, migrate copies the
// data directory's sessions into the cluster, sessions ls (on a machine
// pointed at the cluster) lists them, and status shows the stores.
func TestClusterCommands(t *testing.T) {
	nats := natstest.Single(t)
	e := newTestEnv(t, fakeConfig)
	older := e.addSession("first one", "hello", "hi", time.Now().Add(-time.Hour))
	e.addSession("second one", "bye", "see you", time.Now())

	// The same machine, now configured for the cluster.
	c := newTestEnv(t, fakeConfig+"\n[cluster]\nnats_url = \""+nats.URL()+"\"\nprefix = \"t1\"\n")
	c.home = e.home
	root := func(args ...string) error {
		c.reset()
		return newRoot(c.f).Run(context.Background(), append([]string{"openheim", "--config", c.cfgPath}, args...))
	}
	if err := root("sessions", "ls", "--select", "id"); err != nil || strings.TrimSpace(c.out.String()) != "" {
		t.Fatalf("the empty cluster lists %q (%v)", c.out, err)
	}
	if err := root("cluster", "migrate", "--to", "cluster"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, c.errOut)
	}
	if !strings.Contains(c.out.String(), "files -> jetstream: 2 sessions (4 messages, 2 copied") {
		t.Fatalf("migrate said %q", c.out)
	}
	if err := root("cluster", "migrate"); err != nil || !strings.Contains(c.out.String(), "0 copied") {
		t.Fatalf("a second migrate: %q %v", c.out, err)
	}
	if err := root("sessions", "ls", "--select", "title"); err != nil || c.out.String() != "second one\nfirst one\n" {
		t.Fatalf("sessions ls on the cluster: %q %v %s", c.out, err, c.errOut)
	}
	if err := root("sessions", "search", "hello", "--select", "session_id"); err != nil || strings.TrimSpace(c.out.String()) != older.ID {
		t.Fatalf("search on the cluster: %q %v %s", c.out, err, c.errOut)
	}
	// Another replica appends: this machine's index catches up.
	other, err := jetstream.Open(context.Background(), jetstream.Options{URL: nats.URL(), Prefix: "t1", Replica: "other"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	msg := message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("zeppelin")}}
	if err := other.Sessions().Append(older.ID, msg); err != nil {
		t.Fatal(err)
	}
	if err := root("sessions", "search", "zeppelin", "--select", "session_id"); err != nil || strings.TrimSpace(c.out.String()) != older.ID {
		t.Fatalf("search after another replica's append: %q %v %s", c.out, err, c.errOut)
	}
	if err := root("cluster", "status", "--json"); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Server  struct{ Name string }
		Prefix  string
		Streams []struct {
			Name     string
			Messages int
		}
	}
	if err := json.Unmarshal([]byte(c.out.String()), &st); err != nil || st.Server.Name != "solo" || st.Prefix != "t1" || len(st.Streams) == 0 {
		t.Fatalf("status %s: %v", c.out, err)
	}
	if st.Streams[0].Name != "t1_msgs" || st.Streams[0].Messages == 0 {
		t.Fatalf("the history stream: %+v", st.Streams[0])
	}
	if err := root("cluster", "status"); err != nil || !strings.Contains(c.out.String(), "t1_msgs") {
		t.Fatalf("status text: %q %v", c.out, err)
	}
	// Without [cluster], the commands say what is missing.
	e.reset()
	err = newRoot(e.f).Run(context.Background(), []string{"openheim", "--config", e.cfgPath, "cluster", "status"})
	wantExit(t, err, ExitUsage, "no [cluster]")
}
