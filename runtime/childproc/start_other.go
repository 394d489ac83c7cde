//go:build !unix

package childproc

import "os/exec"

// Without process groups a child is started as is; KillGroup kills the
// process alone and nothing guards a killed openheim's children.
func prepare(*exec.Cmd) {}

func spawn(start func() error) error { return start() }
