package config

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// withServers is the starter config with real servers in the MCP section,
// the way a user would have edited it: comments above and between the
// tables, a sub-table, a name needing quotes, and values spanning lines
// whose text looks like table headers.
var withServers = strings.Replace(configTemplate,
	"# ---------------------------------------------------------------------------\n# Long-term memory",
	`# GitHub, with its token in a sub-table.
[mcp_servers.github]
command = "npx"  # found in PATH
args = ["-y", "@modelcontextprotocol/server-github"]
# tool_timeout_secs = 60

[mcp_servers.github.env]
GITHUB_TOKEN = "ghp_x"

[mcp_servers."my.remote"]
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer t" }

# The file system, with arguments over several lines.
[mcp_servers.fs]
command = "mcp-server-filesystem"
args = [
  "/tmp",
  # [mcp_servers.fake] in a comment inside the array
  """
[mcp_servers.fake]
command = "in a string"
""",
  '''
[[not_a_table]]
''',
]
disabled_tools = ["write_*"]

# ---------------------------------------------------------------------------
# Long-term memory`, 1)

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustLoad loads path and fails the test on error.
func mustLoad(t *testing.T, path string) *Config {
	t.Helper()
	c, err := LoadWith(path, io.Discard)
	if err != nil {
		t.Fatalf("LoadWith: %v\n%s", err, readString(t, path))
	}
	return c
}

// keptAround reports whether out is orig with one run of bytes inserted.
func keptAround(orig, out string) bool {
	p := 0
	for p < len(orig) && p < len(out) && orig[p] == out[p] {
		p++
	}
	return len(out) >= len(orig) && strings.HasSuffix(out[p:], orig[p:])
}

// noLeftovers fails when the directory holds anything but config.toml.
func noLeftovers(t *testing.T, path string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != filepath.Base(path) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestWithServersLoads(t *testing.T) {
	if !strings.Contains(withServers, "[mcp_servers.github]") {
		t.Fatal("template marker not found; update withServers")
	}
	c := mustLoad(t, writeConfig(t, withServers))
	if len(c.MCPServers) != 3 || len(c.MCPServers["fs"].Args) != 3 || c.MCPServers["github"].Env["GITHUB_TOKEN"] != "ghp_x" {
		t.Fatalf("servers: %+v", c.MCPServers)
	}
}

func TestAddThenRemoveRoundTrip(t *testing.T) {
	bases := map[string]string{
		"template":            configTemplate,
		"template+servers":    withServers,
		"empty":               "",
		"blank lines at end":  "max_iterations = 3\n\n\n",
		"server at end":       "[mcp_servers.a]\ncommand = \"x\"\n",
		"server, then tables": "[mcp_servers.a]\ncommand = \"x\"\n[memory]\ntop_k = 3\n",
		"server, comment":     "[mcp_servers.a]\ncommand = \"x\"\n# about memory\n\n[memory]\ntop_k = 3\n",
		"dotted servers":      "[mcp_servers]\nother.command = \"x\"\n\n[memory]\ntop_k = 3\n",
		"top-level dotted":    "mcp_servers.other.command = \"x\"\n",
		"crlf":                "max_iterations = 3\r\n\r\n# servers\r\n[mcp_servers.a]\r\ncommand = \"x\"\r\n\r\n[memory]\r\ntop_k = 3\r\n",
	}
	servers := map[string]MCPServer{
		"stdio": {Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"TOKEN": "t", "B C": "x\"y"}},
		"http": {URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t"},
			ToolTimeoutSecs: 30, StartupTimeoutSecs: 5, EnabledTools: []string{"read_*"}, DisabledTools: []string{"read_secret"}},
		"my server": {Command: "srv"},
		"a.b":       {URL: "http://localhost:3000/mcp", Headers: map[string]string{"X": "y"}},
		"ünï":       {Command: "srv", Cwd: "sub dir"},
	}
	for bname, base := range bases {
		for sname, s := range servers {
			t.Run(bname+"/"+sname, func(t *testing.T) {
				path := writeConfig(t, base)
				if err := AddMCPServer(path, sname, s); err != nil {
					t.Fatal(err)
				}
				added := readString(t, path)
				if !keptAround(base, added) {
					t.Fatalf("add changed existing bytes:\n%s", added)
				}
				if strings.Contains(base, "\r\n") && strings.Count(added, "\n") != strings.Count(added, "\r\n") {
					t.Errorf("mixed line endings:\n%q", added)
				}
				c := mustLoad(t, path)
				got := c.MCPServers[sname]
				if got == nil || got.Command != s.Command || got.URL != s.URL || !reflect.DeepEqual(compactServer(MCPServer{Env: got.Env}).Env, compactServer(MCPServer{Env: s.Env}).Env) {
					t.Fatalf("server not added as given: %+v", got)
				}
				if err := RemoveMCPServer(path, sname); err != nil {
					t.Fatal(err)
				}
				if got := readString(t, path); got != base {
					t.Fatalf("remove did not restore the file:\n--- got\n%s\n--- want\n%s", got, base)
				}
				noLeftovers(t, path)
			})
		}
	}
}

