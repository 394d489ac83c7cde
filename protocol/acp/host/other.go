//go:build !unix

package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	"github.com/openheim/openheim/protocol/jsonrpc"
)

// Where there are no process groups, the agent's file and terminal
// requests are refused (the host still drives its sessions).

var errNoAuthority = jsonrpc.NewError(jsonrpc.MethodNotFound, "not supported on this operating system")

type hostFS struct{}

func newHostFS(string) (*hostFS, error) { return &hostFS{}, nil }

func (*hostFS) readTextFile(context.Context, json.RawMessage) (any, error) {
	return nil, errNoAuthority
}
func (*hostFS) writeTextFile(context.Context, json.RawMessage) (any, error) {
	return nil, errNoAuthority
}

type terminals struct{}

func newTerminals(string, *slog.Logger) *terminals { return &terminals{} }

func (*terminals) create(context.Context, json.RawMessage) (any, error) { return nil, errNoAuthority }
func (*terminals) output(context.Context, json.RawMessage) (any, error) { return nil, errNoAuthority }
func (*terminals) waitForExit(context.Context, json.RawMessage) (any, error) {
	return nil, errNoAuthority
}
func (*terminals) kill(context.Context, json.RawMessage) (any, error)    { return nil, errNoAuthority }
func (*terminals) release(context.Context, json.RawMessage) (any, error) { return nil, errNoAuthority }
func (*terminals) releaseSession(string)                                 {}
func (*terminals) closeAll()                                             {}
func (*terminals) count() int                                            { return 0 }

func reapGroup(*exec.Cmd, time.Duration) {}

func hostSignalGroup(cmd *exec.Cmd, _ syscall.Signal) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

func (*Host) gateTerminal(context.Context, json.RawMessage) error { return errNoAuthority }
