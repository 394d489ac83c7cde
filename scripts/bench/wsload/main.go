//go:build unix

// Command wsload is the load benchmark of `openheim serve`. For each -conns
// value it starts a fresh server, opens that many WebSocket connections to
// /ws, creates one ACP session on each, waits until all are set up, then
// prompts every session at once. The provider is scripts/bench/streamllm:
// zero latency, each reply a stream of -chunks deltas stamped with their
// send time. It reports updates delivered per second, delivery latency
// (p50, p99, max) and the server's RSS idle, with the connections held, and
// at its peak. It exits 1 if any session failed. scripts/bench/serve.sh
// builds everything and runs it.
//
// Every wait has a deadline (-timeout per run), and all traffic is loopback.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type options struct {
	bin, config, home string // start `bin --config config serve` per run, data dirs under home
	url               string // or use the server already at this http:// URL...
	token             string // ...whose token this is (a started server gets a fresh one)
	pid               int    // ...whose pid this is (0: no memory figures)
	llmPid            int    // the provider's pid, for its CPU time (0: not shown)
	cwd               string
	chunks            int
	dialPar           int
	timeout           time.Duration
	settle            time.Duration
	verbose           bool
	// replicas 2 starts two servers (the config must have [cluster]):
	// every session is prompted on the first and watched on the second,
	// where its updates are counted.
	replicas int
}

func main() {
	o, conns, floorBin := parseFlags()
	storage, err := storageFloor(o.home)
	if err != nil {
		fatalf("storage floor: %v", err)
	}
	var results, floors []*runResult
	for _, n := range conns {
		r, err := run(o, n)
		if err != nil {
			fatalf("%d connections: %v", n, err)
		}
		r.name = "openheim"
		results = append(results, r)
		if floorBin != "" {
			fo := o
			fo.bin, fo.replicas = floorBin, 1
			f, err := run(fo, n)
			if err != nil {
				fatalf("floor, %d connections: %v", n, err)
			}
			f.name = "floor"
			floors = append(floors, f)
		}
	}
	fmt.Println(storage)
	if failed := report(o, results, floors); failed > 0 {
		fmt.Fprintf(os.Stderr, "wsload: %d sessions failed\n", failed)
		os.Exit(1)
	}
}

// parseFlags reads and checks the command line.
func parseFlags() (o options, conns []int, floorBin string) {
	var connsFlag string
	flag.StringVar(&o.bin, "openheim", "", "openheim binary to start (`serve --host 127.0.0.1 --port 0`) fresh for each run")
	flag.StringVar(&o.config, "config", "", "config file passed to openheim with --config")
	flag.StringVar(&o.home, "home", os.TempDir(), "directory under which each run gets a fresh OPENHEIM_HOME")
	flag.StringVar(&o.url, "url", "", "instead of -openheim: the http:// URL of a running server")
	flag.IntVar(&o.pid, "pid", 0, "with -url: the server's pid, to read its memory and CPU")
	flag.StringVar(&o.token, "token", os.Getenv("OPENHEIM_TOKEN"), "with -url: the server's token (default $OPENHEIM_TOKEN)")
	flag.IntVar(&o.llmPid, "llm-pid", 0, "the fake provider's pid, to report its CPU time")
	flag.StringVar(&o.cwd, "cwd", "", "absolute cwd for session/new (the config's work_dir)")
	flag.StringVar(&connsFlag, "conns", "100,1000", "comma-separated connection counts, one run each")
	flag.IntVar(&o.chunks, "chunks", 200, "deltas per provider reply (as given to streamllm), to check none is lost")
	flag.IntVar(&o.dialPar, "dial-par", 16, "connections set up at once (keeps the accept backlog from overflowing)")
	flag.DurationVar(&o.timeout, "timeout", 45*time.Second, "deadline of each run, set-up included")
	flag.DurationVar(&o.settle, "settle", 500*time.Millisecond, "pause before reading idle memory")
	flag.BoolVar(&o.verbose, "v", false, "copy the server's stderr to ours")
	flag.StringVar(&floorBin, "floor", "", "also run each load against this floor server (scripts/bench/wsfloor), started as -openheim is, and print the ratios")
	flag.IntVar(&o.replicas, "replicas", 1, "with -openheim: 2 starts two replicas of a cluster (the config's [cluster]); each session is prompted on one and its updates counted on the other")
	flag.Parse()

	for f := range strings.SplitSeq(connsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatalf("-conns: %q is not a positive count", f)
		}
		conns = append(conns, n)
	}
	if (o.bin == "") == (o.url == "") {
		fatalf("give exactly one of -openheim and -url")
	}
	if o.cwd == "" {
		fatalf("-cwd is required: the work_dir sessions run in")
	}
	if o.replicas != 1 && (o.replicas != 2 || o.bin == "") {
		fatalf("-replicas is 1, or 2 with -openheim")
	}

	return o, conns, floorBin
}

// report prints the table, the notes and the ratios, and returns how many
// sessions failed.
func report(o options, results, floors []*runResult) int {
	fmt.Printf("openheim serve under load: each connection one session, one prompt, %d streamed chunks (loopback)\n", o.chunks)
	fmt.Print(header)
	for i, r := range results {
		r.row(os.Stdout)
		if floors != nil {
			floors[i].row(os.Stdout)
		}
	}
	fmt.Println()
	failed := 0
	for i, r := range results {
		r.notes(os.Stdout, o.chunks)
		failed += r.failed()
		if floors != nil {
			floors[i].notes(os.Stdout, o.chunks)
			ratios(os.Stdout, r, floors[i])
		}
	}
	targets(results)
	return failed
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "wsload: "+format+"\n", a...)
	os.Exit(1)
}