func TestAddFormat(t *testing.T) {
	path := writeConfig(t, "max_iterations = 3")
	err := AddMCPServer(path, "full", MCPServer{
		Command: "srv", Args: []string{"--flag", `with "quote"`, "tab\there"}, Env: map[string]string{"B C": "2", "A": "1"},
		Cwd: "sub", ToolTimeoutSecs: 30, StartupTimeoutSecs: 5, EnabledTools: []string{"read_*"}, DisabledTools: []string{"read_secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddMCPServer(path, "my remote", MCPServer{URL: "https://h.example/mcp", Headers: map[string]string{"Authorization": "Bearer t"}}); err != nil {
		t.Fatal(err)
	}
	want := `max_iterations = 3

[mcp_servers.full]
command = "srv"
args = ["--flag", "with \"quote\"", "tab\there"]
env = { A = "1", "B C" = "2" }
cwd = "sub"
tool_timeout_secs = 30
startup_timeout_secs = 5
enabled_tools = ["read_*"]
disabled_tools = ["read_secret"]

[mcp_servers."my remote"]
url = "https://h.example/mcp"
headers = { Authorization = "Bearer t" }
`
	if got := readString(t, path); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	c := mustLoad(t, path)
	if s := c.MCPServers["full"]; s.Cwd != filepath.Join(c.Dir(), "sub") || s.Args[2] != "tab\there" {
		t.Errorf("full: %+v", s)
	}
}

func TestAddGroupsServers(t *testing.T) {
	path := writeConfig(t, withServers)
	if err := AddMCPServer(path, "new", MCPServer{Command: "n"}); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(withServers, "\n]\ndisabled_tools = [\"write_*\"]\n\n",
		"\n]\ndisabled_tools = [\"write_*\"]\n\n[mcp_servers.new]\ncommand = \"n\"\n\n", 1)
	if got := readString(t, path); got != want {
		t.Errorf("new server not after the last one:\n%s", got)
	}
}

const removeBase = `# top comment
default_provider = "x"

[providers.x]
api_base = "http://localhost:1/v1"
default_model = "m"

# The GitHub server.
# Needs a token.
[mcp_servers.github]
command = "npx" # trailing
args = ["-y", "gh"]
# tool_timeout_secs = 10

# not attached to anything

[mcp_servers.github.env]
GITHUB_TOKEN = "t"

# Remote one.
[ mcp_servers . 'my.remote' ]   # spaces and a literal key
url = "https://h/mcp"
# url = "https://old/mcp"

# [mcp_servers.example]
# command = "commented out"

# ---
# Memory
[memory]
top_k = 5
`

func TestRemove(t *testing.T) {
	tests := []struct {
		name, base, server, want string
	}{
		{"with sub-table and attached comments", removeBase, "github", `# top comment
default_provider = "x"

[providers.x]
api_base = "http://localhost:1/v1"
default_model = "m"

# Remote one.
[ mcp_servers . 'my.remote' ]   # spaces and a literal key
url = "https://h/mcp"
# url = "https://old/mcp"

# [mcp_servers.example]
# command = "commented out"

# ---
# Memory
[memory]
top_k = 5
`},
		{"quoted name, comments of the next table kept", removeBase, "my.remote", `# top comment
default_provider = "x"

[providers.x]
api_base = "http://localhost:1/v1"
default_model = "m"

# The GitHub server.
# Needs a token.
[mcp_servers.github]
command = "npx" # trailing
args = ["-y", "gh"]
# tool_timeout_secs = 10

# not attached to anything

[mcp_servers.github.env]
GITHUB_TOKEN = "t"

# [mcp_servers.example]
# command = "commented out"

# ---
# Memory
[memory]
top_k = 5
`},
		{"comments running into the next header are its own",
			"[mcp_servers.a]\ncommand = \"x\"\n# memory settings\n[memory]\ntop_k = 5\n", "a",
			"# memory settings\n[memory]\ntop_k = 5\n"},
		{"array of tables ends the server",
			"[mcp_servers.a]\ncommand = \"x\"\n[[things]]\nname = \"t\"\n", "a",
			"[[things]]\nname = \"t\"\n"},
		{"last table of the file", "[memory]\ntop_k = 5\n\n# a\n[mcp_servers.a]\ncommand = \"x\"\n\n", "a",
			"[memory]\ntop_k = 5\n"},
		{"sub-table elsewhere in the file",
			"[mcp_servers.a]\ncommand = \"x\"\n\n[memory]\ntop_k = 5\n\n[mcp_servers.a.env]\nK = \"v\"\n", "a",
			"[memory]\ntop_k = 5\n"},
		{"under an [mcp_servers] table",
			"[mcp_servers]\n\n[mcp_servers.a]\ncommand = \"x\"\n\n[mcp_servers.b]\ncommand = \"y\"\n", "a",
			"[mcp_servers]\n\n[mcp_servers.b]\ncommand = \"y\"\n"},
		{"escaped quoted name",
			"[mcp_servers.\"a\\u0020b\"]\ncommand = \"x\"\n\n[mcp_servers.c]\ncommand = \"y\"\n", "a b",
			"[mcp_servers.c]\ncommand = \"y\"\n"},
		{"no trailing newline", "[mcp_servers.b]\ncommand = \"y\"\n\n[mcp_servers.a]\ncommand = \"x\"", "a",
			"[mcp_servers.b]\ncommand = \"y\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.base)
			if err := RemoveMCPServer(path, tt.server); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, path); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			mustLoad(t, path)
		})
	}
}

