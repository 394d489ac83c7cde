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

func (a *API) handlePostEvent(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	if a.routed(id, w, r) {
		return
	}
	var ev eventInput
	if err := decodeJSON(r, &ev); err != nil {
		writeError(w, err)
		return
	}
	t, err := a.sessions.tracker(id)
	if err != nil {
		writeError(w, err)
		return
	}
	// An event on an idle session leaves nothing to track.
	defer func() { go a.sessions.release(id, t) }()
	switch ev.Type {
	case "message":
		var it inputItem
		if err := strictData(ev.Data, &it); err != nil {
			writeError(w, err)
			return
		}
		m, err := a.inputMessage(id, it, false)
		if err != nil {
			writeError(w, badRequest("message: %v", err))
			return
		}
		if err := a.sessionWorkspaceOK(id); err != nil {
			writeError(w, err)
			return
		}
		var qid string
		err = a.sessions.withTracker(id, func(tr *tracker) (err error) {
			qid, err = tr.post(m.Content)
			return err
		})
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"queued": true, "queued_item_id": qid})
	case "interrupt":
		t.interrupt()
		writeJSON(w, http.StatusAccepted, map[string]any{"queued": false})
	case "function_call_output":
		var out struct {
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if err := strictData(ev.Data, &out); err != nil {
			writeError(w, err)
			return
		}
		text, err := toolOutputText(out.Output)
		if err != nil || out.CallID == "" {
			writeError(w, badRequest("function_call_output needs data {call_id, output}: output a string or JSON"))
			return
		}
		if err := t.deliver(out.CallID, text); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"queued": false})
	case "compact":
		if len(ev.Data) > 0 && strings.TrimSpace(string(ev.Data)) != "{}" && string(ev.Data) != "null" {
			writeError(w, badRequest("compact takes no data ({})"))
			return
		}
		if err := a.compact(t); err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"queued": true})
	default:
		writeError(w, badRequest("unknown event type %q (openheim accepts message, interrupt, function_call_output and compact)", ev.Type))
	}
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
		return message.Block{Type: message.TypeImage, MimeType: strings.SplitN(ct, ";", 2)[0], Data: base64.StdEncoding.EncodeToString(data)}, nil
	}
	if imageOnly {
		return message.Block{}, fmt.Errorf("file %s is %s, not an image", fid, ct)
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return message.Block{}, fmt.Errorf("file %s is binary (%s): only text files and images can be sent", fid, ct)
	}
	return message.Text(fmt.Sprintf("<file name=%q>\n%s\n</file>", f.Metadata.Filename, strings.TrimSuffix(string(data), "\n"))), nil
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
		writeError(w, &apiError{http.StatusUnprocessableEntity, `action must be "accept", "decline" or "cancel"`})
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
