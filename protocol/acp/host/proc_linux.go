package host

import (
	"bytes"
	"os"
	"strconv"

	"github.com/openheim/openheim/runtime/childproc"
)

// groupLive reports whether the process group pgid has a member that is
// not a zombie. A zombie still counts for kill(-pgid, 0), and one whose
// parent has died waits for init to reap it, which in a container can take
// seconds: it runs nothing, so it is not left behind.
func groupLive(pgid int) bool {
	if childproc.SignalGroup(pgid, 0) != nil {
		return false // no member at all, the usual case: no need to look
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and ")".
		f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(f) < 3 || string(f[0]) == "Z" {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			return true
		}
	}
	return false
}
