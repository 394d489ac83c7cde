package sessionsapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/sessionfiles"
)

// maxInlineFile bounds a session file turned into a message block.
const maxInlineFile = 20 << 20

// eventInput is POST /v1/sessions/{id}/events.
type eventInput struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// decodeEvent reads an event body: one that is not {type, data?} with
// data an object is a 422 (seed 003: the body fails validation); what its
// data must hold is each type's own check (a 400).
func decodeEvent(r *http.Request) (eventInput, error) {
	var ev eventInput
	if err := decodeJSON(r, &ev); err != nil {
		return ev, unprocessable(err)
	}
	if strings.TrimSpace(ev.Type) == "" {
		return ev, invalid("type is required")
	}
	if d := strings.TrimSpace(string(ev.Data)); d != "" && d != "null" && !strings.HasPrefix(d, "{") {
		return ev, invalid("data must be an object")
	}
	return ev, nil
}

// eventHandler answers one type of event posted to session id's tracker.
type eventHandler func(a *API, t *tracker, id string, data json.RawMessage) (any, error)

// eventHandlers are the event types openheim takes (inputs.go has the
// items a client queues besides messages).
var eventHandlers = map[string]eventHandler{
	"message":              (*API).postMessage,
	"interrupt":            (*API).postInterrupt,
	"stop_session":         (*API).postInterrupt,
	"function_call_output": (*API).postOutput,
	"tool_result":          (*API).postOutput,
	"function_call":        (*API).postCall,
	"reasoning":            (*API).postReasoning,
	"compact":              (*API).postCompact,
}

// bypassFailed are the events a failed session still takes: they stop
// what runs, and nothing does.
var bypassFailed = map[string]bool{"interrupt": true, "stop_session": true}

func (a *API) handlePostEvent(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	if a.routed(id, w, r) {
		return
	}
	ev, err := decodeEvent(r)
	if err != nil {
		writeError(w, err)
		return
	}
	handle := eventHandlers[ev.Type]
	if handle == nil {
		writeError(w, badRequest("unknown event type %q (openheim takes message, function_call_output, tool_result, "+
			"function_call, reasoning, interrupt, stop_session and compact)", ev.Type))
		return
	}
	t, err := a.sessions.tracker(id)
	if err != nil {
		writeError(w, err)
		return
	}
	// An event on an idle session leaves nothing to track.
	defer func() { go a.sessions.release(id, t) }()
	if why := t.failedWhy(); why != "" && !bypassFailed[ev.Type] {
		writeError(w, failedError(why))
		return
	}
	answer, err := handle(a, t, id, ev.Data)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, answer)
}

func (a *API) postMessage(_ *tracker, id string, data json.RawMessage) (any, error) {
	var it inputItem
	if err := strictData(data, &it); err != nil {
		return nil, err
	}
	m, err := a.inputMessage(id, it, false)
	if err != nil {
		return nil, badRequest("message: %v", err)
	}
	if err := a.sessionWorkspaceOK(id); err != nil {
		return nil, err
	}
	var qid string
	err = a.sessions.withTracker(id, func(tr *tracker) (err error) {
		qid, err = tr.post(m.Content)
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"queued": true, "queued_item_id": qid}, nil
}

// postInterrupt cancels the running turn at once and drops the queued
// input (interrupt). stop_session does the same: openheim runs sessions
// in-process, so stopping the live session is stopping its turn, and the
// next message starts a new one (seed 003: stop is not sticky).
func (a *API) postInterrupt(t *tracker, _ string, _ json.RawMessage) (any, error) {
	t.interrupt()
	return map[string]any{"queued": false}, nil
}

func (a *API) postCompact(t *tracker, _ string, data json.RawMessage) (any, error) {
	if len(data) > 0 && strings.TrimSpace(string(data)) != "{}" && string(data) != "null" {
		return nil, badRequest("compact takes no data ({})")
	}
	if err := a.compact(t); err != nil {
		return nil, err
	}
	return map[string]any{"queued": true}, nil
}

// strictData decodes an event's data, refusing unknown fields.
func strictData(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return badRequest("data is required")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid data: %v", err)
	}
	return nil
}

