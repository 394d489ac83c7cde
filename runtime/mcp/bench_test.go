//go:build unix

package mcp

// Benchmarks: connecting to server-everything (stdio and HTTP), and one echo
// call through Manager.Call against the raw go-sdk ClientSession.CallTool on
// the same kind of server (the manager's overhead).
//
//	go test -run '^$' -bench . -benchtime 20x ./runtime/mcp/

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/config"
)

func benchManager(b *testing.B, cfg *config.MCPServer) *Manager {
	b.Helper()
	m := NewManager(map[string]*config.MCPServer{"s": cfg}, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.Start(ctx)
	m.Wait(ctx)
	if st := m.Status()[0]; !st.Connected {
		b.Fatalf("not connected: %s", deref(st.Error))
	}
	return m
}

func benchConnect(b *testing.B, cfg *config.MCPServer) {
	for b.Loop() {
		m := benchManager(b, cfg)
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}

func BenchmarkConnect(b *testing.B) {
	node, script := peerScript(b, "server-everything")
	b.Run("everything-stdio", func(b *testing.B) {
		benchConnect(b, &config.MCPServer{Command: node, Args: []string{script}, StartupTimeoutSecs: 30})
	})
	b.Run("everything-http", func(b *testing.B) {
		port := freePort(b)
		defer everythingHTTP(b, node, script, port)()
		benchConnect(b, httpConfig(fmt.Sprintf("http://127.0.0.1:%d/mcp", port)))
	})
}

func BenchmarkEcho(b *testing.B) {
	args := json.RawMessage(`{"message":"hi"}`)
	run := func(b *testing.B, cfg *config.MCPServer, raw func() mcp.Transport, want string) {
		b.Run("manager", func(b *testing.B) {
			m := benchManager(b, cfg)
			defer m.Close()
			for b.Loop() {
				if r, err := m.Call(context.Background(), "s", "echo", args); err != nil || r.Content != want {
					b.Fatalf("%+v, %v", r, err)
				}
			}
		})
		b.Run("raw-sdk", func(b *testing.B) {
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			cs, err := c.Connect(context.Background(), raw(), &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			for b.Loop() {
				r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
				if err != nil || r.Content[0].(*mcp.TextContent).Text != want {
					b.Fatalf("%+v, %v", r, err)
				}
			}
		})
	}
	b.Run("go-http", func(b *testing.B) {
		srv := newTestServer(nil)
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		defer func() {
			hs.CloseClientConnections()
			hs.Close()
		}()
		run(b, httpConfig(hs.URL), func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: hs.URL} }, "hi")
	})
	node, script := peerScript(b, "server-everything")
	b.Run("everything-stdio", func(b *testing.B) {
		cfg := &config.MCPServer{Command: node, Args: []string{script}, StartupTimeoutSecs: 30}
		run(b, cfg, func() mcp.Transport { return &mcp.CommandTransport{Command: exec.Command(node, script)} }, "Echo: hi")
	})
}
