package sessions

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmark corpus: 10,000 sessions x 20 messages of ~30 words drawn
// from a Zipf-distributed pseudo-word vocabulary, so term frequencies look
// like prose (a few very common words, a long tail) and runs are comparable.
const (
	benchSessions = 10000
	benchMessages = 20
	benchWords    = 30
	benchVocab    = 8000
)

var (
	benchOnce   sync.Once
	benchDir    string
	benchErr    error
	benchVocabW []string
)

// benchIndex builds the corpus once per process (it takes seconds) and
// removes it when the test binary exits (see TestMain).
func benchIndex(b *testing.B) string {
	b.Helper()
	if testing.Short() {
		b.Skip("builds a 200,000-document index")
	}
	benchOnce.Do(func() {
		var root string
		if root, benchErr = os.MkdirTemp("", "sessions-bench-"); benchErr != nil {
			return
		}
		benchDir = filepath.Join(root, "sessions")
		start := time.Now()
		benchErr = Rebuild(benchDir, benchCorpus, benchSessions, nil)
		took := time.Since(start)
		size := dirSize(benchDir)
		fmt.Fprintf(os.Stderr, "bench corpus: %d sessions, %d docs built in %v, %.1f MB on disk\n",
			benchSessions, benchSessions*(benchMessages+1), took.Round(time.Millisecond), float64(size)/1e6)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

func benchCorpus(yield func(Session, []string) bool) error {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := vocabulary(r)
	zipf := rand.NewZipf(r, 1.1, 2, benchVocab-1)
	// Timestamps run up to now, as a real history does; List relies on it.
	t0 := time.Now().Add(-benchSessions * time.Hour)
	var sb strings.Builder
	sentence := func(n int) string {
		sb.Reset()
		for i := range n {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(vocab[zipf.Uint64()])
		}
		return sb.String()
	}
	for i := range benchSessions {
		texts := make([]string, benchMessages)
		for j := range texts {
			texts[j] = sentence(benchWords/2 + r.IntN(benchWords))
		}
		s := Session{
			ID: fmt.Sprintf("%08x-bench-%05d", r.Uint32(), i), Title: sentence(5),
			Model: "gpt-5", Provider: "openai", Cwd: fmt.Sprintf("/home/u/proj%d", i%20),
			CreatedAt: t0.Add(time.Duration(i) * time.Hour),
			UpdatedAt: t0.Add(time.Duration(i)*time.Hour + 30*time.Minute),
			Messages:  benchMessages,
		}
		if !yield(s, texts) {
			return nil
		}
	}
	return nil
}

// vocabulary makes pronounceable pseudo-words; the analyzer treats them like
// English (stemming may fold a few together, as it would real words).
func vocabulary(r *rand.Rand) []string {
	if benchVocabW != nil {
		return benchVocabW
	}
	const cons, vows = "bcdfghklmnprstvz", "aeiou"
	seen := map[string]bool{}
	for len(benchVocabW) < benchVocab {
		var w []byte
		for range 2 + r.IntN(3) {
			w = append(w, cons[r.IntN(len(cons))], vows[r.IntN(len(vows))])
		}
		if !seen[string(w)] {
			seen[string(w)] = true
			benchVocabW = append(benchVocabW, string(w))
		}
	}
	return benchVocabW
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func removeBenchIndex() {
	if benchDir != "" {
		_ = os.RemoveAll(filepath.Dir(benchDir))
	}
}

func BenchmarkList(b *testing.B) {
	dir := benchIndex(b)
	x, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	for _, c := range []struct {
		name string
		f    Filter
		want int
	}{{"limit50", Filter{Limit: 50}, 50}, {"all", Filter{}, benchSessions}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got, err := x.List(c.f)
				if err != nil || len(got) != c.want {
					b.Fatalf("List = %d, %v", len(got), err)
				}
			}
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	dir := benchIndex(b)
	x, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	// Two mid-frequency words: each in a few percent of the messages, so all
	// three tiers (phrase, all words, any word) have work to do.
	q := benchVocabW[40] + " " + benchVocabW[90]
	for b.Loop() {
		hits, err := x.Search(q, 20)
		if err != nil || len(hits) != 20 {
			b.Fatalf("Search(%q) = %d, %v", q, len(hits), err)
		}
	}
}

// BenchmarkOpenAndList is what one `openheim sessions ls` pays in-process.
func BenchmarkOpenAndList(b *testing.B) {
	dir := benchIndex(b)
	for b.Loop() {
		x, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if got, err := x.List(Filter{Limit: 50}); err != nil || len(got) != 50 {
			b.Fatalf("List = %d, %v", len(got), err)
		}
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
