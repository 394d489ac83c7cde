package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

func (a *Agent) prompt(ctx context.Context, r acp.PromptRequest) (any, error) {
	ls, err := a.live(r.SessionID)
	if err != nil {
		return nil, err
	}
	input, err := promptInput(r.Prompt)
	if err != nil {
		return nil, err
	}
	ls.mu.Lock()
	mode, provider, model, servers := ls.mode, ls.provider, ls.model, ls.mcp
	ls.mu.Unlock()
	req := engine.Request{SessionID: ls.id, Provider: provider, Model: model, Input: input,
		WorkDir: ls.cwd, Filter: engine.ToolFilter{ReadOnly: mode == ModeArchitect}, Gate: engine.Asking(a.asker(ls.id))}
	if servers != nil {
		req.Tools.MCP = servers
	}
	a.mu.Lock()
	if a.fs.ReadTextFile && a.fs.WriteTextFile {
		req.FS = clientFS{peer: a.peer, sessionID: ls.id}
	}
	a.mu.Unlock()

	// The turn's context is the hub's, not this request's: it ends with the
	// turn, a session/cancel or the server, not with the client.
	done, err := a.hub.Run(ls.id, input, func(ctx context.Context, sink event.Sink) (event.End, error) {
		// The other connections watching the session see what was asked.
		for _, b := range input {
			if b.Type == message.TypeText {
				a.hub.Publish(event.Text(ls.id, event.UserMessageChunk, b.Text), a)
			}
		}
		req.Sink = sink
		_, end, err := a.runner().Prompt(ctx, req)
		return end, err
	})
	if err != nil {
		return nil, rpcError(ls.id, err)
	}
	var o live.Outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		select {
		case o = <-done: // ended too (the server is stopping): answer it
		default:
			// The client went away; the turn goes on under the hub, which
			// cancels it only when asked to or when the server stops.
			return nil, ctx.Err()
		}
	}
	if o.Err != nil {
		return nil, rpcError(ls.id, o.Err)
	}
	if o.End.Err != nil && o.End.StopReason != event.StopCancelled {
		return nil, jsonrpc.NewError(jsonrpc.Internal, o.End.Err.Error())
	}
	u := acp.UsageFrom(o.End.Usage)
	return acp.PromptResponse{StopReason: o.End.StopReason, Usage: &u}, nil
}

// promptInput turns ACP prompt content into the user's message.
func promptInput(blocks []acp.PromptBlock) ([]message.Block, error) {
	var out []message.Block
	for i, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, message.Text(b.Text))
		case "image":
			if b.Data == "" || b.MimeType == "" {
				return nil, invalidParams(fmt.Sprintf("prompt block %d: an image needs data and mimeType", i))
			}
			out = append(out, message.Block{Type: message.TypeImage, Data: b.Data, MimeType: b.MimeType})
		case "resource_link":
			name := b.Name
			if name == "" {
				name = b.URI
			}
			out = append(out, message.Text(fmt.Sprintf("[Referenced resource: %s <%s>]", name, b.URI)))
		case "resource":
			res, err := b.DecodeResource()
			if err != nil || res.Text == nil {
				return nil, invalidParams(fmt.Sprintf("prompt block %d: only text resources are supported", i))
			}
			out = append(out, message.Text(fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", res.URI, *res.Text)))
		default:
			return nil, invalidParams(fmt.Sprintf("prompt block %d: unsupported content type %q", i, b.Type))
		}
	}
	if len(out) == 0 {
		return nil, invalidParams("the prompt is empty")
	}
	return out, nil
}

// Emit implements event.Sink for the hub: the update goes to this
// connection's client as a session/update notification in the form it
// speaks.
func (a *Agent) Emit(ev event.Event) {
	switch {
	case ev.Kind == event.UsageUpdate && (ev.Usage == nil || ev.Usage.Size == 0):
		return // ACP's usage_update needs the window size
	case ev.Kind == event.MCPServerFailed:
		return // initialize's _meta.mcp_servers tells ACP clients
	case ev.Kind == event.SessionInfoUpdate && !a.announces(ev):
		return
	}
	u, ok := acp.UpdateFromEvent(ev)
	if !ok {
		return
	}
	a.notifyShared(ev.SessionID, u, ev.Shared)
}

