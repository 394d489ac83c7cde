package memory

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmark corpus: 100,000 notes of 15 to 45 words (30 on average)
// drawn from a Zipf-distributed pseudo-word vocabulary, so term
// frequencies look like prose, and runs are comparable (fixed seed).
const (
	benchNotes = 100_000
	benchVocab = 8000
)

var (
	benchOnce  sync.Once
	benchDocs  []Doc
	benchWords []string
	benchDir   string
	benchErr   error
)

func benchCorpus() ([]Doc, []string) {
	if benchDocs != nil {
		return benchDocs, benchWords
	}
	r := rand.New(rand.NewPCG(1, 2))
	// The head of an English Zipf curve is stop words, which the analyzer
	// drops from notes and queries alike; pseudo-words there would act as
	// indexed stop words and match a third of all notes.
	benchWords = strings.Fields(benchStopWords)
	const cons, vows = "bcdfghklmnprstvz", "aeiou"
	seen := map[string]bool{}
	for len(benchWords) < benchVocab {
		var w []byte
		for range 2 + r.IntN(3) {
			w = append(w, cons[r.IntN(len(cons))], vows[r.IntN(len(vows))])
		}
		if !seen[string(w)] {
			seen[string(w)] = true
			benchWords = append(benchWords, string(w))
		}
	}
	zipf := rand.NewZipf(r, 1.1, 2, benchVocab-1)
	var sb strings.Builder
	benchDocs = make([]Doc, benchNotes)
	for i := range benchDocs {
		sb.Reset()
		for j := range 15 + r.IntN(31) {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(benchWords[zipf.Uint64()])
		}
		benchDocs[i] = Doc{ID: int64(i + 1), Text: sb.String()}
	}
	return benchDocs, benchWords
}

// benchStopWords are 50 frequent English stop words, most frequent first.
const benchStopWords = `the of and to a in is it you that he was for on are with as i his they
be at have this from or had by not but what some we out other were all there when
up your how an each she which do their if about`

// benchIndex builds the corpus's index once per process and removes it
// when the test binary exits (TestMain).
func benchIndex(b *testing.B) string {
	b.Helper()
	if testing.Short() {
		b.Skip("builds a 100,000-note index")
	}
	benchOnce.Do(func() {
		docs, _ := benchCorpus()
		var root string
		if root, benchErr = os.MkdirTemp("", "memory-bench-"); benchErr != nil {
			return
		}
		benchDir = filepath.Join(root, "memory")
		start := time.Now()
		benchErr = Rebuild(benchDir, docsOf(docs), len(docs), int64(len(docs)), nil)
		fmt.Fprintf(os.Stderr, "bench index: %d notes built in %v, %.1f MB on disk\n",
			len(docs), time.Since(start).Round(time.Millisecond), float64(dirSize(benchDir))/1e6)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

// benchQueries mixes what a model asks: one, two or three words among the
// 2,000 most frequent (stop words included, as people type them, but not
// only stop words), and four-word snippets of real notes (phrases).
func benchQueries() []string {
	docs, words := benchCorpus()
	r := rand.New(rand.NewPCG(3, 4))
	var qs []string
	w := func() string { return words[r.IntN(2000)] }
	for len(qs) < 200 {
		var q string
		switch len(qs) % 4 {
		case 0:
			q = w()
		case 1:
			q = w() + " " + w()
		case 2:
			q = w() + " " + w() + " " + w()
		default:
			q = strings.Join(strings.Fields(docs[r.IntN(len(docs))].Text)[:4], " ")
		}
		if hasTerms(q) {
			qs = append(qs, q)
		}
	}
	return qs
}

func hasTerms(q string) bool {
	terms, _ := Terms(q)
	return len(terms) > 0
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

// latencies runs each query once per iteration, timing each, and reports
// the 50th and 99th percentiles.
func latencies(b *testing.B, qs []string, run func(q string)) {
	var ds []time.Duration
	for b.Loop() {
		for _, q := range qs {
			start := time.Now()
			run(q)
			ds = append(ds, time.Since(start))
		}
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

func BenchmarkBuild(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 100,000-note index")
	}
	docs, _ := benchCorpus()
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "memory")
		if err := Rebuild(dir, docsOf(docs), len(docs), 1, nil); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(dirSize(dir))/1e6, "MB")
	}
}

func BenchmarkSearch(b *testing.B) {
	x, err := Open(benchIndex(b), Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	latencies(b, benchQueries(), func(q string) {
		if hits, err := x.Search(q, 5, nil); err != nil || len(hits) == 0 {
			b.Fatalf("Search(%q) = %v, %v", q, hits, err)
		}
	})
}

// BenchmarkOpenSearch is what one memory search pays when the index is not
// open yet: open read-only, one query, close.
func BenchmarkOpenSearch(b *testing.B) {
	dir := benchIndex(b)
	qs := benchQueries()
	i := 0
	for b.Loop() {
		x, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := x.Search(qs[i%len(qs)], 5, nil); err != nil {
			b.Fatal(err)
		}
		i++
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// openEnv makes the test binary a fresh process that opens the index at
// the named directory, runs one query ("DIR\nQUERY"), and prints how long
// that took.
const openEnv = "OPENHEIM_MEMINDEX_BENCH_OPEN"

func TestMain(m *testing.M) {
	if spec := os.Getenv(openEnv); spec != "" {
		dir, q, _ := strings.Cut(spec, "\n")
		start := time.Now()
		x, err := Open(dir, Options{ReadOnly: true})
		if err == nil {
			_, err = x.Search(q, 5, nil)
			_ = x.Close()
		}
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(time.Since(start).Microseconds())
		os.Exit(0)
	}
	code := m.Run()
	if benchDir != "" {
		_ = os.RemoveAll(filepath.Dir(benchDir))
	}
	os.Exit(code)
}

// BenchmarkFreshProcess reports open + first query as measured inside a
// new process (page cache warm): what `openheim prompt` pays once.
func BenchmarkFreshProcess(b *testing.B) {
	dir := benchIndex(b)
	qs := benchQueries()
	var ds []float64
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), openEnv+"="+dir+"\n"+qs[len(ds)%len(qs)])
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		var us float64
		if _, err := fmt.Sscan(string(out), &us); err != nil {
			b.Fatalf("child said %q", out)
		}
		ds = append(ds, us/1000)
	}
	slices.Sort(ds)
	b.ReportMetric(ds[len(ds)/2], "p50-ms")
	b.ReportMetric(ds[len(ds)*99/100], "p99-ms")
}

// BenchmarkStringsScan is the floor to compare with: the same notes held in
// memory as strings, a note matching when it contains every query word.
func BenchmarkStringsScan(b *testing.B) {
	if testing.Short() {
		b.Skip("100,000 notes")
	}
	docs, _ := benchCorpus()
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = strings.ToLower(d.Text)
	}
	latencies(b, benchQueries()[:40], func(q string) {
		words := strings.Fields(strings.ToLower(q))
		n := 0
		for _, t := range texts {
			all := true
			for _, w := range words {
				if !strings.Contains(t, w) {
					all = false
					break
				}
			}
			if all {
				n++
			}
		}
		if n < 0 {
			b.Fatal(n)
		}
	})
}

// BenchmarkScanFallback is Scan, what a search costs while the index is
// busy: it analyzes every note, so it is only fit for a fallback.
func BenchmarkScanFallback(b *testing.B) {
	if testing.Short() {
		b.Skip("100,000 notes")
	}
	docs, _ := benchCorpus()
	latencies(b, benchQueries()[:4], func(q string) { Scan(q, docs, 5, nil) })
}
