package memory

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	memindex "github.com/openheim/openheim/index/memory"
)

func TestTwoInstancesSeeEachOther(t *testing.T) {
	a, _ := open(t, Options{})
	b, _ := open(t, a.opts)

	n := add(t, a, "the staging server is called kestrel")[0]
	if got, err := b.Get(n.ID); err != nil || got.Content != n.Content {
		t.Fatalf("b.Get = %+v, %v", got, err)
	}
	if ids, _ := search(t, b, "kestrel", 5); !slices.Equal(ids, []int64{n.ID}) {
		t.Errorf("b searches a's note: %v", ids)
	}
	_, err := b.Edit(n.ID, "the staging server is called osprey")
	must(t, err)
	if ids, _ := search(t, a, "osprey", 5); !slices.Equal(ids, []int64{n.ID}) {
		t.Errorf("a searches b's edit: %v", ids)
	}
	if ids, _ := search(t, a, "kestrel", 5); len(ids) != 0 {
		t.Errorf("a still finds the old text: %v", ids)
	}
	must(t, a.Delete(n.ID))
	if _, err := b.Get(n.ID); err == nil {
		t.Error("b still has a's deleted note")
	}

	// Concurrent writers get distinct ids and every note is indexed.
	var wg sync.WaitGroup
	for _, m := range []*Memory{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := m.Add(fmt.Sprintf("concurrent note %d", i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	list, _ := b.List()
	ids := make(map[int64]bool)
	for _, n := range list {
		ids[n.ID] = true
	}
	if len(list) != 50 || len(ids) != 50 {
		t.Errorf("%d notes with %d distinct ids, want 50", len(list), len(ids))
	}
	if got, _ := search(t, a, "concurrent", 20); len(got) != 20 {
		t.Errorf("search = %d hits", len(got))
	}
	if _, count := indexState(t, a.opts.IndexDir); count != 50 {
		t.Errorf("index holds %d notes", count)
	}
}

// addEnv switches the test binary into a helper process that adds notes
// to the memory named by the variable ("N:DIR:INDEXDIR").
const addEnv = "OPENHEIM_MEMORY_TEST_ADD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(addEnv); spec != "" {
		os.Exit(addNotes(spec))
	}
	if spec := os.Getenv(openEnv); spec != "" {
		os.Exit(openAndSearch(spec))
	}
	code := m.Run()
	cleanupBench()
	os.Exit(code)
}

func addNotes(spec string) int {
	parts := strings.SplitN(spec, ":", 3)
	n, _ := strconv.Atoi(parts[0])
	m, err := Open(Options{Dir: parts[1], IndexDir: parts[2]})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer m.Close()
	for i := range n {
		if _, err := m.Add(fmt.Sprintf("note from process %d number %d", os.Getpid(), i)); err != nil {
			fmt.Println("error:", err)
			return 1
		}
	}
	return 0
}

func TestProcessesShareMemory(t *testing.T) {
	m, _ := open(t, Options{})
	const procs, each = 3, 20
	var cmds []*exec.Cmd
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%s:%s", addEnv, each, m.opts.Dir, m.opts.IndexDir))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		must(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	add(t, m, "note from the parent")
	for _, c := range cmds {
		must(t, c.Wait())
	}
	list, err := m.List()
	must(t, err)
	seen := make(map[int64]bool)
	for _, n := range list {
		seen[n.ID] = true
	}
	if want := procs*each + 1; len(list) != want || len(seen) != want {
		t.Fatalf("%d notes, %d distinct ids; want %d", len(list), len(seen), want)
	}
	if ids, notice := search(t, m, "process", 20); len(ids) != 20 || notice != "" {
		t.Errorf("search = %d hits (%q)", len(ids), notice)
	}
	if seq, count := indexState(t, m.opts.IndexDir); count != len(list) || seq != m.log.lastSeq {
		t.Errorf("index at seq %d with %d notes; log at %d", seq, count, m.log.lastSeq)
	}
}

// While another process holds the index, changes still succeed (with a
// warning) and searches scan the log, saying so; once it lets go, the
// index catches up.
func TestIndexBusy(t *testing.T) {
	opts := dirs(t)
	opts.Timeout = 200 * time.Millisecond
	m, w := open(t, opts)
	add(t, m, "blue whale", "blue jay")

	holder, err := memindex.Open(opts.IndexDir, memindex.Options{})
	must(t, err)
	n := add(t, m, "blue heron")[0]
	if w.count("index could not follow") != 1 {
		t.Errorf("warnings: %q", w.all())
	}
	start := time.Now()
	ids, notice := search(t, m, "blue", 5)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("search waited %v", took)
	}
	if len(ids) != 3 || !strings.Contains(notice, "memory index busy") || !strings.Contains(notice, "plain scan") {
		t.Errorf("search while busy = %v, %q", ids, notice)
	}
	must(t, holder.Close())

	ids, notice = search(t, m, "heron", 5)
	if !slices.Equal(ids, []int64{n.ID}) || notice != "" {
		t.Errorf("after release: %v, %q", ids, notice)
	}
}

// A reader of the index never blocks this process's writes for long: the
// index is open only for the length of one operation.
func TestIndexNotHeldBetweenOperations(t *testing.T) {
	m, _ := open(t, Options{})
	add(t, m, "something")
	search(t, m, "something", 1)
	ix, err := memindex.Open(m.opts.IndexDir, memindex.Options{Timeout: 100 * time.Millisecond})
	must(t, err)
	must(t, ix.Close())
}

// cleanupBench removes the benchmarks' store, once one is built.
var cleanupBench = func() {}
