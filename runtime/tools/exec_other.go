//go:build !unix

package tools

import "os/exec"

// Without process groups only the shell itself can be killed.
func setProcessGroup(*exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
