package commands

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/memory"
)

func TestMemoryFlags(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	search, err := parseCmd(t, e, "memory", newCmdMemorySearch, "--top-k", "3", "--json", "staging", "db")
	if err != nil || search.Query != "staging db" || search.TopK != 3 || !search.Output.JSON {
		t.Errorf("search: %+v, %v", search, err)
	}
	edit, _ := parseCmd(t, e, "memory", newCmdMemoryEdit, "#4", "-")
	if edit.ID != "#4" || edit.Text != "-" {
		t.Errorf("edit: %+v", edit)
	}
	imp, _ := parseCmd(t, e, "memory", newCmdMemoryImport, "notes.jsonl", "--select", "imported")
	if imp.File != "notes.jsonl" || imp.Output.Select != "imported" {
		t.Errorf("import: %+v", imp)
	}
	for _, tc := range []struct {
		err error
		msg string
	}{
		{second(parseCmd(t, e, "memory", newCmdMemoryAdd)), "memory add: expected TEXT"},
		{second(parseCmd(t, e, "memory", newCmdMemoryEdit, "4")), "memory edit: expected ID TEXT"},
		{second(parseCmd(t, e, "memory", newCmdMemoryLs, "x")), "memory ls: expected no arguments"},
		{second(parseCmd(t, e, "memory", newCmdMemoryExport, "x")), "memory export: expected no arguments"},
		{second(parseCmd(t, e, "memory", newCmdMemoryReindex, "x")), "memory reindex: expected no arguments"},
		{second(parseCmd(t, e, "memory", newCmdMemoryShow)), "memory show: expected ID"},
		{second(parseCmd(t, e, "memory", newCmdMemoryRm)), "memory rm: expected ID"},
		{second(parseCmd(t, e, "memory", newCmdMemorySearch)), "memory search: expected QUERY"},
		{second(parseCmd(t, e, "memory", newCmdMemoryImport)), "memory import: expected FILE"},
	} {
		wantExit(t, tc.err, ExitUsage, tc.msg)
	}
}

func second[A, B any](_ A, b B) B { return b }

