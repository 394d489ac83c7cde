package commands

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpServeConfig = `work_dir = "$WORK"
[permissions]
deny = ["write_file"]
ask = ["edit_file"]
`

// callText calls tool and returns its text and whether it was an error.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), r.IsError
}

// TestMCPServeRunStdio: the run function serves the runtime's built-ins on
// the command's stdin and stdout, behind the config's permission rules.
func TestMCPServeRunStdio(t *testing.T) {
	e := newTestEnv(t, mcpServeConfig)
	os.WriteFile(filepath.Join(e.work, "notes.md"), []byte("hello from the work dir\n"), 0o644)
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	e.f.IOStreams.In, e.f.IOStreams.Out = toServer, fromServer
	opts := &MCPServeOptions{IO: e.f.IOStreams, Config: e.f.Config, Home: e.f.Home, Version: "test", DenyAsk: true}
	done := make(chan error, 1)
	go func() { done <- mcpServeRun(context.Background(), opts) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info := cs.InitializeResult().ServerInfo; info.Name != "openheim" || info.Version != "test" {
		t.Errorf("server info %+v", info)
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "execute_command" {
			t.Error("execute_command served with allow_shell off")
		}
	}
	if text, isErr := callText(t, cs, "read_file", map[string]any{"path": "notes.md"}); isErr || !strings.Contains(text, "hello from the work dir") {
		t.Errorf("read_file: %q", text)
	}
	if text, isErr := callText(t, cs, "write_file", map[string]any{"path": "x", "content": "y"}); !isErr || !strings.Contains(text, "the [permissions] rules deny write_file") {
		t.Errorf("denied write_file: %q", text)
	}
	if text, isErr := callText(t, cs, "edit_file", map[string]any{"path": "notes.md", "old_string": "hello", "new_string": "bye"}); !isErr || !strings.Contains(text, "--deny-ask refuses it") {
		t.Errorf("asked edit_file with --deny-ask: %q", text)
	}
	clientOut.Close() // the host goes away: EOF on the server's stdin
	waitDone(t, done, "mcp serve after the host left")
	cs.Close()
}

// TestMCPServeRunHTTP: --http listens, prints its address, refuses
// requests without the token, and stops when its context ends.
func TestMCPServeRunHTTP(t *testing.T) {
	e := newTestEnv(t, mcpServeConfig)
	opts := &MCPServeOptions{IO: e.f.IOStreams, Config: e.f.Config, Home: e.f.Home, Version: "test", HTTP: "127.0.0.1:0", Token: "a-long-enough-test-token"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpServeRun(ctx, opts) }()
	re := regexp.MustCompile(`MCP server listening on (http://\S+/mcp) \(token required\)`)
	waitFor(t, "the listening line", func() bool { return re.MatchString(e.errOut.String()) })
	url := re.FindStringSubmatch(e.errOut.String())[1]
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		t.Error("connected without the token")
	}
	cancel()
	waitDone(t, done, "stopping")

	opts.HTTP = "nonsense"
	wantExit(t, mcpServeRun(context.Background(), opts), ExitUsage, `mcp serve: --http "nonsense": `)
	opts.HTTP, opts.Token, opts.InsecureNoAuth = "0.0.0.0:0", "", true
	wantExit(t, mcpServeRun(context.Background(), opts), ExitUsage, "mcp serve: --insecure-no-auth is refused")
}
