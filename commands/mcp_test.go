package commands

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/mcpserver"
	"github.com/openheim/openheim/runtime/tools"
)

// mcpPeer serves the built-in tools over Streamable HTTP in a directory
// holding hello.txt, as a remote MCP server the config can name.
func mcpPeer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the peer\n"), 0o644)
	reg, err := tools.Builtins(tools.Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserver.Handler(mcpserver.Options{Tools: reg, Version: "peer"}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// mcpEnv has the peer as server "files" and a command that does not exist
// as server "broken".
func mcpEnv(t *testing.T) *testEnv {
	return newTestEnv(t, fakeConfig+`[mcp_servers.files]
url = "`+mcpPeer(t)+`"
[mcp_servers.broken]
command = "$WORK/no-such-server"
startup_timeout_secs = 5
`)
}

func TestMCPFlags(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	call, err := parseCmd(t, e, "mcp", newCmdMCPCall, "files", "read_file", "--arg", "path=a", "--arg", "n=2", "--json")
	if err != nil || call.Server != "files" || call.Tool != "read_file" || strings.Join(call.Args, ",") != "path=a,n=2" || !call.JSON {
		t.Errorf("call: %+v, %v", call, err)
	}
	add, err := parseCmd(t, e, "mcp", newCmdMCPAdd, "fs", "--env", "A=1", "--header", "H=v", "--cwd", "d",
		"--tool-timeout", "5", "--startup-timeout", "6", "--", "srv", "-x", "y")
	want := config.MCPServer{Command: "srv", Args: []string{"-x", "y"}, Env: map[string]string{"A": "1"},
		Headers: map[string]string{"H": "v"}, Cwd: "d", ToolTimeoutSecs: 5, StartupTimeoutSecs: 6}
	if err != nil || add.Name != "fs" || !reflect.DeepEqual(add.Server, want) || add.ConfigPath() != e.cfgPath {
		t.Errorf("add: %+v, %v", add, err)
	}
	serve, err := parseCmd(t, e, "mcp", newCmdMCPServe, "--http", "127.0.0.1:0", "--token", "tok", "--deny-ask")
	if err != nil || serve.HTTP != "127.0.0.1:0" || serve.Token != "tok" || !serve.DenyAsk || serve.InsecureNoAuth || serve.Version != "test" {
		t.Errorf("serve: %+v, %v", serve, err)
	}
	tl, _ := parseCmd(t, e, "mcp", newCmdMCPTools, "files", "--select", "function.name")
	rm, _ := parseCmd(t, e, "mcp", newCmdMCPRemove, "fs")
	if tl.Server != "files" || tl.Output.Select != "function.name" || rm.Name != "fs" {
		t.Errorf("tools %+v rm %+v", tl, rm)
	}
	for _, tc := range []struct {
		err error
		msg string
	}{
		{second(parseCmd(t, e, "mcp", newCmdMCPList, "x")), `ls: unexpected argument "x"`},
		{second(parseCmd(t, e, "mcp", newCmdMCPTools, "a", "b")), "mcp tools: at most one SERVER"},
		{second(parseCmd(t, e, "mcp", newCmdMCPCall, "a")), "mcp call: give SERVER and TOOL"},
		{second(parseCmd(t, e, "mcp", newCmdMCPCall, "a", "b", "--arg", "x=1", "--json-args", "{}")), "mcp call: use --arg or --json-args, not both"},
		{second(parseCmd(t, e, "mcp", newCmdMCPAdd)), "mcp add: give the server a NAME"},
		{second(parseCmd(t, e, "mcp", newCmdMCPAdd, "x", "--env", "novalue")), `--env "novalue": want KEY=VALUE`},
		{second(parseCmd(t, e, "mcp", newCmdMCPRemove)), "mcp rm: give one server NAME"},
		{second(parseCmd(t, e, "mcp", newCmdMCPServe, "x")), `serve: unexpected argument "x"`},
	} {
		wantExit(t, tc.err, ExitUsage, tc.msg)
	}
}

func TestMCPListRun(t *testing.T) {
	e := mcpEnv(t)
	opts := &MCPListOptions{IO: e.f.IOStreams, Config: e.f.Config, MCP: e.f.MCP}
	wantExit(t, mcpListRun(context.Background(), opts), ExitFailure, "mcp ls: 1 of 2 servers failed")
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "broken") || !strings.Contains(lines[1], "failed: ") ||
		!strings.HasPrefix(lines[2], "files") || !strings.Contains(lines[2], " connected ") {
		t.Errorf("table:\n%s", e.out)
	}
	e.reset()
	opts.Output = jsonOutput{JSON: true}
	mcpListRun(context.Background(), opts)
	var st struct {
		Name      string `json:"name"`
		Connected bool   `json:"connected"`
		ToolCount int    `json:"tool_count"`
	}
	json.Unmarshal([]byte(strings.Split(e.out.String(), "\n")[1]), &st)
	if st.Name != "files" || !st.Connected || st.ToolCount < 5 {
		t.Errorf("--json: %s", e.out)
	}

	none := newTestEnv(t, fakeConfig)
	err := mcpListRun(context.Background(), &MCPListOptions{IO: none.f.IOStreams, Config: none.f.Config, MCP: none.f.MCP})
	if err != nil || none.errOut.String() != "no MCP servers configured; add one with 'openheim mcp add'\n" {
		t.Errorf("none: %q, %v", none.errOut, err)
	}
}

func TestMCPToolsRun(t *testing.T) {
	e := mcpEnv(t)
	opts := &MCPToolsOptions{IO: e.f.IOStreams, Config: e.f.Config, MCP: e.f.MCP, Output: jsonOutput{Select: "function.name"}}
	if err := mcpToolsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.out.String(), "files__read_file\n") {
		t.Errorf("tools: %q", e.out)
	}
	if !strings.HasPrefix(e.errOut.String(), "openheim: warning: MCP server broken: ") {
		t.Errorf("the failed server is not warned about: %q", e.errOut)
	}
	opts.Server = "nope"
	wantExit(t, mcpToolsRun(context.Background(), opts), ExitUsage, `mcp: no MCP server named "nope" in the config`)
}

