//go:build pprof

// Profiling for benchmarks: `go build -tags pprof` and set
// OPENHEIM_CPUPROFILE=FILE (and/or OPENHEIM_MEMPROFILE=FILE, or
// OPENHEIM_TRACE=FILE for an execution trace: `go tool trace -pprof=sync`
// or `-pprof=syscall` shows what waits); the profile is written when the
// process exits normally. Not in release builds.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
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
