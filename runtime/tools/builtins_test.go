package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/confine"
)

func run(t *testing.T, tool Tool, args string) Result {
	t.Helper()
	return tool.Run(context.Background(), json.RawMessage(args))
}

func argsJSON(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantOK(t *testing.T, r Result, want string) {
	t.Helper()
	if r.IsError || r.Content != want {
		t.Fatalf("got %+v\nwant success %q", r, want)
	}
}

func wantErr(t *testing.T, r Result, substr string) {
	t.Helper()
	if !r.IsError || !strings.Contains(r.Content, substr) {
		t.Fatalf("got %+v\nwant error containing %q", r, substr)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSpecsMatchSeed checks names, descriptions and schemas against the
// copy of the API specification's tool list in testdata.
func TestSpecsMatchSeed(t *testing.T) {
	data, err := os.ReadFile("testdata/builtin_specs.json")
	if err != nil {
		t.Fatal(err)
	}
	var seed []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(data, &seed); err != nil {
		t.Fatal(err)
	}
	reg, err := Builtins(Options{WorkDir: t.TempDir(), AllowShell: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(seed) != 7 || len(reg.Tools()) != 7 {
		t.Fatalf("seed has %d tools, registry %d; want 7", len(seed), len(reg.Tools()))
	}
	for _, s := range seed {
		tool, ok := reg.Get(s.Function.Name)
		if !ok {
			t.Errorf("tool %s missing", s.Function.Name)
			continue
		}
		got := tool.Spec()
		if got.Name != s.Function.Name || got.Description != s.Function.Description {
			t.Errorf("%s: spec name/description differ from the seed", s.Function.Name)
		}
		var a, b bytes.Buffer
		if err := json.Compact(&a, got.Parameters); err != nil {
			t.Fatalf("%s: parameters are not valid JSON: %v", got.Name, err)
		}
		if err := json.Compact(&b, s.Function.Parameters); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Errorf("%s: parameters differ:\n got %s\nwant %s", got.Name, a.String(), b.String())
		}
	}
}

func TestBuiltinsKindsAndShellGate(t *testing.T) {
	want := map[string]string{
		"execute_command": KindExecute, "read_file": KindRead, "write_file": KindEdit,
		"edit_file": KindEdit, "list_dir": KindRead, "search": KindSearch, "web_fetch": KindFetch,
	}
	reg, err := Builtins(Options{WorkDir: t.TempDir(), AllowShell: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, kind := range want {
		tool, ok := reg.Get(name)
		if !ok || tool.Kind() != kind {
			t.Errorf("%s: present=%v kind=%q, want %q", name, ok, tool.Kind(), kind)
		}
	}
	noShell, err := Builtins(Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := noShell.Get("execute_command"); ok {
		t.Error("execute_command offered without AllowShell")
	}
	if len(noShell.Tools()) != 6 {
		t.Errorf("got %d tools without shell, want 6", len(noShell.Tools()))
	}
	if _, err := Builtins(Options{WorkDir: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("missing work dir accepted")
	}
}

// TestBadArguments feeds every tool malformed calls; each must come back as
// an error result naming the problem, never a panic.
func TestBadArguments(t *testing.T) {
	reg, err := Builtins(Options{WorkDir: t.TempDir(), AllowShell: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range reg.Tools() {
		for _, raw := range []string{"null", "[]", `"str"`, "42", "{", `{"a":`, "true"} {
			wantErr(t, run(t, tool, raw), "expected a JSON object")
		}
	}
	tests := []struct {
		tool, args, want string
	}{
		{"execute_command", `{}`, `missing required argument "command"`},
		{"execute_command", `{"command":null}`, `missing required argument "command"`},
		{"execute_command", `{"command":["ls"]}`, `argument "command" must be a string, got ["ls"]`},
		{"execute_command", `{"command":"  "}`, "command is empty"},
		{"read_file", `{}`, `missing required argument "path"`},
		{"read_file", `{"path":1}`, `argument "path" must be a string, got 1`},
		{"read_file", `{"path":"f","offset":"2"}`, `argument "offset" must be an integer, got "2"`},
		{"read_file", `{"path":"f","offset":1.5}`, `argument "offset" must be an integer, got 1.5`},
		{"read_file", `{"path":"f","offset":0}`, `argument "offset" must be at least 1, got 0`},
		{"read_file", `{"path":"f","limit":-3}`, `argument "limit" must be at least 1, got -3`},
		{"read_file", `{"path":"f","limit":1e300}`, `argument "limit" must be an integer`},
		{"write_file", `{"path":"f"}`, `missing required argument "content"`},
		{"write_file", `{"content":"x"}`, `missing required argument "path"`},
		{"write_file", `{"path":"f","content":{}}`, `argument "content" must be a string, got {}`},
		{"edit_file", `{"path":"f","old_string":"a"}`, `missing required argument "new_string"`},
		{"edit_file", `{"path":"f","new_string":"a"}`, `missing required argument "old_string"`},
		{"edit_file", `{"path":"f","old_string":"a","new_string":"b","replace_all":"yes"}`, `argument "replace_all" must be a boolean, got "yes"`},
		{"list_dir", `{"path":false}`, `argument "path" must be a string, got false`},
		{"search", `{}`, `missing required argument "pattern"`},
		{"search", `{"pattern":"x","case_insensitive":1}`, `argument "case_insensitive" must be a boolean, got 1`},
		{"search", `{"pattern":""}`, "pattern is empty"},
		{"web_fetch", `{}`, `missing required argument "url"`},
		{"web_fetch", `{"url":7}`, `argument "url" must be a string, got 7`},
	}
	for _, tc := range tests {
		tool, _ := reg.Get(tc.tool)
		wantErr(t, run(t, tool, tc.args), tc.want)
	}
}

func TestEmptyArgumentsMeanNoArguments(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"x.txt": ""})
	wantOK(t, run(t, &ListDir{Root: mustRoot(t, root)}, "  "), "x.txt")
}

func mustRoot(t *testing.T, dir string) *confine.Root {
	t.Helper()
	r, err := confine.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
