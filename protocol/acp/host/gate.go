//go:build unix

package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
)

// terminalAsks numbers the permission requests the host makes itself
// before a terminal, so they have tool call ids of their own.
var terminalAsks atomic.Int64

// gateTerminal lets a terminal/create through only when allow_shell is on
// and openheim's gate allows the command. The host asks itself, through
// the same permission handler as the agent's own requests (so the same
// rules, asker and "always" answers apply, and the read model records
// it), an execute request carrying the command line and its cwd, which the
// gate judges against the work directory.
func (h *Host) gateTerminal(ctx context.Context, params json.RawMessage) error {
	if !h.opts.AllowShell {
		return hostError(jsonrpc.MethodNotFound, "terminal/create: openheim offers no terminals here (allow_shell is off; initialize said terminal: false)")
	}
	var r struct {
		SessionID string   `json:"sessionId"`
		Command   string   `json:"command"`
		Args      []string `json:"args"`
		Cwd       string   `json:"cwd"`
	}
	if err := decodeHostParams(params, &r); err != nil {
		return err
	}
	switch {
	case r.SessionID == "":
		return hostError(jsonrpc.InvalidParams, "sessionId is required")
	case strings.TrimSpace(r.Command) == "":
		return hostError(jsonrpc.InvalidParams, "command is required")
	}
	cwd := r.Cwd
	switch {
	case cwd == "":
		cwd = h.opts.WorkDir
	case !filepath.IsAbs(cwd): // as the terminal itself takes it
		cwd = h.opts.WorkDir + string(filepath.Separator) + cwd
	}
	argv := append([]string{r.Command}, r.Args...)
	raw, err := json.Marshal(map[string]any{"command": argv, "cwd": cwd})
	if err != nil {
		return hostError(jsonrpc.InvalidParams, "%v", err)
	}
	line := strings.Join(argv, " ")
	if h.askItself(ctx, r.SessionID, acp.PermissionToolCall{ToolCallID: fmt.Sprintf("terminal-%d", terminalAsks.Add(1)),
		Title: line, Kind: "execute", RawInput: raw}) {
		return nil
	}
	return hostError(jsonrpc.InvalidRequest, "terminal/create: openheim's permission rules refused %q in %s", line, cwd)
}
