package sessionsapi

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/openheim/openheim/runtime/llm/responses"
	"github.com/openheim/openheim/runtime/message"
)

// Item is a conversation item (seed 003's GET .../items shape). Items are
// derived from the stored messages, and their ids from the session and the
// message's position in it (see ids), so the snapshot and the live stream
// name the same item the same way (the reconnect contract dedupes by id),
// and no two sessions, a fork and its source included, share an id.
type Item struct {
	ID         string  `json:"id"`
	ResponseID string  `json:"response_id,omitempty"`
	Model      string  `json:"model,omitempty"`
	Type       string  `json:"type"` // message, reasoning, function_call, function_call_output, compaction
	Role       string  `json:"role,omitempty"`
	Status     string  `json:"status"`
	Content    []Part  `json:"content,omitempty"`
	Name       string  `json:"name,omitempty"`
	Arguments  *string `json:"arguments,omitempty"`
	CallID     string  `json:"call_id,omitempty"`
	Output     *string `json:"output,omitempty"`
	// Summary is a compaction's summary (a string), or a reasoning item's
	// summary parts (summary_text) when the provider shows only a summary
	// of the model's reasoning.
	Summary any `json:"summary,omitempty"`
}

// Part is one content part of a message or reasoning item.
type Part struct {
	Type        string `json:"type"` // input_text, output_text, input_image, input_file, reasoning_text
	Text        string `json:"text,omitempty"`
	Annotations *[]any `json:"annotations,omitempty"` // output_text: always []
	ImageURL    string `json:"image_url,omitempty"`
	FileID      string `json:"file_id,omitempty"`
	Filename    string `json:"filename,omitempty"`
}

// idSpace names the items and responses of one session. A stored message
// keeps its position for good (the history is append-only; a fork is a
// new session), so an id made of the session's uuid and the position is
// stable, the same in the stream and the snapshot, and unique across
// sessions (s is the uuid's 32 hex digits):
//
//	resp_<s>_<i>      the response (turn) that began at user message i
//	msg_<s>_<i>       the user's or the assistant's text of message i
//	rs_<s>_<i>        the assistant's reasoning in message i
//	fc_<s>_<i>_<k>    the k-th tool call of assistant message i
//	fco_<s>_<i>_<k>   its output
//	cmp_<s>_<i>       a compaction summary
//
// A response is one turn: it starts at user message i and holds everything
// up to the next user message that starts a turn (one following tool
// results was taken in during the turn and belongs to it).
type idSpace string

// idsOf is the id space of session uuid.
func idsOf(uuid string) idSpace { return idSpace(strings.ReplaceAll(uuid, "-", "")) }

func (s idSpace) response(i int) string       { return fmt.Sprintf("resp_%s_%d", s, i) }
func (s idSpace) message(i int) string        { return fmt.Sprintf("msg_%s_%d", s, i) }
func (s idSpace) reasoning(i int) string      { return fmt.Sprintf("rs_%s_%d", s, i) }
func (s idSpace) call(i, k int) string        { return fmt.Sprintf("fc_%s_%d_%d", s, i, k) }
func (s idSpace) output(i, k int) string      { return fmt.Sprintf("fco_%s_%d_%d", s, i, k) }
func (s idSpace) compaction(i int) string     { return fmt.Sprintf("cmp_%s_%d", s, i) }
func (s idSpace) strayOutput(i, j int) string { return fmt.Sprintf("fco_%s_%d_r%d", s, i, j) }

// startsResponse reports whether message i opens a turn: a user message
// not following tool results (those are images of the results, or input
// taken in mid-turn).
func startsResponse(msgs []message.Message, i int) bool {
	var prev message.Role
	if i > 0 {
		prev = msgs[i-1].Role
	}
	return opens(msgs[i], prev)
}

// outputText is the text of an output_text part.
func outputText(s string) Part { return Part{Type: "output_text", Text: s, Annotations: &[]any{}} }

// itemConverter turns stored messages into items, in order, remembering
// which tool call each result answers and which response is open.
type itemConverter struct {
	ids      idSpace
	model    string // the agent's name, on model-produced items
	resp     string
	prevRole message.Role
	last     message.Message   // the last message added
	calls    map[string][2]int // tool call id -> (message, ordinal)
}

func newItemConverter(session, model string) *itemConverter {
	return &itemConverter{ids: idsOf(session), model: model, calls: map[string][2]int{}}
}

// itemsOf converts the messages of session id.
func itemsOf(id string, msgs []message.Message, model string) []Item {
	c := newItemConverter(id, model)
	var out []Item
	for i, m := range msgs {
		out = append(out, c.add(i, m)...)
	}
	return out
}

// opens reports whether m, the message after one of role prev, starts a
// response.
func opens(m message.Message, prev message.Role) bool {
	return m.Role == message.RoleUser && prev != message.RoleTool
}

