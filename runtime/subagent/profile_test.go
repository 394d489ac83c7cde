package subagent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadProfiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"researcher.md": "---\n" +
			"# a comment\n" +
			"description: Finds things out # trailing comment\n" +
			"model: \"gpt-4o-mini\"\n" +
			"provider: 'open''ai'\n" +
			"tools: [read_file, \"search_files\"]\n" +
			"max_iterations: 4\n" +
			"---\n\nYou research.\nCarefully.\n",
		"block_list.md":   "---\r\ndescription: Uses C# and \"quotes\"\r\ntools:\r\n  - read_file\r\n- list_directory\r\n---\r\nBody\r\n",
		"comma.md":        "---\nname: comma\ntools: read_file, list_directory\n---\nBody",
		"no-tools.md":     "---\ntools: []\n---\nBody",
		"inherit.md":      "---\ntools:\ndescription: x\n---\nBody",
		"plain.md":        "Just a prompt.\n",
		"rust.md":         "+++\ndescription = \"TOML style\"\nmodel = \"m\"\ntools = [\"read_file\"]\nmax_iterations = 6\n+++\nRust body\n",
		".hidden.md":      "not loaded",
		"notes.txt":       "not loaded",
		"README.markdown": "not loaded",
	})
	got, err := LoadProfiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Profile{
		"researcher": {Name: "researcher", Description: "Finds things out", Model: "gpt-4o-mini", Provider: "open'ai",
			Tools: []string{"read_file", "search_files"}, MaxIterations: 4, System: "You research.\nCarefully."},
		"block_list": {Name: "block_list", Description: `Uses C# and "quotes"`, Tools: []string{"read_file", "list_directory"}, System: "Body"},
		"comma":      {Name: "comma", Tools: []string{"read_file", "list_directory"}, System: "Body"},
		"no-tools":   {Name: "no-tools", Tools: []string{}, System: "Body"},
		"inherit":    {Name: "inherit", Description: "x", System: "Body"},
		"plain":      {Name: "plain", System: "Just a prompt."},
		"rust":       {Name: "rust", Description: "TOML style", Model: "m", Tools: []string{"read_file"}, MaxIterations: 6, System: "Rust body"},
	}
	if !reflect.DeepEqual(got, want) {
		for n := range want {
			if !reflect.DeepEqual(got[n], want[n]) {
				t.Errorf("%s:\n got %#v\nwant %#v", n, got[n], want[n])
			}
		}
		t.Fatalf("loaded %d profiles, want %d", len(got), len(want))
	}
	if got["inherit"].Tools != nil || got["no-tools"].Tools == nil {
		t.Error("an empty tools: must inherit (nil), tools: [] must mean none (empty, not nil)")
	}
}

func TestLoadProfilesMissingDir(t *testing.T) {
	got, err := LoadProfiles(filepath.Join(t.TempDir(), "agents"))
	if err != nil || len(got) != 0 {
		t.Fatalf("missing dir: %v, %v; want no profiles, no error", got, err)
	}
}

func TestLoadProfilesErrors(t *testing.T) {
	cases := []struct {
		file, body string
		want       string // in the error, after "<path>"
	}{
		{"a.b.md", "x", `: invalid subagent name "a.b"`},
		{"my agent.md", "x", `: invalid subagent name "my agent"`},
		{"ü.md", "x", `: invalid subagent name "ü"`},
		{"open.md", "---\ndescription: x\nbody without a close\n", ":1: the front matter opened here is never closed"},
		{"noline.md", "---\ndescription: x\njust words\n---\nbody", `:3: expected ` + "`key: value`"},
		{"indent.md", "---\n  description: x\n---\nbody", `:2: expected`},
		{"unknown.md", "---\ndescription: x\nmax_iteration: 3\n---\nbody", ":3: max_iteration: unknown key"},
		{"twice.md", "---\nmodel: a\nmodel: b\n---\nbody", ":3: model is set twice"},
		{"iter.md", "---\nmax_iterations: many\n---\nbody", `:2: max_iterations: want a positive integer, got "many"`},
		{"zero.md", "---\nmax_iterations: 0\n---\nbody", `:2: max_iterations: want a positive integer`},
		{"block.md", "---\ndescription: |\n  long\n---\nbody", ":2: description: block scalars"},
		{"quote.md", "---\ndescription: \"unclosed\n---\nbody", ":2: description: found unexpected end of stream"},
		{"list.md", "---\ntools: [read_file\n---\nbody", ":2: tools: did not find expected ',' or ']'"},
		{"item.md", "---\ntools:\n  - read_file\n  -\n---\nbody", ":4: expected a tool name"},
		{"name.md", "---\nname: other\n---\nbody", `:2: name: "other" differs from the file name "name"`},
		{"toml.md", "+++\ndescription = \"x\"\nmodel = = 1\n+++\nbody", ":3: "},
		{"tomlkey.md", "+++\ncolour = \"red\"\n+++\nbody", ":1: unknown key colour"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{c.file: c.body})
			_, err := LoadProfiles(dir)
			path := filepath.Join(dir, c.file)
			if err == nil || !strings.HasPrefix(err.Error(), path+c.want) {
				t.Fatalf("error = %v\nwant prefix %s%s", err, path, c.want)
			}
		})
	}
}

func TestLoadProfilesSymlinks(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.md": "outside the agents dir"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"real.md": "inside"})
	if err := os.Symlink("real.md", filepath.Join(dir, "alias.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	got, err := LoadProfiles(dir)
	if err != nil || got["alias"].System != "inside" {
		t.Fatalf("a symlink within the dir should load: %v, %v", got, err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "escape.md")); err != nil {
		t.Fatal(err)
	}
	_, err = LoadProfiles(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "escape.md")+": a symlink must point to a file inside") {
		t.Fatalf("escaping symlink: err = %v", err)
	}
}