// run is one measurement: n connections against a fresh server.
func run(o options, n int) (res *runResult, err error) {
	base, pid, token, watch := o.url, o.pid, o.token, ""
	if o.bin != "" {
		t, err := startTarget(o)
		if err != nil {
			return nil, err
		}
		defer func() { t.stop(res) }()
		base, pid, token, watch = t.srv.URL, t.srv.Pid(), t.token, t.watch
	}
	r := &runResult{conns: n, errs: map[string]int{}, others: map[string]int{}}
	time.Sleep(o.settle)
	r.idle = mem(pid)

	ctx, cancel := context.WithTimeoutCause(context.Background(), o.timeout,
		fmt.Errorf("run deadline (-timeout %v) passed", o.timeout))
	defer cancel()
	start := make(chan struct{})
	var ready, all sync.WaitGroup
	ready.Add(n)
	co := clientOpts{
		url:      wsURL(base),
		watchURL: wsURL(watch),
		token:    token,
		cwd:      o.cwd,
		chunks:   o.chunks,
		setupSem: make(chan struct{}, o.dialPar),
		start:    start,
		ready:    ready.Done,
	}
	conns := make([]*connResult, n)
	t0 := time.Now()
	for i := range n {
		all.Go(func() { conns[i] = runConn(ctx, co) })
	}
	ready.Wait() // bounded: every set-up step has ctx's deadline
	r.setup = time.Since(t0)
	time.Sleep(o.settle)
	r.held = mem(pid)

	srv0, llm0, drv0 := readCPU(pid), readCPU(o.llmPid), readCPU(os.Getpid())
	p0 := time.Now()
	close(start)
	all.Wait()
	r.cpuServer, r.cpuLLM, r.cpuDriver = readCPU(pid)-srv0, readCPU(o.llmPid)-llm0, readCPU(os.Getpid())-drv0
	r.after = mem(pid)
	r.collect(conns, p0)
	if r.setupOK == 0 {
		return r, errors.New("no session could be set up: " + tally(r.errs))
	}
	return r, nil
}

// target is a server run started for one load (and its watching replica).
type target struct {
	srv   *server
	w     *server
	token string
	watch string // the watching replica's URL, with -replicas 2
}

func startTarget(o options) (*target, error) {
	home, err := os.MkdirTemp(o.home, "home-")
	if err != nil {
		return nil, err
	}
	t := &target{token: newToken()}
	if t.srv, err = startServerWith(o.bin, o.config, home, t.token, 15*time.Second, o.verbose); err != nil {
		return nil, err
	}
	if o.replicas == 2 {
		if t.w, err = startWatchReplica(o, t.token); err != nil {
			t.srv.stop()
			return nil, err
		}
		t.watch = t.w.URL
	}
	return t, nil
}

// stop stops the servers, keeping in res what the first logged before
// being asked to stop (its shutdown message is not news).
func (t *target) stop(res *runResult) {
	lines, head := t.srv.Stderr()
	stopErr := t.srv.stop()
	if t.w != nil {
		t.w.stop()
	}
	if res != nil {
		res.stopErr = stopErr
		res.stderrLines, res.stderrHead = lines, head
	}
}

// collect closes the connections and adds their results up; p0 is when
// the prompts went out.
func (r *runResult) collect(conns []*connResult, p0 time.Time) {
	for _, c := range conns {
		if c.conn != nil {
			c.conn.close()
		}
	}
	var last int64
	for _, c := range conns {
		r.add(c)
		last = max(last, c.done)
		if c.first > 0 {
			r.firsts = append(r.firsts, c.first-p0.UnixNano())
		}
	}
	if last > 0 {
		r.wall = time.Duration(last - p0.UnixNano())
	}
	slices.Sort(r.lat)
	slices.Sort(r.firsts)
}

func wsURL(base string) string {
	if base == "" {
		return ""
	}
	return "ws" + strings.TrimPrefix(strings.TrimRight(base, "/"), "http") + "/ws"
}

// startWatchReplica starts the second replica, with its own data dir.
func startWatchReplica(o options, token string) (*server, error) {
	home, err := os.MkdirTemp(o.home, "home-")
	if err != nil {
		return nil, err
	}
	return startServerWith(o.bin, o.config, home, token, 15*time.Second, o.verbose)
}

// mem reads a server's memory; zeros when there is no pid to read.
func mem(pid int) procMem {
	if pid <= 0 {
		return procMem{}
	}
	m, err := readMem(pid)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wsload: reading server memory: %v\n", err)
	}
	return m
}

// targets checks the goals on the largest run: 1,000 sessions
// held, at least 100,000 deltas delivered per second, delivery p99 under
// 100 ms, every first update within 1 s, peak RSS under 150 MB, idle under
// 25 MB.
func targets(results []*runResult) {
	r := slices.MaxFunc(results, func(a, b *runResult) int { return a.conns - b.conns })
	ok := func(b bool) string {
		if b {
			return "ok"
		}
		return "MISSED"
	}
	first := r.firstPct(99)
	fmt.Printf("\ntargets (%d conns): sessions held %d/%d %s; %.0f deltas/s >= 100000 %s; delivery p99 %.1f ms < 100 %s; "+
		"first update p99 %.0f ms < 1000 %s; peak RSS %.1f MB < 150 %s; idle RSS %.1f MB < 25 %s\n",
		r.conns, r.setupOK, r.conns, ok(r.setupOK == r.conns && r.conns >= 1000),
		r.perSecond(), ok(r.perSecond() >= 100000), r.pct(99), ok(r.pct(99) < 100),
		first, ok(first < 1000), mb(r.after.HWM), ok(r.after.HWM > 0 && r.after.HWM < 150*1024),
		mb(r.idle.RSS), ok(r.idle.RSS > 0 && r.idle.RSS < 25*1024))
}
