package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/tools"
)

// TestSpecsMatchSeed checks names, descriptions and schemas against the
// memory tools of the API specification (seed 000), copied to testdata.
func TestSpecsMatchSeed(t *testing.T) {
	data, err := os.ReadFile("testdata/seed_memory_specs.json")
	must(t, err)
	var seed []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	must(t, json.Unmarshal(data, &seed))
	m, _ := open(t, Options{})
	ts := Tools(m)
	if len(seed) != 4 || len(ts) != 4 {
		t.Fatalf("seed has %d tools, Tools %d; want 4", len(seed), len(ts))
	}
	kinds := map[string]string{"remember": tools.KindEdit, "search_memory": tools.KindSearch, "edit_memory": tools.KindEdit, "forget": tools.KindDelete}
	for i, s := range seed {
		got := ts[i].Spec()
		if got.Name != s.Function.Name || got.Description != s.Function.Description {
			t.Errorf("tool %d: %q differs from the seed's %q in name or description", i, got.Name, s.Function.Name)
		}
		var want bytes.Buffer
		must(t, json.Compact(&want, s.Function.Parameters))
		if string(got.Parameters) != want.String() {
			t.Errorf("%s parameters:\n got %s\nwant %s", got.Name, got.Parameters, want.String())
		}
		if k := ts[i].Kind(); k != kinds[got.Name] {
			t.Errorf("%s kind = %s", got.Name, k)
		}
	}
}

func TestToolsWithoutMemory(t *testing.T) {
	for _, tool := range Tools(nil) {
		if tool.Spec().Name == "" || tool.Kind() == "" {
			t.Errorf("spec %+v kind %q", tool.Spec(), tool.Kind())
		}
		res := tool.Run(context.Background(), json.RawMessage(`{"content":"x","query":"x","id":1}`))
		if !res.IsError || res.Content != "long-term memory is not open" {
			t.Errorf("%s on nil memory: %+v", tool.Spec().Name, res)
		}
	}
}

func TestTools(t *testing.T) {
	m, _ := open(t, Options{TopK: 2})
	byName := map[string]tools.Tool{}
	for _, tool := range Tools(m) {
		byName[tool.Spec().Name] = tool
	}
	day := date(t0)
	long := strings.Repeat("a", 4312)
	for _, c := range []struct {
		tool, args string
		want       string // the result, or with a "~" prefix a substring of it
		isError    bool
	}{
		{"remember", `{"content":"The user prefers dark mode"}`, "Remembered #1 (" + day + ").", false},
		{"remember", `{"content":"Deploys go through staging"}`, "Remembered #2 (" + day + ").", false},
		{"remember", `{"content":"` + long + `"}`, "note is 4312 characters; the limit is 4000", true},
		{"remember", `{"content":"   "}`, "note is empty", true},
		{"remember", `{}`, `missing required argument "content"`, true},
		{"remember", `{"content":12}`, `argument "content" must be a string, got 12`, true},
		{"remember", `not json`, "~invalid arguments", true},
		{"search_memory", `{"query":"preferences"}`, "#1 (" + day + "): The user prefers dark mode", false},
		{"search_memory", `{"query":"zanzibar"}`, `No notes match "zanzibar".`, false},
		{"search_memory", `{"query":""}`, `argument "query" is empty`, true},
		{"search_memory", `{"query":"the user","top_k":"x"}`, `argument "top_k" must be an integer, got "x"`, true},
		{"edit_memory", `{"id":1,"content":"The user prefers light mode"}`, "Updated #1 (" + day + ").", false},
		{"edit_memory", `{"id":"#2","content":"Deploys go through canary"}`, "Updated #2 (" + day + ").", false},
		{"edit_memory", `{"id":99,"content":"x"}`, "no note #99", true},
		{"edit_memory", `{"id":1,"content":"` + long + `"}`, "note is 4312 characters; the limit is 4000", true},
		{"edit_memory", `{"content":"x"}`, `missing required argument "id"`, true},
		{"search_memory", `{"query":"light mode"}`, "#1 (" + day + "): The user prefers light mode", false},
		{"forget", `{"id":2}`, "Forgot #2.", false},
		{"forget", `{"id":2}`, "no note #2", true},
		{"forget", `{"id":2.5}`, `argument "id" must be an integer, got 2.5`, true},
		{"forget", `{"id":-3}`, "no note #-3", true},
		{"search_memory", `{"query":"canary"}`, `No notes match "canary".`, false},
	} {
		res := byName[c.tool].Run(context.Background(), json.RawMessage(c.args))
		ok := res.Content == c.want
		if sub, found := strings.CutPrefix(c.want, "~"); found {
			ok = strings.Contains(res.Content, sub)
		}
		if !ok || res.IsError != c.isError {
			t.Errorf("%s %.60s = %q (error %v), want %q (error %v)", c.tool, c.args, res.Content, res.IsError, c.want, c.isError)
		}
	}
}

func TestSearchToolTopK(t *testing.T) {
	m, _ := open(t, Options{TopK: 2})
	for i := range 25 {
		add(t, m, fmt.Sprintf("walrus fact %d", i))
	}
	search := Tools(m)[1]
	for args, want := range map[string]int{
		`{"query":"walrus"}`:              2, // memory.top_k
		`{"query":"walrus","top_k":3}`:    3,
		`{"query":"walrus","top_k":0}`:    1, // clamped, not the default
		`{"query":"walrus","top_k":50}`:   20,
		`{"query":"walrus","top_k":4.0}`:  4,
		`{"query":"walrus","top_k":null}`: 2,
	} {
		res := search.Run(context.Background(), json.RawMessage(args))
		if n := strings.Count(res.Content, "walrus fact"); n != want || res.IsError {
			t.Errorf("%s: %d notes (error %v), want %d", args, n, res.IsError, want)
		}
	}
	// The newest of equally good notes come first.
	res := search.Run(context.Background(), json.RawMessage(`{"query":"walrus","top_k":2}`))
	if !strings.HasPrefix(res.Content, "#25 (") || !strings.Contains(res.Content, "\n#24 (") {
		t.Errorf("order: %q", res.Content)
	}
}

func TestSearchToolShowsNotice(t *testing.T) {
	m, _ := open(t, Options{Embedder: &conceptEmbedder{block: true}, EmbeddingModel: "c", EmbedTimeout: 50 * time.Millisecond})
	add(t, m, "the puppy sleeps")
	res := Tools(m)[1].Run(context.Background(), json.RawMessage(`{"query":"puppy"}`))
	if !strings.HasPrefix(res.Content, "Note: semantic search unavailable (embedding failed: ") ||
		!strings.HasSuffix(res.Content, "keyword results only.\n#1 ("+date(t0)+"): the puppy sleeps") {
		t.Errorf("result: %q", res.Content)
	}
}
