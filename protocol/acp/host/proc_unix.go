//go:build unix && !linux

package host

import "github.com/openheim/openheim/runtime/childproc"

// groupLive reports whether the process group pgid has a member left.
func groupLive(pgid int) bool { return childproc.SignalGroup(pgid, 0) == nil }
