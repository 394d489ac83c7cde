package commands

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSessionsFlags(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	ls, err := parseCmd(t, e, "sessions", newCmdSessionsLs, "--cwd", e.work, "--since", "2026-01-31", "--limit", "5", "--select", "id")
	if err != nil {
		t.Fatal(err)
	}
	since, _ := time.ParseInLocation(time.DateOnly, "2026-01-31", time.Local)
	if ls.Filter.Cwd != e.work || !ls.Filter.Since.Equal(since) || ls.Filter.Limit != 5 || ls.Output.Select != "id" || ls.Output.JSON {
		t.Errorf("ls: %+v", ls)
	}
	search, _ := parseCmd(t, e, "sessions", newCmdSessionsSearch, "refresh", "token", "--limit", "3", "--json")
	if search.Query != "refresh token" || search.Limit != 3 || !search.Output.JSON {
		t.Errorf("search: %+v", search)
	}
	export, _ := parseCmd(t, e, "sessions", newCmdSessionsExport, "--format", "json", "-o", "x.json", "5d0c")
	if export.Ref != "5d0c" || export.Format != "json" || export.File != "x.json" {
		t.Errorf("export: %+v", export)
	}
	prune, _ := parseCmd(t, e, "sessions", newCmdSessionsPrune, "--older-than", "2w", "--dry-run", "--purge")
	if prune.Age != 14*24*time.Hour || prune.OlderThan != "2w" || !prune.DryRun || !prune.Purge {
		t.Errorf("prune: %+v", prune)
	}
	rm, _ := parseCmd(t, e, "sessions", newCmdSessionsRm, "--purge", "a", "b")
	if strings.Join(rm.Refs, ",") != "a,b" || !rm.Purge {
		t.Errorf("rm: %+v", rm)
	}
	fork, _ := parseCmd(t, e, "sessions", newCmdSessionsFork, "a")
	rename, _ := parseCmd(t, e, "sessions", newCmdSessionsRename, "a", "new title")
	if fork.At != -1 || rename.Ref != "a" || rename.Title != "new title" {
		t.Errorf("fork %+v rename %+v", fork, rename)
	}

	for _, tc := range []struct {
		newCmd func(*testing.T) error
		msg    string
	}{
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsLs, "x"); return err }, `ls: unexpected argument "x"`},
		{func(t *testing.T) error {
			_, err := parseCmd(t, e, "sessions", newCmdSessionsLs, "--since", "soon")
			return err
		}, `--since: "soon" is not an age`},
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsShow); return err }, "sessions show: give one session id"},
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsSearch); return err }, "sessions search: give a query"},
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsRename, "a"); return err }, "sessions rename: give a session and a new title"},
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsFork); return err }, "sessions fork: give one session"},
		{func(t *testing.T) error {
			_, err := parseCmd(t, e, "sessions", newCmdSessionsExport, "--format", "pdf", "a")
			return err
		}, `sessions export: --format must be md or json, not "pdf"`},
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsRm); return err }, "sessions rm: give at least one session"},
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsPrune); return err }, "sessions prune: --older-than is required"},
		{func(t *testing.T) error {
			_, err := parseCmd(t, e, "sessions", newCmdSessionsPrune, "--older-than", "-3d")
			return err
		}, `--older-than: "-3d" is not an age`},
		{func(t *testing.T) error { _, err := parseCmd(t, e, "sessions", newCmdSessionsReindex, "x"); return err }, `reindex: unexpected argument "x"`},
	} {
		wantExit(t, tc.newCmd(t), ExitUsage, tc.msg)
	}
}

// twoSessions stores an old session about JWT and a new one about cats.
func twoSessions(t *testing.T, e *testEnv) (old, cats string) {
	t.Helper()
	o := e.addSession("JWT refactor", "refresh the jwt token", "done, token refreshed", time.Now().Add(-100*24*time.Hour))
	n := e.addSession("Cats", "tell me about cats", "cats purr", time.Now())
	return o.ID, n.ID
}

func TestSessionsLsRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	opts := &SessionsLsOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions}
	opts.Filter.Limit = 50
	if err := sessionsLsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if e.out.String() != "" || !strings.HasPrefix(e.errOut.String(), "No sessions yet.") {
		t.Errorf("empty: stdout %q stderr %q", e.out, e.errOut)
	}
	old, cats := twoSessions(t, e)
	e.reset()
	if err := sessionsLsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], cats[:8]+"  just now") ||
		!strings.HasPrefix(lines[2], old[:8]) || !strings.HasSuffix(lines[2], "JWT refactor") {
		t.Errorf("table:\n%s", e.out)
	}
	e.reset()
	opts.Output = jsonOutput{JSON: true}
	opts.Filter.Since = time.Now().Add(-time.Hour)
	if err := sessionsLsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	var got sessionJSON
	if err := json.Unmarshal([]byte(e.out.String()), &got); err != nil || got.ID != cats || got.Messages != 2 || got.Cwd != e.work {
		t.Errorf("--json --since 1h: %q (%v)", e.out, err)
	}
}

func TestSessionsShowAndExportRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	_, cats := twoSessions(t, e)
	show := &SessionsShowOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions, Ref: "Cats"}
	if err := sessionsShowRun(context.Background(), show); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Cats\n", "- id: " + cats, "tell me about cats", "cats purr"} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, e.out)
		}
	}
	e.reset()
	show.Ref, show.Output = cats[:6], jsonOutput{Select: "meta.title"}
	if err := sessionsShowRun(context.Background(), show); err != nil || e.out.String() != "Cats\n" {
		t.Errorf("--select meta.title: %q, %v", e.out, err)
	}
	show.Ref = "nothing like it"
	wantExit(t, sessionsShowRun(context.Background(), show), ExitUsage, "sessions show: ")

	file := filepath.Join(e.work, "out.json")
	export := &SessionsExportOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions, Ref: cats, Format: "json", File: file}
	if err := sessionsExportRun(context.Background(), export); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	var conv struct {
		Meta     struct{ ID string }
		Messages []json.RawMessage
	}
	if err := json.Unmarshal(data, &conv); err != nil || conv.Meta.ID != cats || len(conv.Messages) != 2 || !strings.Contains(string(data), "\n  \"") {
		t.Errorf("exported json (indented, 2 messages): %s (%v)", data, err)
	}
	e.reset()
	export.Format, export.File = "md", ""
	if err := sessionsExportRun(context.Background(), export); err != nil || !strings.HasPrefix(e.out.String(), "# Cats\n") {
		t.Errorf("md to stdout: %q, %v", e.out, err)
	}
}

func TestSessionsSearchRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	old, _ := twoSessions(t, e)
	opts := &SessionsSearchOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions, Query: "jwt token", Limit: 20}
	if err := sessionsSearchRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], old[:8]) {
		t.Errorf("table:\n%s", e.out)
	}
	e.reset()
	opts.Output = jsonOutput{Select: "session_id"}
	if err := sessionsSearchRun(context.Background(), opts); err != nil || e.out.String() != old+"\n" {
		t.Errorf("--select session_id: %q, %v", e.out, err)
	}
	e.reset()
	opts.Query, opts.Output = "zebra", jsonOutput{}
	if err := sessionsSearchRun(context.Background(), opts); err != nil || e.errOut.String() != "No session mentions \"zebra\".\n" {
		t.Errorf("no hits: %q, %v", e.errOut, err)
	}
}

func TestSessionsRenameAndForkRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	old, _ := twoSessions(t, e)
	rename := &SessionsRenameOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions, Ref: old[:8], Title: "  Auth   work "}
	if err := sessionsRenameRun(context.Background(), rename); err != nil {
		t.Fatal(err)
	}
	m, _ := e.sessions().Files.LoadMeta(old)
	if e.out.String() != old+" Auth work\n" || deref(m.Title) != "Auth work" {
		t.Errorf("rename: %q, stored %q", e.out, deref(m.Title))
	}
	e.reset()
	fork := &SessionsForkOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions, Ref: "Auth work", At: 1}
	if err := sessionsForkRun(context.Background(), fork); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(e.out.String())
	conv, err := e.sessions().Files.Load(id)
	if err != nil || len(conv.Messages) != 1 || id == old {
		t.Errorf("fork --at 1: %s, %v", id, err)
	}
	fork.Ref = "zzzz"
	wantExit(t, sessionsForkRun(context.Background(), fork), ExitUsage, "sessions fork: ")
}

func TestSessionsRmAndPruneRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	old, cats := twoSessions(t, e)
	prune := &SessionsPruneOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions, Now: time.Now, OlderThan: "90d", Age: 90 * 24 * time.Hour, DryRun: true}
	if err := sessionsPruneRun(context.Background(), prune); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.out.String(), "would prune "+old+" ") || e.errOut.String() != "1 of 2 sessions are older than 90d\n" {
		t.Errorf("dry run: %q / %q", e.out, e.errOut)
	}
	e.reset()
	prune.DryRun = false
	if err := sessionsPruneRun(context.Background(), prune); err != nil || e.out.String() != "trashed "+old+" JWT refactor\n" {
		t.Errorf("prune: %q, %v", e.out, err)
	}
	if _, err := os.Stat(filepath.Join(e.home, "history", "trash")); err != nil {
		t.Errorf("nothing in the trash: %v", err)
	}

	e.reset()
	rm := &SessionsRmOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions, Refs: []string{cats, "nope"}, Purge: true}
	wantExit(t, sessionsRmRun(context.Background(), rm), ExitUsage, "sessions rm: ")
	if e.out.String() != "" {
		t.Errorf("a bad reference removed something: %q", e.out)
	}
	rm.Refs = []string{cats}
	if err := sessionsRmRun(context.Background(), rm); err != nil || e.out.String() != "deleted "+cats+" Cats\n" {
		t.Errorf("rm --purge: %q, %v", e.out, err)
	}
	list, _ := e.sessions().Files.List()
	if len(list) != 0 {
		t.Errorf("%d sessions left", len(list))
	}
}

func TestSessionsReindexRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	twoSessions(t, e)
	os.RemoveAll(filepath.Join(e.home, "index"))
	if err := sessionsReindexRun(context.Background(), &SessionsReindexOptions{IO: e.f.IOStreams, Sessions: e.f.Sessions}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.out.String(), "indexed 2 sessions in ") {
		t.Errorf("stdout %q", e.out)
	}
	opts := &SessionsReindexOptions{IO: e.f.IOStreams, Sessions: func() (*Sessions, error) { return nil, failure(os.ErrPermission) }}
	wantExit(t, sessionsReindexRun(context.Background(), opts), ExitFailure, "permission denied")
}

// A filter that matches nothing says so, rather than "No sessions yet".
func TestSessionsLsRunNoMatch(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	twoSessions(t, e)
	opts := mustParse(t, e, "sessions", newCmdSessionsLs, "--cwd", filepath.Join(e.work, "elsewhere"))
	if err := sessionsLsRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if want := "No sessions match in " + filepath.Join(e.work, "elsewhere") + ".\n"; e.errOut.String() != want || e.out.String() != "" {
		t.Errorf("stdout %q stderr %q, want stderr %q", e.out, e.errOut, want)
	}
}

// On a terminal, sessions show goes through the pager in colour; piped, it
// is plain markdown and no pager runs.
func TestSessionsShowPager(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	_, cats := twoSessions(t, e)
	ios := e.f.IOStreams
	ios.OutTTY, ios.OutColor, ios.Pager = true, true, "sed 's/^/paged: /'"
	opts := mustParse(t, e, "sessions", newCmdSessionsShow, cats[:8])
	if err := sessionsShowRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	out := e.out.String()
	if !strings.HasPrefix(out, "paged: ") || !strings.Contains(out, "\x1b[1m") || strings.Contains(out, "# Cats") {
		t.Errorf("on a terminal: %q", out)
	}
	if ios.Out != e.out {
		t.Error("stdout was not given back after the pager")
	}
	e.reset()
	ios.OutTTY, ios.OutColor = false, false
	if err := sessionsShowRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if out := e.out.String(); !strings.HasPrefix(out, "# Cats\n") || strings.Contains(out, "\x1b[") || strings.Contains(out, "paged:") {
		t.Errorf("piped: %q", out)
	}
}