func TestMCPCallRun(t *testing.T) {
	e := mcpEnv(t)
	ctx := context.Background()
	opts := &MCPCallOptions{IO: e.f.IOStreams, Config: e.f.Config, MCP: e.f.MCP, Server: "files", Tool: "read_file", Args: []string{"path=hello.txt"}}
	if err := mcpCallRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.out.String(), "hello from the peer") {
		t.Errorf("result: %q", e.out)
	}

	e.reset()
	opts.Args, opts.JSONArgs, opts.JSON = nil, `{"path":"missing.txt"}`, true
	err := mcpCallRun(ctx, opts)
	wantExit(t, err, ExitFailure, "mcp call: read_file reported an error")
	var res struct {
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	}
	if json.Unmarshal([]byte(e.out.String()), &res) != nil || !res.IsError || !err.(*ExitError).Silent {
		t.Errorf("--json error result: %q (silent %v)", e.out, err.(*ExitError).Silent)
	}

	opts.JSONArgs = `[1]`
	wantExit(t, mcpCallRun(ctx, opts), ExitUsage, "mcp call: --json-args is not a JSON object")
	opts.Server, opts.JSONArgs = "broken", ""
	wantExit(t, mcpCallRun(ctx, opts), ExitFailure, "mcp call: server broken: ")
}

func TestTypedValue(t *testing.T) {
	for _, tc := range []struct {
		typ, v string
		want   any
	}{
		{"integer", "2", int64(2)}, {"number", "1.5", 1.5}, {"boolean", "true", true}, {"string", "3", "3"},
		{"integer", "x", "x"}, {"", `{"a":1}`, map[string]any{"a": float64(1)}}, {"", "7", "7"}, {"array", "[1]", []any{float64(1)}},
	} {
		if got := typedValue(tc.typ, tc.v); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("typedValue(%q, %q) = %#v, want %#v", tc.typ, tc.v, got, tc.want)
		}
	}
}

func TestMCPAddRemoveRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	path := func() string { return e.cfgPath }
	add := &MCPAddOptions{IO: e.f.IOStreams, ConfigPath: path, Name: "fs", Server: config.MCPServer{Command: "srv", Args: []string{"/src"}}}
	if err := mcpAddRun(context.Background(), add); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(e.cfgPath)
	if !strings.Contains(string(data), "[mcp_servers.fs]") || !strings.HasPrefix(string(data), "default_provider") {
		t.Errorf("config after add:\n%s", data)
	}
	if e.errOut.String() != "added MCP server fs to "+e.cfgPath+"; check it with 'openheim mcp ls'\n" {
		t.Errorf("stderr %q", e.errOut)
	}
	e.reset()
	add.Name, add.Server = "remote", config.MCPServer{URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}
	if err := mcpAddRun(context.Background(), add); err != nil || !strings.Contains(e.errOut.String(), "now holds a secret") {
		t.Errorf("secret: %q, %v", e.errOut, err)
	}
	add.Name, add.Server = "bad", config.MCPServer{}
	wantExit(t, mcpAddRun(context.Background(), add), ExitUsage, "mcp add: ")

	e.reset()
	rm := &MCPRemoveOptions{IO: e.f.IOStreams, ConfigPath: path, Name: "fs"}
	if err := mcpRemoveRun(context.Background(), rm); err != nil || e.errOut.String() != "removed MCP server fs from "+e.cfgPath+"\n" {
		t.Errorf("rm: %q, %v", e.errOut, err)
	}
	data, _ = os.ReadFile(e.cfgPath)
	if strings.Contains(string(data), "[mcp_servers.fs]") || !strings.Contains(string(data), "[mcp_servers.remote]") {
		t.Errorf("config after rm:\n%s", data)
	}
	wantExit(t, mcpRemoveRun(context.Background(), rm), ExitUsage, "mcp rm: ")

	// Without --config the data directory's config.toml is edited.
	e.f.ConfigPath = func() string { return "" }
	if got := e.f.editedConfigPath(); got != filepath.Join(e.home, "config.toml") {
		t.Errorf("default edited config %s", got)
	}
}
