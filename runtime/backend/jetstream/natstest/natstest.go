// Package natstest runs nats-server with JetStream inside a test process:
// one node, or a cluster of three on loopback routes. It is for tests
// only: nothing the openheim binary links imports it (a test in
// cmd/openheim checks), so the server adds nothing to the binary.
package natstest

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Node is one running server.
type Node struct {
	Server *server.Server
	Name   string
	opts   *server.Options
}

// URL is the client URL of the node.
func (n *Node) URL() string { return n.Server.ClientURL() }

// Stop shuts the node down (a crash, as its clients see it).
func (n *Node) Stop() {
	n.Server.Shutdown()
	n.Server.WaitForShutdown()
}

// Restart starts a stopped node again with its store and ports.
func (n *Node) Restart(t testing.TB) {
	t.Helper()
	s, err := server.NewServer(n.opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatalf("%s did not restart", n.Name)
	}
	n.Server = s
}

// Cluster is the nodes of one test.
type Cluster struct{ Nodes []*Node }

// URL is every node's client URL, comma separated (clients fail over).
func (c *Cluster) URL() string {
	var urls []string
	for _, n := range c.Nodes {
		if n.Server.Running() {
			urls = append(urls, n.URL())
		}
	}
	return strings.Join(urls, ",")
}

// Leader is the node that leads stream name of the default account.
func (c *Cluster) Leader(stream string) *Node {
	for _, n := range c.Nodes {
		if n.Server.Running() && n.Server.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return n
		}
	}
	return nil
}

// Single starts one node with JetStream on file storage, stopped at the
// end of the test.
func Single(t testing.TB) *Cluster {
	t.Helper()
	n := start(t, &server.Options{ServerName: "solo", Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: filepath.Join(t.TempDir(), "js"), NoLog: true, NoSigs: true})
	c := &Cluster{Nodes: []*Node{n}}
	t.Cleanup(c.stop)
	return c
}

// Three starts a cluster of three nodes on loopback routes, with a
// JetStream meta leader elected, stopped at the end of the test.
func Three(t testing.TB) *Cluster {
	t.Helper()
	ports := freePorts(t, 3)
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	c := &Cluster{}
	t.Cleanup(c.stop)
	dir := t.TempDir()
	for i, p := range ports {
		name := fmt.Sprintf("n%d", i+1)
		c.Nodes = append(c.Nodes, start(t, &server.Options{ServerName: name, Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: filepath.Join(dir, name), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "oh", Host: "127.0.0.1", Port: p}, Routes: routes}))
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range c.Nodes {
			// Streams of three replicas can be placed once the leader
			// knows every peer.
			if n.Server.JetStreamIsLeader() && len(n.Server.JetStreamClusterPeers()) == len(c.Nodes) {
				return c
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no JetStream meta leader that knows every peer")
	return nil
}

func start(t testing.TB, opts *server.Options) *Node {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatalf("%s did not start", opts.ServerName)
	}
	// Keep the port it got, so Restart comes back on it.
	u, _ := url.Parse(s.ClientURL())
	fmt.Sscan(u.Port(), &opts.Port)
	return &Node{Server: s, Name: opts.ServerName, opts: opts}
}

func (c *Cluster) stop() {
	for _, n := range c.Nodes {
		if n.Server.Running() {
			n.Stop()
		}
	}
}

func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}