// add converts m, the message at position i (messages come in order).
func (c *itemConverter) add(i int, m message.Message) []Item {
	if opens(m, c.prevRole) {
		c.resp = c.ids.response(i)
	}
	c.prevRole, c.last = m.Role, m
	switch m.Role {
	case message.RoleUser:
		return c.user(i, m)
	case message.RoleAssistant:
		return c.assistant(i, m)
	case message.RoleTool:
		return c.toolResults(i, m)
	}
	return nil
}

func (c *itemConverter) user(i int, m message.Message) []Item {
	if s, ok := compactionSummary(m); ok {
		return []Item{{ID: c.ids.compaction(i), ResponseID: c.resp, Type: "compaction", Status: "completed", Summary: s}}
	}
	it := Item{ID: c.ids.message(i), ResponseID: c.resp, Type: "message", Role: "user", Status: "completed"}
	for _, b := range m.Content {
		it.Content = append(it.Content, inputPart(b))
	}
	return []Item{it}
}

// inputPart is a user's content part as the client sent it: a session
// file by its file_id (input_image, input_file: the client has the bytes
// at .../resources/files/{file_id}/content), else the text or the image.
func inputPart(b message.Block) Part {
	switch {
	case b.Type == message.TypeImage && b.FileID != "":
		return Part{Type: "input_image", FileID: b.FileID}
	case b.Type == message.TypeImage:
		return Part{Type: "input_image", ImageURL: "data:" + b.MimeType + ";base64," + b.Data}
	case b.FileID != "":
		return Part{Type: "input_file", FileID: b.FileID, Filename: fileName(b.Text)}
	}
	return Part{Type: "input_text", Text: b.Text}
}

// fileName is the name in the header of a text file's block
// (`<file name="...">`, as fileBlock writes it).
func fileName(text string) string {
	head, _, _ := strings.Cut(text, "\n")
	quoted, ok := strings.CutPrefix(head, "<file name=")
	if !ok {
		return ""
	}
	name, err := strconv.Unquote(strings.TrimSuffix(quoted, ">"))
	if err != nil {
		return ""
	}
	return name
}

func (c *itemConverter) assistant(i int, m message.Message) []Item {
	var out []Item
	var thinking, text strings.Builder
	summary := false
	for _, b := range m.Content {
		switch b.Type {
		case message.TypeThinking:
			thinking.WriteString(b.Thinking)
			// The Responses wire's thinking is a summary of the reasoning.
			summary = summary || b.Origin == responses.Origin
		case message.TypeText:
			text.WriteString(b.Text)
		}
	}
	if thinking.Len() > 0 {
		it := Item{ID: c.ids.reasoning(i), ResponseID: c.resp, Model: c.model, Type: "reasoning", Status: "completed",
			Content: []Part{{Type: "reasoning_text", Text: thinking.String()}}}
		if summary {
			it.Content, it.Summary = nil, []Part{{Type: "summary_text", Text: thinking.String()}}
		}
		out = append(out, it)
	}
	if text.Len() > 0 {
		out = append(out, Item{ID: c.ids.message(i), ResponseID: c.resp, Model: c.model, Type: "message", Role: "assistant",
			Status: "completed", Content: []Part{outputText(text.String())}})
	}
	k := 0
	for _, b := range m.Content {
		if b.Type != message.TypeToolUse {
			continue
		}
		args := b.Arguments
		c.calls[b.ID] = [2]int{i, k}
		out = append(out, Item{ID: c.ids.call(i, k), ResponseID: c.resp, Model: c.model, Type: "function_call",
			Status: "completed", Name: b.Name, Arguments: &args, CallID: b.ID})
		k++
	}
	return out
}

func (c *itemConverter) toolResults(i int, m message.Message) []Item {
	var out []Item
	for j, b := range m.Content {
		if b.Type != message.TypeToolResult {
			continue
		}
		id := c.ids.strayOutput(i, j) // a result whose call is not in view
		if at, ok := c.calls[b.ToolCallID]; ok {
			id = c.ids.output(at[0], at[1])
		}
		output := b.Content
		out = append(out, Item{ID: id, ResponseID: c.resp, Type: "function_call_output", Status: "completed",
			CallID: b.ToolCallID, Output: &output})
	}
	return out
}

// responseEnd returns the position just past response resp's last message
// (where a fork "up to" it cuts), and whether msgs, session id's messages,
// hold that response.
func responseEnd(id string, msgs []message.Message, resp string) (int, bool) {
	s := idsOf(id)
	start := -1
	for i := range msgs {
		if !startsResponse(msgs, i) {
			continue
		}
		if start >= 0 {
			return i, true
		}
		if s.response(i) == resp {
			start = i
		}
	}
	return len(msgs), start >= 0
}

// compactionSummary is the summary a compaction message holds.
func compactionSummary(m message.Message) (string, bool) {
	if !m.Compaction {
		return "", false
	}
	return m.JoinText(), true
}