// announces reports whether the session info that opens a turn goes to
// this client: ACP clients hear of a session's title once, when it gets
// one (a session titled when attached keeps quiet).
func (a *Agent) announces(ev event.Event) bool {
	if ev.Info == nil || ev.Info.Title == "" {
		return false
	}
	a.mu.Lock()
	ls := a.sessions[ev.SessionID]
	a.mu.Unlock()
	if ls == nil {
		return true
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	first := !ls.titled
	ls.titled = true
	return first
}

func (a *Agent) notify(sessionID string, u acp.SessionUpdate) {
	a.notifyShared(sessionID, u, nil)
}

// notifyShared is notify for an event fanned out to several connections:
// the params are encoded once per form (canonical, inline) for all.
func (a *Agent) notifyShared(sessionID string, u acp.SessionUpdate, shared *event.Shared) {
	encode, form := acp.EncodeNotification, "acp"
	if a.isInline() {
		encode, form = acp.EncodeInline, "acp-inline"
	}
	params, err := shared.Encode(form, func() ([]byte, error) {
		return encode(acp.SessionNotification{SessionID: sessionID, Update: u})
	})
	if err != nil {
		slog.Warn("acp: dropping an update that does not encode", "err", err)
		return
	}
	if err := a.peer.Notify(acp.MethodSessionUpdate, json.RawMessage(params)); err != nil {
		slog.Debug("acp: dropping an update for a closed connection", "err", err)
	}
}

// asker asks the client about tool calls the permission rules want
// confirmed, with ACP's four options.
func (a *Agent) asker(sessionID string) permission.Asker {
	return permission.AskerFunc(func(ctx context.Context, r permission.Request) (permission.Outcome, error) {
		req := acp.RequestPermissionRequest{SessionID: sessionID,
			ToolCall: acp.PermissionToolCall{ToolCallID: r.ToolCallID, Title: r.Title, Kind: r.Kind, Status: "pending", RawInput: r.Args,
				Content: permissionContentJSON(r.Content), Locations: permissionLocations(r.Content)},
			Options: []acp.PermissionOption{
				{OptionID: acp.PermissionAllowOnce, Name: "Allow once", Kind: acp.PermissionAllowOnce},
				{OptionID: acp.PermissionAllowAlways, Name: "Always allow", Kind: acp.PermissionAllowAlways},
				{OptionID: acp.PermissionRejectOnce, Name: "Reject", Kind: acp.PermissionRejectOnce},
				{OptionID: acp.PermissionRejectAlways, Name: "Always reject", Kind: acp.PermissionRejectAlways},
			}}
		var resp acp.RequestPermissionResponse
		if err := a.peer.Call(ctx, acp.MethodRequestPermission, req, &resp); err != nil {
			return permission.RejectOnce, err
		}
		id, ok := resp.Selected()
		if !ok {
			return permission.RejectOnce, nil // cancelled
		}
		switch id {
		case acp.PermissionAllowOnce, acp.PermissionAllowAlways, acp.PermissionRejectAlways:
			return permission.Outcome(id), nil
		}
		return permission.RejectOnce, nil
	})
}

// clientFS reads and writes files through the editor.
type clientFS struct {
	peer      *jsonrpc.Peer
	sessionID string
}

var _ tools.FS = clientFS{}

func (f clientFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	var resp acp.ReadTextFileResponse
	err := f.peer.Call(ctx, acp.MethodReadTextFile, acp.ReadTextFileRequest{SessionID: f.sessionID, Path: path}, &resp)
	return resp.Content, err
}

func (f clientFS) WriteTextFile(ctx context.Context, path, content string) error {
	return f.peer.Call(ctx, acp.MethodWriteTextFile, acp.WriteTextFileRequest{SessionID: f.sessionID, Path: path, Content: content}, &acp.WriteTextFileResponse{})
}
