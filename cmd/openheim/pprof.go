//go:build pprof

// Profiling for benchmarks: `go build -tags pprof` and set
// OPENHEIM_CPUPROFILE=FILE (and/or OPENHEIM_MEMPROFILE=FILE, or
// OPENHEIM_TRACE=FILE for an execution trace: `go tool trace -pprof=sync`
// or `-pprof=syscall` shows what waits); the profile is written when the
// process exits normally. Not in release builds.
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"
)

func init() {
	if path := os.Getenv("OPENHEIM_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			atExit = append(atExit, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("OPENHEIM_TRACE"); path != "" {
		f, err := os.Create(path)
		if err == nil && trace.Start(f) == nil {
			atExit = append(atExit, func() { trace.Stop(); f.Close() })
		}
	}
	if path := os.Getenv("OPENHEIM_MEMPROFILE"); path != "" {
		atExit = append(atExit, func() {
			if f, err := os.Create(path); err == nil {
				runtime.GC()
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		})
	}
}

func init() {
	if prefix := os.Getenv("OPENHEIM_PEAKPROF"); prefix != "" {
		go watchPeak(prefix)
	}
}

// watchPeak snapshots the heap whenever resident memory reaches a new high.
func watchPeak(prefix string) {
	var peak int64
	for range time.Tick(50 * time.Millisecond) {
		rss := residentBytes()
		if rss < peak+4<<20 {
			continue
		}
		peak = rss
		writePeak(prefix, rss)
	}
}

func writePeak(prefix string, rss int64) {
	if f, err := os.Create(prefix + ".heap"); err == nil {
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	if f, err := os.Create(prefix + ".goroutine"); err == nil {
		pprof.Lookup("goroutine").WriteTo(f, 1)
		f.Close()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	os.WriteFile(prefix+".memstats", fmt.Appendf(nil,
		"rss %d MB\nheap_inuse %d MB\nheap_alloc %d MB\nheap_idle %d MB\nheap_released %d MB\nstack_inuse %d MB\nsys %d MB\ngoroutines %d\nnum_gc %d\nnext_gc %d MB\n",
		rss>>20, m.HeapInuse>>20, m.HeapAlloc>>20, m.HeapIdle>>20, m.HeapReleased>>20,
		m.StackInuse>>20, m.Sys>>20, runtime.NumGoroutine(), m.NumGC, m.NextGC>>20), 0o644)
}

// residentBytes reads VmRSS from /proc/self/statm (pages, second field).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return n * int64(os.Getpagesize())
}
