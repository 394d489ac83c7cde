//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// procMem is the memory of a process from /proc/<pid>/status, in KiB.
type procMem struct {
	RSS     int64 // VmRSS: resident now
	HWM     int64 // VmHWM: the most ever resident
	Threads int64
}

func readMem(pid int) (procMem, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMem{}, err
	}
	var m procMem
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(string(f[0]), 10, 64)
		switch string(k) {
		case "VmRSS":
			m.RSS = n
		case "VmHWM":
			m.HWM = n
		case "Threads":
			m.Threads = n
		}
	}
	return m, nil
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go runs on (reading it properly needs sysconf, so cgo).
const clockTick = 100

// readCPU is the user plus system CPU time a process has used so far; zero
// if it cannot be read (the number is informative, not a result).
func readCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// fields after its closing parenthesis. utime and stime are fields 14
	// and 15, so the 12th and 13th after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(string(f[11]), 10, 64)
	s, _ := strconv.ParseInt(string(f[12]), 10, 64)
	return time.Duration(u+s) * time.Second / clockTick
}
