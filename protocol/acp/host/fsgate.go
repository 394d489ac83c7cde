package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
)

// fsAsks numbers the permission requests the host makes itself before an
// fs/* request, so they have tool call ids of their own.
var fsAsks atomic.Int64

// gateFS lets an agent's fs/read_text_file or fs/write_text_file through
// openheim's one gate. A path one of the agent's own permission requests
// was allowed to touch in this turn passes (its question was asked); any
// other is judged as a read or an edit of that path by the turn's gate,
// through the same handler as the agent's requests: its rules, its asker
// (--deny-ask refuses what the rules would ask about) and its "always"
// answers. Reads are allowed by the default rules, so they ask nobody.
func (h *Host) gateFS(ctx context.Context, method, kind string, params json.RawMessage) error {
	var r struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
	}
	if json.Unmarshal(params, &r) != nil || r.SessionID == "" || r.Path == "" {
		return nil // the handler refuses it with the reason
	}
	if s := h.session(r.SessionID); s != nil && s.allowedPath(r.Path) {
		return nil
	}
	raw, _ := json.Marshal(map[string]any{"path": r.Path})
	locs, _ := json.Marshal([]map[string]any{{"path": r.Path}})
	if h.askItself(ctx, r.SessionID, acp.PermissionToolCall{ToolCallID: fmt.Sprintf("fs-%d", fsAsks.Add(1)),
		Title: kind + " " + r.Path, Kind: kind, RawInput: raw, Locations: locs}) {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.InvalidRequest, Message: jsonrpc.Message(jsonrpc.InvalidRequest) +
		fmt.Sprintf(": %s: openheim's permission rules refused %s of %s", method, kind, r.Path)}
}

// askItself puts a permission request the host makes itself (before a
// terminal or an fs/* request) to the same handler as the agent's own,
// with "allow once" and "reject once" to choose from; true when allowed.
func (h *Host) askItself(ctx context.Context, sessionID string, call acp.PermissionToolCall) bool {
	call.Status = "pending"
	options := []acp.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: acp.PermissionAllowOnce},
		{OptionID: "reject", Name: "Reject", Kind: acp.PermissionRejectOnce}}
	q := acp.RequestPermissionRequest{SessionID: sessionID, ToolCall: call, Options: options}
	return granted(h.decide(ctx, q), options)
}

// granted says resp picked one of options' allow kinds.
func granted(resp acp.RequestPermissionResponse, options []acp.PermissionOption) bool {
	id, ok := resp.Selected()
	if !ok {
		return false
	}
	for _, o := range options {
		if o.OptionID == id {
			return o.Kind == acp.PermissionAllowOnce || o.Kind == acp.PermissionAllowAlways
		}
	}
	return false
}

// allow notes paths as allowed for the running turn.
func (s *hostSession) allow(paths []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turn == nil {
		return
	}
	if s.turn.allowed == nil {
		s.turn.allowed = map[string]bool{}
	}
	for _, p := range paths {
		s.turn.allowed[filepath.Clean(p)] = true
	}
}

func (s *hostSession) allowedPath(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn != nil && s.turn.allowed[filepath.Clean(p)]
}
