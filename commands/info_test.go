package commands

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Tests of the commands that show what is configured: skills, tools, init.

func TestSkillsRun(t *testing.T) {
	e := newTestEnv(t, `default_skills = ["go"]`+"\n"+fakeConfig)
	opts, err := parseCmd(t, e, "", newCmdSkills, "--json", "go")
	if err != nil || opts.Name != "go" || !opts.Output.JSON {
		t.Fatalf("flags: %+v, %v", opts, err)
	}
	wantExit(t, second(parseCmd(t, e, "", newCmdSkills, "a", "b")), ExitUsage, "skills: at most one NAME")

	ctx := context.Background()
	opts = &SkillsOptions{IO: e.f.IOStreams, Config: e.f.Config}
	if err := skillsRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(e.cfgPath), "skills")
	if e.out.String() != "" || e.errOut.String() != "no skills yet: add one as "+dir+"/<name>.md\n" {
		t.Errorf("none: %q / %q", e.out, e.errOut)
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "go.md"), []byte("Write idiomatic Go."), 0o644)
	os.WriteFile(filepath.Join(dir, "rust.md"), []byte("Write Rust."), 0o644)
	e.reset()
	if err := skillsRun(ctx, opts); err != nil || e.out.String() != "go (default)\nrust\n" {
		t.Errorf("list: %q, %v", e.out, err)
	}
	e.reset()
	opts.Output = jsonOutput{JSON: true}
	if err := skillsRun(ctx, opts); err != nil || e.out.String() != `{"default":true,"name":"go"}`+"\n"+`{"default":false,"name":"rust"}`+"\n" {
		t.Errorf("--json: %q, %v", e.out, err)
	}
	e.reset()
	opts.Name, opts.Output = "rust", jsonOutput{}
	if err := skillsRun(ctx, opts); err != nil || e.out.String() != "Write Rust.\n" {
		t.Errorf("show: %q, %v", e.out, err)
	}
	opts.Name = "cobol"
	wantExit(t, skillsRun(ctx, opts), ExitUsage, "skills: ")
}

func TestToolsRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	opts, err := parseCmd(t, e, "", newCmdTools, "--allow-shell", "--select", "function.name")
	if err != nil || !opts.AllowShell || opts.Output.Select != "function.name" {
		t.Fatalf("flags: %+v, %v", opts, err)
	}
	wantExit(t, second(parseCmd(t, e, "", newCmdTools, "x")), ExitUsage, `tools: unexpected argument "x"`)

	if err := toolsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	names := e.out.String()
	for _, want := range []string{"read_file\n", "execute_command\n", "remember\n", "delegate_task\n"} {
		if !strings.Contains(names, want) {
			t.Errorf("tools lack %q: %q", want, names)
		}
	}
	// The config is loaded once per process: a fresh one for the default.
	e = newTestEnv(t, fakeConfig)
	opts = &ToolsOptions{IO: e.f.IOStreams, Config: e.f.Config}
	if err := toolsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.out.String(), "NAME") || strings.Contains(e.out.String(), "execute_command") ||
		!regexpMatch(`\nread_file +read +\S`, e.out.String()) {
		t.Errorf("table without the shell:\n%s", e.out)
	}
	if _, err := os.Stat(filepath.Join(e.home, "memory")); err == nil {
		t.Error("listing the tools opened the memory")
	}
}

func TestInitRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	wantExit(t, second(parseCmd(t, e, "", newCmdInit, "x")), ExitUsage, `init: unexpected argument "x"`)
	home := filepath.Join(e.home, "fresh")
	opts := &InitOptions{IO: e.f.IOStreams, Home: func() string { return home }}
	if err := initRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	want := "wrote " + filepath.Join(home, "config.toml") + "\nwrote " + filepath.Join(home, "system.md") + "\n"
	if !strings.HasPrefix(e.out.String(), want) || !strings.Contains(e.out.String(), "Next: set your API key") {
		t.Errorf("stdout %q", e.out)
	}
	e.reset()
	wantExit(t, initRun(context.Background(), opts), ExitUsage, "init: ")
	if e.out.String() != "" {
		t.Errorf("a second init wrote %q", e.out)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestToolsListsMCPTools: `openheim tools` lists the tools of the MCP
// servers it connects to, as a turn offers them, and warns about a server
// that fails; --no-mcp lists without connecting.
func TestToolsListsMCPTools(t *testing.T) {
	e := mcpEnv(t)
	opts, err := parseCmd(t, e, "", newCmdTools, "--select", "function.name")
	if err != nil {
		t.Fatal(err)
	}
	if err := toolsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if names := e.out.String(); !strings.Contains(names, "files__read_file\n") || !strings.Contains(names, "read_file\n") {
		t.Errorf("tools: %q", names)
	}
	if !strings.HasPrefix(e.errOut.String(), "openheim: warning: MCP server broken: ") {
		t.Errorf("the failed server is not warned about: %q", e.errOut)
	}
	e.reset()
	opts, _ = parseCmd(t, e, "", newCmdTools, "--no-mcp", "--select", "function.name")
	if !opts.NoMCP {
		t.Fatal("--no-mcp not parsed")
	}
	if err := toolsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if names := e.out.String(); strings.Contains(names, "files__") || !strings.Contains(names, "read_file\n") || e.errOut.String() != "" {
		t.Errorf("--no-mcp: %q %q", names, e.errOut)
	}
}