// Lines inside multi-line strings and arrays are values, whatever they look like.
func TestRemoveMultiLineValues(t *testing.T) {
	const a = `[mcp_servers.a]
command = "x"
args = [
  """
[mcp_servers.b]
command = "fake \""" still inside"
""",
  '''
[[arr]]
[memory]
''',
  """\
  [mcp_servers.b] ends with quotes""""",
  # [mcp_servers.b]
]
env = { NOTE = "[mcp_servers.b] # not a comment" }
cwd = '''
[mcp_servers.b]'''
`
	const b = `[mcp_servers.b]
command = "real"
`
	c := mustLoad(t, writeConfig(t, a+"\n"+b))
	if len(c.MCPServers) != 2 || len(c.MCPServers["a"].Args) != 3 || c.MCPServers["b"].Command != "real" {
		t.Fatalf("test config misread: %+v", c.MCPServers)
	}

	path := writeConfig(t, a+"\n"+b)
	if err := RemoveMCPServer(path, "b"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != a {
		t.Errorf("remove b:\n%s", got)
	}
	path = writeConfig(t, a+"\n"+b)
	if err := RemoveMCPServer(path, "a"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != b {
		t.Errorf("remove a:\n%s", got)
	}
	// Only text in a value: there is no such server.
	path = writeConfig(t, a)
	if err := RemoveMCPServer(path, "b"); err == nil || !strings.Contains(err.Error(), `there is no MCP server "b"`) {
		t.Errorf("err = %v", err)
	}
	if got := readString(t, path); got != a {
		t.Errorf("file changed")
	}
	// Adding after a: the new table goes after the whole of it.
	if err := AddMCPServer(path, "c", MCPServer{Command: "c"}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != a+"\n[mcp_servers.c]\ncommand = \"c\"\n" {
		t.Errorf("add c:\n%s", got)
	}
}

func TestAddRefusesDuplicates(t *testing.T) {
	for name, content := range map[string]string{
		"table":                 "[mcp_servers.gh]\ncommand = \"x\"\n",
		"sub-table only":        "[mcp_servers.gh.env]\nA = \"b\"\n",
		"dotted key":            "[mcp_servers]\ngh.command = \"x\"\n",
		"top-level dotted key":  "mcp_servers.gh.command = \"x\"\n",
		"inline table":          "[mcp_servers]\ngh = { command = \"x\" }\n",
		"top-level inline":      "mcp_servers = { gh = { command = \"x\" } }\n",
		"quoted the other way":  "[mcp_servers.'gh']\ncommand = \"x\"\n",
		"quoted with an escape": "[mcp_servers.\"\\u0067h\"]\ncommand = \"x\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, content)
			err := AddMCPServer(path, "gh", MCPServer{Command: "y"})
			if err == nil || !strings.Contains(err.Error(), "mcp_servers.gh already exists") {
				t.Errorf("err = %v", err)
			}
			if readString(t, path) != content {
				t.Error("file changed")
			}
			noLeftovers(t, path)
		})
	}
}

func TestAddRefusesInlineMCPServers(t *testing.T) {
	content := "mcp_servers = { other = { command = \"x\" } }\n"
	path := writeConfig(t, content)
	err := AddMCPServer(path, "gh", MCPServer{Command: "y"})
	if err == nil || !strings.Contains(err.Error(), "mcp_servers is set as a value (mcp_servers = { ... }), which a [mcp_servers.gh] table cannot be added to") || !strings.Contains(err.Error(), "edit the file by hand") {
		t.Errorf("err = %v", err)
	}
	if readString(t, path) != content {
		t.Error("file changed")
	}
	noLeftovers(t, path)
}

func TestAddBadNames(t *testing.T) {
	path := writeConfig(t, "")
	for _, name := range []string{"", "a\nb", "tab\there", "\xff"} {
		if err := AddMCPServer(path, name, MCPServer{Command: "x"}); err == nil {
			t.Errorf("%q accepted", name)
		}
	}
	if err := AddMCPServer(path, "ok", MCPServer{Command: "x", Args: []string{"\xff"}}); err == nil ||
		!strings.Contains(err.Error(), "mcp_servers.ok.args") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if readString(t, path) != "" {
		t.Error("file changed")
	}
}

func TestAddCreatesMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "config.toml")
	if err := AddMCPServer(path, "fs", MCPServer{Command: "srv"}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "[mcp_servers.fs]\ncommand = \"srv\"\n" {
		t.Errorf("content:\n%s", got)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(path)
		di, _ := os.Stat(filepath.Dir(path))
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("modes: file %v, dir %v", fi.Mode(), di.Mode())
		}
	}
	if c := mustLoad(t, path); c.MCPServers["fs"].Command != "srv" {
		t.Errorf("%+v", c.MCPServers)
	}
	noLeftovers(t, path)
}

func TestAddKeepsModeAndSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes and symlinks")
	}
	path := writeConfig(t, "max_iterations = 3\n")
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.toml")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := AddMCPServer(link, "fs", MCPServer{Command: "srv"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced: %v %v", fi, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", fi.Mode())
	}
	if err := RemoveMCPServer(link, "fs"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "max_iterations = 3\n" {
		t.Errorf("content: %q", got)
	}
}

func TestAddValidationFailureLeavesFile(t *testing.T) {
	tests := []struct {
		name    string
		server  MCPServer
		wantErr string
	}{
		{"headers over http", MCPServer{URL: "http://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t"}},
			"config: mcp_servers.gh.headers: headers would be sent in clear text over http:// to a non-loopback host; use https://"},
		{"command and url", MCPServer{Command: "x", URL: "https://h"}, "config: mcp_servers.gh: set only one of command"},
		{"neither", MCPServer{}, "config: mcp_servers.gh: set command (stdio server) or url (HTTP server)"},
		{"bad glob", MCPServer{Command: "x", EnabledTools: []string{"a["}}, `config: mcp_servers.gh.enabled_tools: entry 1 "a["`},
		{"negative timeout", MCPServer{Command: "x", ToolTimeoutSecs: -1}, "config: mcp_servers.gh.tool_timeout_secs: must be greater than 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, withServers)
			err := AddMCPServer(path, "gh", tt.server)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if readString(t, path) != withServers {
				t.Error("file changed")
			}
			noLeftovers(t, path)

			// A missing file is not created, nor its directory.
			dir := t.TempDir()
			missing := filepath.Join(dir, "sub", "config.toml")
			if err := AddMCPServer(missing, "gh", tt.server); err == nil {
				t.Fatal("no error for a new file")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

// The rest of the file must be valid too, and errors name the real file.
func TestEditInvalidFile(t *testing.T) {
	content := "max_iterations = 0\n[mcp_servers.a]\ncommand = \"x\"\n"
	path := writeConfig(t, content)
	if err := AddMCPServer(path, "b", MCPServer{Command: "y"}); err == nil || err.Error() != "config: max_iterations: must be at least 1 (got 0)" {
		t.Errorf("add: %v", err)
	}
	if err := RemoveMCPServer(path, "a"); err == nil || !strings.Contains(err.Error(), "max_iterations") {
		t.Errorf("remove: %v", err)
	}
	if readString(t, path) != content {
		t.Error("file changed")
	}

	content = "max_iterations = \n"
	path = writeConfig(t, content)
	for _, err := range []error{AddMCPServer(path, "b", MCPServer{Command: "y"}), RemoveMCPServer(path, "b")} {
		if err == nil || !strings.HasPrefix(err.Error(), "config: "+path+": line 1") {
			t.Errorf("syntax error: %v", err)
		}
	}
	if readString(t, path) != content {
		t.Error("file changed")
	}
	noLeftovers(t, path)
}

func TestRemoveErrors(t *testing.T) {
	tests := []struct {
		name, content, server, want string
	}{
		{"missing server", "[mcp_servers.a]\ncommand = \"x\"\n", "b", `there is no MCP server "b" (no mcp_servers.b table)`},
		{"no servers at all", configTemplate, "filesystem", `there is no MCP server "filesystem"`},
		{"top-level inline table", "mcp_servers = { gh = { command = \"x\" } }\n", "gh", "is written as an inline table or with dotted keys"},
		{"inline table under [mcp_servers]", "[mcp_servers]\ngh = { command = \"x\" }\n", "gh", "edit the file by hand"},
		{"dotted keys under [mcp_servers]", "[mcp_servers]\ngh.command = \"x\"\n", "gh", "edit the file by hand"},
		{"top-level dotted keys", "mcp_servers.gh.command = \"x\"\n", "gh", "edit the file by hand"},
		{"dotted keys and a sub-table", "[mcp_servers]\ngh.command = \"x\"\n\n[mcp_servers.gh.env]\nA = \"b\"\n", "gh",
			"part of mcp_servers.gh is written outside its [mcp_servers.gh] tables"},
		{"inline sub-table of another form", "[mcp_servers.gh.env]\nA = \"b\"\n[mcp_servers]\ngh.command = \"x\"\n", "gh", "edit the file by hand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.content)
			err := RemoveMCPServer(path, tt.server)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if readString(t, path) != tt.content {
				t.Error("file changed")
			}
			noLeftovers(t, path)
		})
	}
	missing := filepath.Join(t.TempDir(), "config.toml")
	if err := RemoveMCPServer(missing, "a"); err == nil || err.Error() != "config: "+missing+" does not exist" {
		t.Errorf("missing file: %v", err)
	}
}

func TestScanTOML(t *testing.T) {
	data := []byte("\uFEFF# c\n\n[a.\"b c\".'d']  # x\n[[arr]]\nk = \"\"\"\n[x]\n\"\"\"\n  [ t ]\nv = [\n1,\n]\n")
	lines, err := scanTOML(data)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []lineKind
	var keys []string
	for _, l := range lines {
		kinds = append(kinds, l.kind)
		if l.kind == lineHeader {
			keys = append(keys, l.key.String())
		}
	}
	wantKinds := []lineKind{lineComment, lineBlank, lineHeader, lineHeader, lineKeyValue, lineCont, lineCont, lineHeader, lineKeyValue, lineCont, lineCont}
	if !reflect.DeepEqual(kinds, wantKinds) || !reflect.DeepEqual(keys, []string{`a."b c".d`, "arr", "t"}) || !lines[3].array {
		t.Errorf("kinds %v keys %v", kinds, keys)
	}
}

// FuzzScanTOML checks the line scanner against the TOML decoder: on any
// document the decoder accepts, the lines cover the file, every header found
// is a key the decoder saw, and dropping the lines taken for comments or
// blank changes nothing (so no line inside a value is taken for one).
func FuzzScanTOML(f *testing.F) {
	for _, s := range []string{configTemplate, withServers, removeBase, "a = \"\"\"\n[x]\n\"\"\"\n[y]\n", "a = [\n'[x]',\n# [y]\n]\n[z]\n", "a = { b = 1 }\n[[c]]\n[c.d]\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v map[string]any
		md, err := toml.Decode(s, &v)
		if err != nil {
			return
		}
		lines, err := scanTOML([]byte(s))
		if err != nil {
			t.Fatalf("scanTOML: %v", err)
		}
		keys := map[string]bool{}
		for _, k := range md.Keys() {
			keys[k.String()] = true
		}
		end := 0
		for _, l := range lines {
			if l.start != end || l.end <= l.start {
				t.Fatalf("lines do not cover the file: %+v", lines)
			}
			end = l.end
			if l.kind == lineHeader && !keys[l.key.String()] {
				t.Fatalf("header %s not among the keys %v", l.key, md.Keys())
			}
		}
		if end != len(s) {
			t.Fatalf("lines end at %d of %d", end, len(s))
		}
		var kept strings.Builder
		for _, l := range lines {
			if l.kind != lineComment && l.kind != lineBlank {
				kept.WriteString(s[l.start:l.end])
			}
		}
		var v2 map[string]any
		if _, err := toml.Decode(kept.String(), &v2); err != nil {
			t.Fatalf("without comments: %v\n%s", err, kept.String())
		}
		if !sameExceptServer(v, v2, "\x00") {
			t.Fatalf("without comments the document changed:\n%s", kept.String())
		}
	})
}
