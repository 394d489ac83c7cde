//go:build unix

package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// runResult is one run: N connections against one fresh server.
type runResult struct {
	name      string // openheim, or the floor it is compared with
	conns     int
	setupOK   int // sessions created
	completed int // prompts answered end_turn
	errs      map[string]int
	updates   int64
	chunks    int64
	lat       []int64 // ns, sorted
	firsts    []int64 // ns from the prompts' start to each session's first update, sorted
	others    map[string]int

	setup time.Duration // dial + initialize + session/new of every connection
	wall  time.Duration // first prompt sent to last response received

	idle, held, after procMem // server memory: no connections, N set up, after the run
	cpuServer, cpuLLM time.Duration
	cpuDriver         time.Duration

	stderrLines int
	stderrHead  []string
	stopErr     error
}

// add folds one connection's result in.
func (r *runResult) add(c *connResult) {
	if c.setupErr == nil {
		r.setupOK++
		if c.runErr == nil {
			r.completed++
		}
	}
	if err := firstErr(c.setupErr, c.runErr); err != nil {
		r.errs[err.Error()]++
	}
	r.updates += int64(c.updates)
	r.chunks += int64(c.chunks)
	r.lat = append(r.lat, c.lat...)
	for k, n := range c.others {
		r.others[k] += n
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func (r *runResult) failed() int { return r.conns - r.completed }

// perSecond is the provider deltas delivered per second: the server may
// merge several into one update (frame) for a client that is behind, so
// frames are not the measure of what was delivered.
func (r *runResult) perSecond() float64 {
	if r.wall <= 0 {
		return 0
	}
	return float64(r.chunks) / r.wall.Seconds()
}

// firstPct is the nearest-rank percentile of the first-update delays, in ms.
func (r *runResult) firstPct(p float64) float64 {
	if len(r.firsts) == 0 {
		return math.NaN()
	}
	i := max(int(math.Ceil(p/100*float64(len(r.firsts))))-1, 0)
	return float64(r.firsts[i]) / 1e6
}

// ratios prints r against the floor f of the same load, measured in the
// same run: throughput as r/f (1 is the floor's), times as r/f (1 is the
// floor's, higher is slower).
func ratios(w io.Writer, r, f *runResult) {
	div := func(a, b float64) float64 {
		if b == 0 {
			return math.NaN()
		}
		return a / b
	}
	cpu := func(x *runResult) float64 { return div(x.cpuServer.Seconds(), float64(x.chunks)) }
	fmt.Fprintf(w, "%5d: openheim / floor: deltas/s x%.2f, delivery p50 x%.1f, p99 x%.1f, first update p99 x%.1f, server CPU per delta x%.1f, peak RSS x%.1f\n",
		r.conns, div(r.perSecond(), f.perSecond()), div(r.pct(50), f.pct(50)), div(r.pct(99), f.pct(99)),
		div(r.firstPct(99), f.firstPct(99)), div(cpu(r), cpu(f)), div(float64(r.after.HWM), float64(f.after.HWM)))
}

// pct is the nearest-rank percentile of the sorted latencies, in ms.
func (r *runResult) pct(p float64) float64 {
	if len(r.lat) == 0 {
		return math.NaN()
	}
	i := max(int(math.Ceil(p/100*float64(len(r.lat))))-1, 0)
	return float64(r.lat[i]) / 1e6
}

func mb(kib int64) float64 { return float64(kib) / 1024 }

const header = "server    conns   done  errors   updates    deltas     deltas/s   p50 ms   p99 ms   max ms  first p99  idle MB  conns MB  peak MB\n"

// row: updates are the agent_message_chunk frames, deltas the provider's
// chunks in them; p50/p99/max the delivery latency of each frame's oldest
// delta; first p99 the delay from the prompts to each session's first
// update.
func (r *runResult) row(w io.Writer) {
	fmt.Fprintf(w, "%-8s  %5d  %5d  %6d  %8d  %8d  %11.0f  %7.1f  %7.1f  %7.1f  %9.0f  %7.1f  %8.1f  %7.1f\n",
		r.name, r.conns, r.completed, r.failed(), r.updates, r.chunks, r.perSecond(),
		r.pct(50), r.pct(99), r.pct(100), r.firstPct(99), mb(r.idle.RSS), mb(r.held.RSS), mb(r.after.HWM))
}

// notes are the details behind a row: phases, CPU, what else the server
// sent and said, and the first errors.
func (r *runResult) notes(w io.Writer, chunksPer int) {
	in := fmt.Sprintf("%5d %s: ", r.conns, r.name)
	pad := strings.Repeat(" ", len(in))
	fmt.Fprintf(w, "%sset-up %.2f s (dial, initialize, session/new; %d of %d ok); prompts %.2f s; server threads %d idle, %d with conns\n",
		in, r.setup.Seconds(), r.setupOK, r.conns, r.wall.Seconds(), r.idle.Threads, r.held.Threads)
	if n := len(r.firsts); n > 0 {
		// Turns that start late (a lock or fsync every turn start waits
		// for) show here rather than in the delivery latency.
		fmt.Fprintf(w, "%sfirst update after the prompts went out: p50 %.1f ms, max %.1f ms\n",
			pad, float64(r.firsts[(n-1)/2])/1e6, float64(r.firsts[n-1])/1e6)
	}
	fmt.Fprintf(w, "%sCPU during prompts: server %.2f s, provider %.2f s, driver %.2f s (of %.2f s wall x %d CPUs)\n",
		pad, r.cpuServer.Seconds(), r.cpuLLM.Seconds(), r.cpuDriver.Seconds(), r.wall.Seconds(), runtime.NumCPU())
	if want := int64(r.setupOK * chunksPer); r.chunks != want {
		fmt.Fprintf(w, "%sLOST: %d of %d provider chunks never reached a client\n", pad, want-r.chunks, want)
	}
	if len(r.others) > 0 {
		fmt.Fprintf(w, "%sother frames: %s\n", pad, tally(r.others))
	}
	if r.stderrLines > 0 {
		fmt.Fprintf(w, "%sserver stderr: %d lines after listening, first: %s\n", pad, r.stderrLines, strings.Join(r.stderrHead, " | "))
	}
	if r.stopErr != nil {
		fmt.Fprintf(w, "%sshutdown: %v\n", pad, r.stopErr)
	}
	if len(r.errs) > 0 {
		fmt.Fprintf(w, "%serrors: %s\n", pad, tally(r.errs))
	}
}

// tally prints a count map, largest first, at most 6 entries.
func tally(m map[string]int) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for i, k := range keys {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("(%d more kinds)", len(keys)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
