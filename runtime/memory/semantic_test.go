package memory

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/embedding"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/retry"
)

// conceptEmbedder embeds texts in a tiny concept space: every known word
// adds to its concept's axis, so "car" and "automobile" land together
// without sharing a keyword, as a real embedding model would place them.
type conceptEmbedder struct {
	mu    sync.Mutex
	calls [][]string
	block bool // wait for the context to end, like a hung server
}

var concepts = map[string]int{
	"car": 0, "automobile": 0, "vehicle": 0, "drives": 0,
	"dog": 1, "puppy": 1, "hound": 1,
	"pizza": 2, "lunch": 2, "food": 2,
}

func (e *conceptEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, slices.Clone(texts))
	e.mu.Unlock()
	if e.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := []float32{0, 0, 0, 0.05}
		for _, w := range strings.Fields(strings.ToLower(t)) {
			if c, ok := concepts[strings.Trim(w, ".,?!")]; ok {
				v[c]++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestSemanticFindsRelatedNotes(t *testing.T) {
	e := &conceptEmbedder{}
	m, _ := open(t, Options{Embedder: e, EmbeddingModel: "concepts"})
	add(t, m,
		"Alice drives an automobile to the office", // 1
		"The puppy sleeps all day",                 // 2
		"Friday lunch is pizza",                    // 3
		"vehicle inspection is due in March",       // 4
	)
	// No note holds "car": only the embedding relates it to 1 and 4.
	if ids, _ := search(t, m, "car", 5); len(ids) == 0 || !slices.Contains(ids[:2], 1) || !slices.Contains(ids[:2], 4) {
		t.Errorf("search car = %v, want 1 and 4 first", ids)
	}
	// Fusion: 4 is first in both rankings, 1 only in the semantic one.
	if ids, _ := search(t, m, "vehicle", 2); !slices.Equal(ids, []int64{4, 1}) {
		t.Errorf("search vehicle = %v, want [4 1]", ids)
	}
	if ids, _ := search(t, m, "hound", 1); !slices.Equal(ids, []int64{2}) {
		t.Errorf("search hound = %v, want [2]", ids)
	}
	// The first search embedded every note with the query; later ones
	// only the query.
	if n := len(e.calls); n != 3 || len(e.calls[0]) != 5 || len(e.calls[1]) != 1 {
		t.Errorf("embedding calls: %q", e.calls)
	}
}

func TestEmbeddingTimeoutFallsBack(t *testing.T) {
	m, _ := open(t, Options{Embedder: &conceptEmbedder{block: true}, EmbeddingModel: "concepts", EmbedTimeout: 100 * time.Millisecond})
	add(t, m, "the puppy sleeps")
	start := time.Now()
	ids, notice := search(t, m, "puppy", 5)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("search took %v", took)
	}
	if !slices.Equal(ids, []int64{1}) || !strings.HasPrefix(notice, "semantic search unavailable (embedding failed: ") ||
		!strings.HasSuffix(notice, "; keyword results only") || !strings.Contains(notice, "deadline exceeded") {
		t.Errorf("search = %v, %q", ids, notice)
	}
}

func embedServer(t *testing.T, model string) (*llmtest.EmbedServer, llm.Embedder) {
	t.Helper()
	srv := llmtest.NewEmbedServer()
	t.Cleanup(srv.Close)
	return srv, newEmbedder(t, srv, model)
}

func newEmbedder(t *testing.T, srv *llmtest.EmbedServer, model string) llm.Embedder {
	t.Helper()
	e, err := embedding.New(embedding.Config{Kind: "openai", BaseURL: srv.URL(), Model: model, Retry: retry.Policy{MaxRetries: -1}})
	must(t, err)
	return e
}

// inputs returns the texts of each embeddings request since the call
// numbered from, and the model each named.
func inputs(srv *llmtest.EmbedServer, from int) (texts [][]string, models []string) {
	for _, r := range srv.Requests()[from:] {
		var in []string
		if list, ok := r.Body["input"].([]any); ok {
			for _, x := range list {
				s, _ := x.(string)
				in = append(in, s)
			}
		}
		texts = append(texts, in)
		m, _ := r.Body["model"].(string)
		models = append(models, m)
	}
	return texts, models
}

func TestEmbeddingFailureFallsBack(t *testing.T) {
	srv, e := embedServer(t, "m1")
	m, _ := open(t, Options{Embedder: e, EmbeddingModel: "m1"})
	add(t, m, "osprey nest on the pole", "herons by the river")

	srv.FailNext(http.StatusBadRequest, "") // query + notes
	srv.FailNext(http.StatusBadRequest, "") // the query alone
	ids, notice := search(t, m, "osprey", 5)
	if !slices.Equal(ids, []int64{1}) || !strings.HasPrefix(notice, "semantic search unavailable (embedding failed: ") ||
		!strings.Contains(notice, "400") || !strings.HasSuffix(notice, "; keyword results only") {
		t.Errorf("search = %v, %q", ids, notice)
	}

	// Notes the API refuses do not cost the search its semantics: the
	// query alone is retried, and the notes are tried again next time.
	srv.FailNext(http.StatusBadRequest, "")
	before := len(srv.Requests())
	if _, notice := search(t, m, "osprey", 5); notice != "" {
		t.Errorf("notice after a failed backfill: %q", notice)
	}
	texts, _ := inputs(srv, before)
	if len(texts) != 2 || len(texts[0]) != 3 || len(texts[1]) != 1 {
		t.Errorf("requests: %q", texts)
	}
	before = len(srv.Requests())
	search(t, m, "river", 5)
	if texts, _ := inputs(srv, before); len(texts) != 1 || len(texts[0]) != 3 {
		t.Errorf("the backfill was not retried: %q", texts)
	}
}

func TestBackfillIsBounded(t *testing.T) {
	srv, e := embedServer(t, "m1")
	m, _ := open(t, Options{Embedder: e, EmbeddingModel: "m1"})
	for i := range 40 {
		add(t, m, strings.Repeat("x", i+1)+" note")
	}
	var sizes []int
	for range 3 {
		before := len(srv.Requests())
		search(t, m, "note", 5)
		texts, _ := inputs(srv, before)
		sizes = append(sizes, len(texts[0]))
		if len(texts[0]) > 1 && texts[0][1] != strings.Repeat("x", 40-32*len(sizes[1:]))+" note" {
			t.Errorf("backfill did not start with the newest note: %q", texts[0][1])
		}
	}
	if !slices.Equal(sizes, []int{33, 9, 1}) {
		t.Errorf("texts per search: %v, want [33 9 1]", sizes)
	}
	// An edited note needs a new vector; the others keep theirs.
	_, err := m.Edit(7, "edited note")
	must(t, err)
	before := len(srv.Requests())
	search(t, m, "note", 5)
	if texts, _ := inputs(srv, before); len(texts) != 1 || !slices.Equal(texts[0], []string{"note", "edited note"}) {
		t.Errorf("after an edit: %q", texts)
	}
}

func TestModelChangeReembeds(t *testing.T) {
	srv, e1 := embedServer(t, "m1")
	opts := dirs(t)
	opts.Embedder, opts.EmbeddingModel = e1, "m1"
	m, _ := open(t, opts)
	add(t, m, "first note", "second note", "third note")
	search(t, m, "note", 5) // embeds all three with m1
	must(t, m.Close())

	opts.Embedder, opts.EmbeddingModel = newEmbedder(t, srv, "m2"), "m2"
	var progress [][2]int
	opts.Progress = func(done, total int) { progress = append(progress, [2]int{done, total}) }
	m2, _ := open(t, opts)
	before := len(srv.Requests())
	n, err := m2.Reindex(context.Background())
	must(t, err)
	texts, models := inputs(srv, before)
	if n != 3 || len(texts) != 1 || len(texts[0]) != 3 || models[0] != "m2" {
		t.Errorf("Reindex = %d; requests %q with models %q", n, texts, models)
	}
	// Index progress (3 notes), then embedding progress (one batch).
	if !slices.Equal(progress, [][2]int{{1, 3}, {2, 3}, {3, 3}, {3, 3}}) {
		t.Errorf("progress: %v", progress)
	}
	// Reindex dropped the m1 vectors.
	data, err := os.ReadFile(filepath.Join(opts.Dir, vecName))
	must(t, err)
	if lines := strings.Count(string(data), "\n"); lines != 3 || strings.Contains(string(data), `"model":"m1"`) {
		t.Errorf("vectors file after Reindex:\n%s", data)
	}
	before = len(srv.Requests())
	if ids, notice := search(t, m2, "note", 5); len(ids) != 3 || notice != "" {
		t.Errorf("search = %v %q", ids, notice)
	}
	if texts, _ := inputs(srv, before); len(texts) != 1 || len(texts[0]) != 1 {
		t.Errorf("search after Reindex re-embedded notes: %q", texts)
	}

	// Without Reindex, a search re-embeds lazily under the new model.
	must(t, m2.Close())
	opts.Embedder, opts.EmbeddingModel = newEmbedder(t, srv, "m3"), "m3"
	m3, _ := open(t, opts)
	before = len(srv.Requests())
	search(t, m3, "note", 5)
	if texts, models := inputs(srv, before); len(texts) != 1 || len(texts[0]) != 4 || models[0] != "m3" {
		t.Errorf("lazy re-embedding: %q %q", texts, models)
	}
}

func TestReindexReportsEmbeddingErrors(t *testing.T) {
	srv, e := embedServer(t, "m1")
	m, _ := open(t, Options{Embedder: e, EmbeddingModel: "m1"})
	add(t, m, "one note")
	srv.FailNext(http.StatusUnauthorized, "")
	n, err := m.Reindex(context.Background())
	var se *llm.StatusError
	if n != 1 || !errors.As(err, &se) || se.Status != http.StatusUnauthorized {
		t.Errorf("Reindex = %d, %v", n, err)
	}
}

// Over the real wire (llm's OpenAI client against the fake server, whose
// vectors hash the text): a note made only of stop words has no keyword
// to find, yet the query with the same text finds it by its vector.
func TestSemanticOverTheWire(t *testing.T) {
	_, e := embedServer(t, "m1")
	m, _ := open(t, Options{Embedder: e, EmbeddingModel: "m1"})
	add(t, m, "To be, or not to be", "Hamlet is a play by Shakespeare")
	ids, notice := search(t, m, "To be, or not to be", 1)
	if !slices.Equal(ids, []int64{1}) || notice != "" {
		t.Errorf("search = %v (%q), want [1]", ids, notice)
	}
	keywordOnly, _ := open(t, Options{Dir: m.opts.Dir, IndexDir: m.opts.IndexDir})
	if ids, _ := search(t, keywordOnly, "To be, or not to be", 1); len(ids) != 0 {
		t.Errorf("keyword search found %v", ids)
	}
}
