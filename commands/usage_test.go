package commands

import (
	"context"
	"strings"
	"testing"
)

// runRoot runs the whole command tree with args, as main does.
func runRoot(t *testing.T, e *testEnv, args ...string) error {
	t.Helper()
	root := newRoot(e.f)
	return root.Run(context.Background(), append([]string{"openheim", "--config", e.cfgPath}, args...))
}

// Every usage error exits 2 and reads the same at every level: the
// command's path, words a user knows, a suggestion when a name was close,
// and the command's own --help.
func TestUsageErrors(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	for _, tc := range []struct {
		args       []string
		msg, hint  string
		notInWords string
	}{
		{[]string{"sesions"}, `unknown command "sesions"`, "did you mean 'openheim sessions'? see 'openheim --help'", ""},
		{[]string{"sessions", "lss"}, `sessions: unknown command "lss"`, "did you mean 'openheim sessions ls'?", "No help topic"},
		{[]string{"memory", "lss"}, `memory: unknown command "lss"`, "did you mean 'openheim memory ls'?", ""},
		{[]string{"mcp", "lss"}, `mcp: unknown command "lss"`, "did you mean 'openheim mcp ls'?", ""},
		{[]string{"sessions", "frobnicate"}, `sessions: unknown command "frobnicate"`, "see 'openheim sessions --help' for the commands", "did you mean"},
		{[]string{"sessions", "ls", "--limit=-5"}, "sessions ls: --limit: must be 0 or more (got -5)", "see 'openheim sessions ls --help'", ""},
		{[]string{"sessions", "ls", "--limit=abc"}, `sessions ls: --limit: "abc" is not a whole number`, "", "strconv"},
		{[]string{"sessions", "ls", "--limt", "3"}, "sessions ls: unknown flag --limt", "did you mean --limit? see 'openheim sessions ls --help'", ""},
		{[]string{"sessions", "ls", "stray"}, `sessions ls: unexpected argument "stray"`, "see 'openheim sessions ls --help'", ""},
		{[]string{"prompt", "--timeout", "soon", "hi"}, `prompt: --timeout: "soon" is not a duration`, "see 'openheim prompt --help'", "time:"},
		{[]string{"prompt", "--model"}, "prompt: --model needs a value", "", ""},
		{[]string{"--nope"}, "unknown flag --nope", "see 'openheim --help'", "openheim:"},
		{[]string{"help", "sessions", "lss"}, `sessions: unknown command "lss"`, "did you mean 'openheim sessions ls'?", ""},
		{[]string{"completion", "tcsh"}, `completion: unknown command "tcsh"`, "see 'openheim completion --help'", ""},
		{[]string{"memory", "ls", "--limit", "-1"}, "memory ls: --limit: must be 0 or more", "", ""},
	} {
		err := runRoot(t, e, tc.args...)
		code, msg := exitCode(err)
		hint := ""
		if ee, ok := err.(*ExitError); ok {
			hint = ee.Hint
		}
		if code != ExitUsage || !strings.HasPrefix(msg, tc.msg) || !strings.Contains(hint, tc.hint) ||
			tc.notInWords != "" && strings.Contains(msg+hint, tc.notInWords) {
			t.Errorf("%q: exit %d, %q, hint %q; want exit 2, %q, hint with %q", tc.args, code, msg, hint, tc.msg, tc.hint)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"prompt", "chat", "sessions", "memory", "mcp", "bash", "zsh", "fish"}
	for name, want := range map[string]string{
		"promtp": "prompt", "chta": "chat", "sesions": "sessions", "memroy": "memory", "ses": "sessions",
		"mpc": "mcp", "tcsh": "", "xyz": "", "": "", "bsh": "bash",
	} {
		if got := nearest(name, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	if err := runRoot(t, e, "version"); err != nil || !strings.HasPrefix(e.out.String(), "openheim version test (go") {
		t.Errorf("version: %v, %q", err, e.out)
	}
	e.reset()
	if err := runRoot(t, e, "--version"); err != nil || !strings.HasPrefix(e.out.String(), "openheim version test (go") {
		t.Errorf("--version: %v, %q", err, e.out)
	}
	e.reset()
	if err := runRoot(t, e, "help", "sessions", "ls"); err != nil || !strings.Contains(e.out.String(), "openheim sessions ls - list sessions") {
		t.Errorf("help sessions ls: %v, %q", err, e.out)
	}
	e.reset()
	if err := runRoot(t, e, "help", "memory"); err != nil || !strings.Contains(e.out.String(), "openheim memory - long-term notes") {
		t.Errorf("help memory: %v, %q", err, e.out)
	}
	e.reset()
	if err := runRoot(t, e, "help"); err != nil || !strings.Contains(e.out.String(), "completion  print a shell completion script") {
		t.Errorf("help: %v, %q", err, e.out)
	}
}

// --select with a path no object has says so once, naming the fields.
func TestSelectMatchingNothing(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	twoSessions(t, e)
	if err := runRoot(t, e, "sessions", "ls", "--select", "meta.title"); err != nil {
		t.Fatal(err)
	}
	if e.out.String() != "\n\n" {
		t.Errorf("stdout %q: want one empty line per session", e.out)
	}
	if got := e.errOut.String(); strings.Count(got, "matches nothing") != 1 || !strings.Contains(got, "the fields are: id, title, model") {
		t.Errorf("stderr %q", got)
	}
	e.reset()
	if err := runRoot(t, e, "sessions", "ls", "--select", "title"); err != nil || e.errOut.String() != "" {
		t.Errorf("a path that matches: %v, stderr %q", err, e.errOut)
	}
}
