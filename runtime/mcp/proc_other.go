//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

// Without process groups only the server process itself can be killed.
func setProcessGroup(*exec.Cmd) {}

func killProcessGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