// toolOutputText reads a tool output: a JSON string as its text, anything else
// as its JSON.
func toolOutputText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", fmt.Errorf("missing output")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	if !json.Valid(raw) {
		return "", fmt.Errorf("invalid output")
	}
	return string(raw), nil
}

// contentBlocks turns message content (a string, or parts) into blocks:
// input_text/output_text, input_image (a session file or a data: URL) and
// input_file (a session file: text inline, images as images).
func (a *API) contentBlocks(id string, raw json.RawMessage) ([]message.Block, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("content is empty")
		}
		return []message.Block{message.Text(s)}, nil
	}
	var parts []Part
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) == 0 {
		return nil, fmt.Errorf("content must be a string or a non-empty list of parts")
	}
	var out []message.Block
	for i, p := range parts {
		b, err := a.partBlock(id, p)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %v", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func (a *API) partBlock(id string, p Part) (message.Block, error) {
	switch p.Type {
	case "input_text", "output_text", "text":
		return message.Text(p.Text), nil
	case "input_image":
		if p.FileID != "" {
			return a.fileBlock(id, p.FileID, true)
		}
		mime, data, ok := dataURL(p.ImageURL)
		if !ok || !strings.HasPrefix(mime, "image/") {
			return message.Block{}, fmt.Errorf("input_image needs a file_id or a data:image/...;base64 image_url (openheim does not fetch URLs)")
		}
		return message.Block{Type: message.TypeImage, MimeType: mime, Data: data}, nil
	case "input_file":
		if p.FileID == "" {
			return message.Block{}, fmt.Errorf("input_file needs a file_id (upload it to the session's resources/files)")
		}
		return a.fileBlock(id, p.FileID, false)
	}
	return message.Block{}, fmt.Errorf("unknown part type %q (input_text, input_image, input_file)", p.Type)
}

// fileBlock reads session file fid: an image becomes an image block, text
// a text block naming the file.
func (a *API) fileBlock(id, fid string, imageOnly bool) (message.Block, error) {
	f, data, err := sessionfiles.Read(a.files, id, fid, maxInlineFile)
	if err != nil {
		return message.Block{}, err
	}
	ct := f.Metadata.ContentType
	if strings.HasPrefix(ct, "image/") {
		return message.Block{Type: message.TypeImage, MimeType: strings.SplitN(ct, ";", 2)[0], Data: base64.StdEncoding.EncodeToString(data),
			FileID: fid}, nil
	}
	if imageOnly {
		return message.Block{}, fmt.Errorf("file %s is %s, not an image", fid, ct)
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return message.Block{}, fmt.Errorf("file %s is binary (%s): only text files and images can be sent", fid, ct)
	}
	b := message.Text(fmt.Sprintf("<file name=%q>\n%s\n</file>", f.Metadata.Filename, strings.TrimSuffix(string(data), "\n")))
	b.FileID = fid
	return b, nil
}

// dataURL splits "data:<mime>;base64,<data>".
func dataURL(u string) (mime, data string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	head, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	mime, enc, _ := strings.Cut(head, ";")
	if enc != "base64" {
		return "", "", false
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return "", "", false
	}
	return mime, data, true
}

// resolveRequest is the body of .../elicitations/{id}/resolve: MCP's
// ElicitationResult.
type resolveRequest struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content"`
}

func (a *API) handleResolve(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	if a.routed(id, w, r) {
		return
	}
	var req resolveRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	switch req.Action {
	case "accept", "decline", "cancel":
	default:
		writeError(w, invalid(`action must be "accept", "decline" or "cancel"`))
		return
	}
	t := a.sessions.lookup(id)
	if t == nil {
		writeError(w, notFound("no pending elicitation %q in this session", r.PathValue("elicitation_id")))
		return
	}
	if err := t.resolve(r.PathValue("elicitation_id"), req.Action); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"queued": false})
}