// TestMemoryRun walks a note through every memory verb's run function.
func TestMemoryRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	ctx := context.Background()
	ios, open := e.f.IOStreams, e.f.Memory

	if err := memoryAddRun(ctx, &MemoryAddOptions{IO: ios, Memory: open, Text: "The staging database is db-stage-2"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.out.String(), "#1  ") || !strings.HasSuffix(e.out.String(), "  The staging database is db-stage-2\n") {
		t.Errorf("add: %q", e.out)
	}
	e.reset()
	e.stdin("Deploys happen on Tuesdays")
	if err := memoryAddRun(ctx, &MemoryAddOptions{IO: ios, Memory: open, Text: "-", Output: jsonOutput{Select: "id"}}); err != nil {
		t.Fatal(err)
	}
	if e.out.String() != "2\n" {
		t.Errorf("add from stdin --select id: %q", e.out)
	}

	e.reset()
	if err := memorySearchRun(ctx, &MemorySearchOptions{IO: ios, Memory: open, Query: "staging database", Output: jsonOutput{JSON: true}}); err != nil {
		t.Fatal(err)
	}
	var hit memory.Hit
	if err := json.Unmarshal([]byte(strings.Split(e.out.String(), "\n")[0]), &hit); err != nil || hit.ID != 1 || hit.Score <= 0 {
		t.Errorf("search --json: %q (%v)", e.out, err)
	}

	e.reset()
	if err := memoryEditRun(ctx, &MemoryEditOptions{IO: ios, Memory: open, ID: "#2", Text: "Deploys happen on Wednesdays"}); err != nil {
		t.Fatal(err)
	}
	e.reset()
	if err := memoryShowRun(ctx, &MemoryShowOptions{IO: ios, Memory: open, ID: "2"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.out.String(), "#2  created ") || !strings.HasSuffix(e.out.String(), "\n\nDeploys happen on Wednesdays\n") {
		t.Errorf("show: %q", e.out)
	}

	e.reset()
	if err := memoryLsRun(ctx, &MemoryLsOptions{IO: ios, Memory: open}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(e.out.String(), "\n"); n != 2 || !strings.HasPrefix(e.out.String(), "#2") {
		t.Errorf("ls (newest first): %q", e.out)
	}

	e.reset()
	if err := memoryExportRun(ctx, &MemoryExportOptions{IO: ios, Memory: open}); err != nil {
		t.Fatal(err)
	}
	exported := e.out.String()
	if strings.Count(exported, "\n") != 2 || !strings.Contains(exported, `"content":"The staging database is db-stage-2"`) {
		t.Errorf("export: %q", exported)
	}

	e.reset()
	if err := memoryRmRun(ctx, &MemoryRmOptions{IO: ios, Memory: open, ID: "1", Output: jsonOutput{JSON: true}}); err != nil {
		t.Fatal(err)
	}
	if e.out.String() != `{"deleted":true,"id":1}`+"\n" {
		t.Errorf("rm --json: %q", e.out)
	}
	e.reset()
	if err := memoryRmRun(ctx, &MemoryRmOptions{IO: ios, Memory: open, ID: "2"}); err != nil || e.errOut.String() != "forgot #2\n" {
		t.Errorf("rm: %q, %v", e.errOut, err)
	}

	file := filepath.Join(e.work, "notes.jsonl")
	os.WriteFile(file, []byte(exported), 0o644)
	e.reset()
	if err := memoryImportRun(ctx, &MemoryImportOptions{IO: ios, Memory: open, File: file}); err != nil || e.errOut.String() != "imported 2 notes\n" {
		t.Errorf("import: %q, %v", e.errOut, err)
	}
	e.reset()
	if err := memoryReindexRun(ctx, &MemoryReindexOptions{IO: ios, Memory: open, Output: jsonOutput{JSON: true}}); err != nil || e.out.String() != `{"indexed":2}`+"\n" {
		t.Errorf("reindex --json: %q, %v", e.out, err)
	}
}

func TestMemoryRunErrors(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	ctx := context.Background()
	ios, open := e.f.IOStreams, e.f.Memory
	wantExit(t, memoryShowRun(ctx, &MemoryShowOptions{IO: ios, Memory: open, ID: "abc"}), ExitUsage, `memory: "abc" is not a note id (like 12 or #12)`)
	err := memoryShowRun(ctx, &MemoryShowOptions{IO: ios, Memory: open, ID: "9"})
	wantExit(t, err, ExitUsage, "memory: ")
	if err.(*ExitError).Hint != "see 'openheim memory ls'" {
		t.Errorf("hint %q", err.(*ExitError).Hint)
	}
	wantExit(t, memoryEditRun(ctx, &MemoryEditOptions{IO: ios, Memory: open, ID: "9", Text: "x"}), ExitUsage, "memory: ")
	wantExit(t, memoryRmRun(ctx, &MemoryRmOptions{IO: ios, Memory: open, ID: "0"}), ExitUsage, "is not a note id")
	wantExit(t, memoryAddRun(ctx, &MemoryAddOptions{IO: ios, Memory: open, Text: "   "}), ExitUsage, "memory add: ")
	wantExit(t, memoryImportRun(ctx, &MemoryImportOptions{IO: ios, Memory: open, File: filepath.Join(e.work, "none")}), ExitUsage, "memory import: ")
	e.stdin("not json\n")
	wantExit(t, memoryImportRun(ctx, &MemoryImportOptions{IO: ios, Memory: open, File: "-"}), ExitFailure, "memory import: ")

	// The memory is opened through opts.Memory; its failure is the command's.
	broken := func() (*memory.Memory, error) { return nil, failure(os.ErrPermission) }
	wantExit(t, memoryLsRun(ctx, &MemoryLsOptions{IO: ios, Memory: broken}), ExitFailure, "permission denied")
	wantExit(t, memoryExportRun(ctx, &MemoryExportOptions{IO: ios, Memory: broken}), ExitFailure, "permission denied")
	wantExit(t, memorySearchRun(ctx, &MemorySearchOptions{IO: ios, Memory: broken, Query: "x"}), ExitFailure, "permission denied")
	wantExit(t, memoryReindexRun(ctx, &MemoryReindexOptions{IO: ios, Memory: broken}), ExitFailure, "permission denied")
}

// Embeddings configured without a key: search says once that semantic
// search is off and never calls the embedding endpoint.
func TestMemorySearchWithoutEmbeddingKey(t *testing.T) {
	e := newTestEnv(t, `default_provider = "fake"
work_dir = "$WORK"
[providers.fake]
api_base = "$LLM"
default_model = "fake-model"
[providers.emb]
kind = "openai"
api_base = "$LLM"
default_model = "m"
env_var = "OPENHEIM_TEST_UNSET_EMBEDDING_KEY"
[memory]
embedding_provider = "emb"
embedding_model = "text-embedding-3-small"
`)
	ctx := context.Background()
	ios, open := e.f.IOStreams, e.f.Memory
	if err := memoryAddRun(ctx, &MemoryAddOptions{IO: ios, Memory: open, Text: "the staging database is db-stage-2"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := memorySearchRun(ctx, &MemorySearchOptions{IO: ios, Memory: open, Query: "staging database"}); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(e.out.String(), "db-stage-2") {
		t.Errorf("no keyword result: %q", e.out)
	}
	if n := strings.Count(e.errOut.String(), "semantic search is off"); n != 1 || !strings.Contains(e.errOut.String(), "$OPENHEIM_TEST_UNSET_EMBEDDING_KEY") {
		t.Errorf("said %d times: %q", n, e.errOut)
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Errorf("the embedding endpoint was called %d times", n)
	}
}
