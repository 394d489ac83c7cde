package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// The corpus matches index/memory's benchmarks: 100,000 notes of 15 to 45
// words from a Zipf vocabulary whose 50 most frequent words are English
// stop words, as in real text.
const benchNotes = 100_000

var (
	benchOnce    sync.Once
	benchOpts    Options
	benchQueries []string
	benchErr     error
)

func benchCorpus() (notes, queries []string) {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the of and to a in is it you that he was for on are with as i his
		they be at have this from or had by not but what some we out other were all there when
		up your how an each she which do their if about`)
	seen := map[string]bool{}
	for len(words) < 8000 {
		var w []byte
		for range 2 + r.IntN(3) {
			w = append(w, "bcdfghklmnprstvz"[r.IntN(16)], "aeiou"[r.IntN(5)])
		}
		if !seen[string(w)] {
			seen[string(w)] = true
			words = append(words, string(w))
		}
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	notes = make([]string, benchNotes)
	for i := range notes {
		f := make([]string, 15+r.IntN(31))
		for j := range f {
			f[j] = words[zipf.Uint64()]
		}
		notes[i] = strings.Join(f, " ")
	}
	for i := range 200 { // one to three content words, or a note's first four words
		var q []string
		for range i%4 + 1 {
			q = append(q, words[50+r.IntN(1950)])
		}
		if i%4 == 3 {
			q = strings.Fields(notes[r.IntN(len(notes))])[:4]
		}
		queries = append(queries, strings.Join(q, " "))
	}
	return notes, queries
}

// benchStore builds a 100,000-note memory once per process (Import, then
// the index rebuild Open does) in a temp dir removed at exit.
func benchStore(b *testing.B) Options {
	b.Helper()
	if testing.Short() {
		b.Skip("builds a 100,000-note memory")
	}
	benchOnce.Do(func() {
		var notes []string
		notes, benchQueries = benchCorpus()
		root, err := os.MkdirTemp("", "memory-bench-")
		if benchErr = err; err != nil {
			return
		}
		cleanupBench = func() { _ = os.RemoveAll(root) }
		benchOpts = Options{Dir: filepath.Join(root, "memory"), IndexDir: filepath.Join(root, "index", "memory")}
		var in bytes.Buffer
		for _, n := range notes {
			line, _ := json.Marshal(map[string]string{"content": n})
			in.Write(append(line, '\n'))
		}
		start := time.Now()
		m, err := Open(benchOpts)
		if benchErr = err; err != nil {
			return
		}
		defer m.Close()
		if _, benchErr = m.Import(&in); benchErr != nil {
			return
		}
		fi, _ := os.Stat(filepath.Join(benchOpts.Dir, logName))
		fmt.Fprintf(os.Stderr, "bench memory: %d notes imported and indexed in %v; log %.1f MB\n",
			len(notes), time.Since(start).Round(time.Millisecond), float64(fi.Size())/1e6)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchOpts
}

// BenchmarkOpenFirstSearch is what a process pays to use an existing
// memory: Open (read the log's record heads, check the index is in step),
// one Search, Close.
func BenchmarkOpenFirstSearch(b *testing.B) {
	opts := benchStore(b)
	i := 0
	for b.Loop() {
		m, err := Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, notice, err := m.Search(context.Background(), benchQueries[i%len(benchQueries)], 5); err != nil || notice != "" {
			b.Fatal(err, notice)
		}
		i++
		must(b, m.Close())
	}
}

// BenchmarkFreshProcess measures Open + first Search inside a new process.
func BenchmarkFreshProcess(b *testing.B) {
	opts := benchStore(b)
	var ds []float64
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s\n%s\n%s", openEnv, opts.Dir, opts.IndexDir, benchQueries[len(ds)%len(benchQueries)]))
		out, err := cmd.Output()
		var us float64
		if _, serr := fmt.Sscan(string(out), &us); err != nil || serr != nil {
			b.Fatalf("%v: %s", err, out)
		}
		ds = append(ds, us/1000)
	}
	slices.Sort(ds)
	b.ReportMetric(ds[len(ds)/2], "p50-ms")
	b.ReportMetric(ds[len(ds)*99/100], "p99-ms")
}

// openEnv makes the test binary a process that opens the memory named by
// "DIR\nINDEXDIR\nQUERY", searches once, and prints how long it took (µs).
const openEnv = "OPENHEIM_MEMORY_BENCH_OPEN"

func openAndSearch(spec string) int {
	p := strings.SplitN(spec, "\n", 3)
	start := time.Now()
	m, err := Open(Options{Dir: p[0], IndexDir: p[1]})
	if err == nil {
		_, _, err = m.Search(context.Background(), p[2], 5)
		_ = m.Close()
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println(time.Since(start).Microseconds())
	return 0
}

// BenchmarkSearch is Memory.Search on an open Memory: lock, look for
// others' appends, open the index read-only, query, close, read the notes.
func BenchmarkSearch(b *testing.B) {
	m, err := Open(benchStore(b))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var ds []time.Duration
	for b.Loop() {
		for _, q := range benchQueries {
			start := time.Now()
			if _, _, err := m.Search(context.Background(), q, 5); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkAdd is one remember into the 100,000-note memory: append and
// fsync, then open the index for writing, index the note, close.
func BenchmarkAdd(b *testing.B) {
	m, err := Open(benchStore(b))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for b.Loop() {
		if _, err := m.Add("the user prefers benchmarks that measure what users wait for"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImport is `memory import` of the 100,000-note corpus into an
// empty memory: parse, append to the log (one fsync), index (bleve
// batches). Its floor is index/memory's BenchmarkBuild, the bare bleve
// build of the same number of notes.
func BenchmarkImport(b *testing.B) {
	if testing.Short() {
		b.Skip("imports 100,000 notes")
	}
	notes, _ := benchCorpus()
	var in bytes.Buffer
	for _, n := range notes {
		line, _ := json.Marshal(map[string]string{"content": n})
		in.Write(append(line, '\n'))
	}
	for b.Loop() {
		root := b.TempDir()
		m, err := Open(Options{Dir: filepath.Join(root, "memory"), IndexDir: filepath.Join(root, "index", "memory")})
		if err != nil {
			b.Fatal(err)
		}
		if n, err := m.Import(bytes.NewReader(in.Bytes())); err != nil || n != len(notes) {
			b.Fatal(n, err)
		}
		must(b, m.Close())
	}
	b.ReportMetric(float64(len(notes)), "notes")
}
