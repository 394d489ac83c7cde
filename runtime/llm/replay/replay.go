// Package replay is the cassette wire: a Provider that plays recorded model
// replies from a file (see CASSETTE.md one directory up), and the Recorder
// that writes them from a live provider.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/transport"
	"github.com/openheim/openheim/runtime/message"
)

// A cassette is a JSON file of recorded model replies that the replay
// provider plays back, so a whole pipeline (agent loop, tools, session
// store) runs offline and deterministically. Format (see CASSETTE.md):
//
//	{"version": 1,
//	 "replies": [
//	   {"request": {"messages": [ ...message.Message... ]},   // optional check
//	    "thinking": "...", "text": "...",
//	    "tool_calls": [{"id": "call_1", "name": "list_dir", "arguments": {"path": "."}}],
//	    "stop_reason": "tool_use",                              // optional
//	    "usage": { ...message.Usage... }}]}                     // optional
//
// Each call consumes the next reply. When a reply has a request, the live
// Request.Messages must equal it block for block (compared as JSON), except
// that a recorded tool_result content of exactly "*" matches any content.

// Cassette is a decoded cassette file.
type Cassette struct {
	Version int             `json:"version"`
	Replies []CassetteReply `json:"replies"`
}

// CassetteReply is one recorded model reply.
type CassetteReply struct {
	Request   *CassetteRequest   `json:"request,omitempty"`
	Text      string             `json:"text,omitempty"`
	Thinking  string             `json:"thinking,omitempty"`
	ToolCalls []CassetteToolCall `json:"tool_calls,omitempty"`
	// Content, when set, is the reply's blocks exactly as the provider gave
	// them (thinking with signatures, redacted thinking, text, tool_use):
	// what `--record` writes, so a replayed session is byte-identical to the
	// recorded one. It excludes Text, Thinking and ToolCalls.
	Content []message.Block `json:"content,omitempty"`
	// Stream, when set, is the exact sequence of streamed fragments (what
	// `--record` saw), replayed as is instead of splitting text into words.
	Stream     []CassetteDelta  `json:"stream,omitempty"`
	StopReason event.StopReason `json:"stop_reason,omitempty"` // default: tool_use with tool calls, else end_turn
	Usage      message.Usage    `json:"usage"`
}

// CassetteDelta is one streamed fragment: text, or thinking.
type CassetteDelta struct {
	Text     string `json:"text,omitempty"`
	Thinking string `json:"thinking,omitempty"`
}

// CassetteRequest is the conversation the reply was recorded for.
type CassetteRequest struct {
	Messages []message.Message `json:"messages"`
}

// CassetteToolCall is one recorded tool call. Arguments is a JSON object or
// a JSON string holding the argument text; LoadCassette normalises it to the
// object text.
type CassetteToolCall struct {
	ID        string          `json:"id,omitempty"` // default: call_<reply>_<n>, stable across runs
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Wildcard is the recorded tool_result content that matches any content.
const Wildcard = "*"

// LoadCassette reads and validates a cassette file.
func LoadCassette(path string) (*Cassette, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt field would silently change the reply
	var c Cassette
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("replay: cassette %s: %w", path, err)
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("replay: cassette %s: version %d, want 1", path, c.Version)
	}
	for i := range c.Replies {
		r := &c.Replies[i]
		switch r.StopReason {
		case "", event.StopEndTurn, llm.StopToolUse, event.StopMaxTokens, event.StopRefusal, llm.StopPauseTurn:
		default:
			return nil, fmt.Errorf("replay: cassette %s: reply %d: unknown stop_reason %q", path, i+1, r.StopReason)
		}
		if len(r.Content) > 0 && (r.Text != "" || r.Thinking != "" || len(r.ToolCalls) > 0) {
			return nil, fmt.Errorf("replay: cassette %s: reply %d: content excludes text, thinking and tool_calls", path, i+1)
		}
		for j := range r.ToolCalls {
			tc := &r.ToolCalls[j]
			if tc.Name == "" {
				return nil, fmt.Errorf("replay: cassette %s: reply %d tool call %d has no name", path, i+1, j+1)
			}
			args, err := argumentText(tc.Arguments)
			if err != nil {
				return nil, fmt.Errorf("replay: cassette %s: reply %d tool call %d arguments: %w", path, i+1, j+1, err)
			}
			tc.Arguments = json.RawMessage(args)
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%d_%d", i+1, j+1)
			}
		}
	}
	return &c, nil
}

// argumentText turns recorded arguments (object or string) into the JSON
// argument text a model would have sent.
func argumentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if !json.Valid([]byte(s)) {
			return "", fmt.Errorf("string %q is not JSON", transport.Truncate(s, 60))
		}
		return s, nil
	}
	if raw[0] != '{' {
		return "", fmt.Errorf("want a JSON object or string, got %s", transport.Truncate(string(raw), 60))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	return buf.String(), nil
}

type replayProvider struct {
	path string
	c    *Cassette
	mu   sync.Mutex
	next int
}

// New returns a Provider that plays the cassette at path.
func New(path string) (llm.Provider, error) {
	c, err := LoadCassette(path)
	if err != nil {
		return nil, err
	}
	return &replayProvider{path: path, c: c}, nil
}

// Stream implements llm.Provider.
func (p *replayProvider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	p.mu.Lock()
	n := p.next
	p.next++
	p.mu.Unlock()
	if n >= len(p.c.Replies) {
		return nil, fmt.Errorf("replay: cassette %s has no reply #%d", p.path, n+1)
	}
	rep := p.c.Replies[n]
	if rep.Request != nil {
		var live []message.Message
		if req != nil {
			live = req.Messages
		}
		if why := matchMessages(rep.Request.Messages, live); why != "" {
			return nil, fmt.Errorf("replay: request %d does not match cassette %s: %s", n+1, p.path, why)
		}
	}
	resp := &llm.Response{Usage: rep.Usage, StopReason: rep.StopReason, Content: rep.blocks()}
	for _, d := range rep.deltas(resp.Content) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if onDelta != nil {
			if err := onDelta(d); err != nil {
				return nil, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if resp.StopReason == "" {
		resp.StopReason = event.StopEndTurn
		if len(rep.ToolCalls) > 0 || len(message.Message{Content: resp.Content}.ToolUses()) > 0 {
			resp.StopReason = llm.StopToolUse
		}
	}
	return resp, nil
}

// deltas is what the reply streams: the recorded fragments, else the text
// and thinking of its blocks cut into word-sized pieces; then the start of
// each tool call, as a live wire announces it.
func (rep CassetteReply) deltas(content []message.Block) []llm.Delta {
	out := rep.textDeltas(content)
	for i, b := range (message.Message{Content: content}).ToolUses() {
		out = append(out, llm.ToolCallDelta(i, b.ID, b.Name))
	}
	return out
}

// textDeltas are the text and thinking fragments the reply streams.
func (rep CassetteReply) textDeltas(content []message.Block) []llm.Delta {
	var out []llm.Delta
	if len(rep.Stream) > 0 {
		for _, d := range rep.Stream {
			if d.Thinking != "" {
				out = append(out, llm.Delta{Kind: llm.DeltaThinking, Text: d.Thinking})
			} else {
				out = append(out, llm.Delta{Kind: llm.DeltaText, Text: d.Text})
			}
		}
		return out
	}
	for _, b := range content {
		kind, text := llm.DeltaText, b.Text
		switch b.Type {
		case message.TypeThinking:
			kind, text = llm.DeltaThinking, b.Thinking
		case message.TypeText:
		default:
			continue
		}
		for _, w := range splitWords(text) {
			out = append(out, llm.Delta{Kind: kind, Text: w})
		}
	}
	return out
}

// blocks is the reply's content: Content verbatim, or the blocks the short
// form (thinking, text, tool calls) stands for.
func (rep CassetteReply) blocks() []message.Block {
	if len(rep.Content) > 0 {
		return append([]message.Block(nil), rep.Content...)
	}
	var out []message.Block
	if rep.Thinking != "" {
		out = append(out, message.Block{Type: message.TypeThinking, Thinking: rep.Thinking})
	}
	if rep.Text != "" {
		out = append(out, message.Text(rep.Text))
	}
	for _, tc := range rep.ToolCalls {
		out = append(out, message.Block{Type: message.TypeToolUse, ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)})
	}
	return out
}

// splitWords cuts s after each run of whitespace, so consumers see a few
// word-sized deltas whose concatenation is exactly s.
func splitWords(s string) []string {
	var out []string
	start, inSpace := 0, false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if inSpace && !sp {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// matchMessages explains the first difference between the recorded and the
// live conversation, or returns "" when they match. Numbers are 1-based.
func matchMessages(rec, live []message.Message) string {
	if len(rec) != len(live) {
		return fmt.Sprintf("recorded %d messages, got %d", len(rec), len(live))
	}
	for i := range rec {
		r, l := rec[i], live[i]
		if r.Role != l.Role {
			return fmt.Sprintf("message %d role: recorded %q, got %q", i+1, r.Role, l.Role)
		}
		if len(r.Content) != len(l.Content) {
			return fmt.Sprintf("message %d (%s): recorded %d blocks, got %d", i+1, r.Role, len(r.Content), len(l.Content))
		}
		for j := range r.Content {
			if why := matchBlock(r.Content[j], l.Content[j]); why != "" {
				return fmt.Sprintf("message %d (%s) block %d %s", i+1, r.Role, j+1, why)
			}
		}
	}
	return ""
}

// matchBlock compares two blocks by their JSON fields and names the first
// differing field.
func matchBlock(rec, live message.Block) string {
	if rec.Type == message.TypeToolResult && rec.Content == Wildcard && live.Type == message.TypeToolResult {
		live.Content = Wildcard // real tools on real files may vary
	}
	if rec.Type == message.TypeToolUse && live.Type == message.TypeToolUse {
		// Argument text is compared as JSON: a hand-written cassette may
		// space it differently from what the reply produced.
		rec.Arguments, live.Arguments = compactJSON(rec.Arguments), compactJSON(live.Arguments)
	}
	rm, err1 := blockFields(rec)
	lm, err2 := blockFields(live)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("cannot be compared: %v %v", err1, err2)
	}
	keys := make([]string, 0, len(rm)+len(lm))
	for k := range rm {
		keys = append(keys, k)
	}
	for k := range lm {
		if _, ok := rm[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	// type first: once it differs, the other fields are noise.
	sort.SliceStable(keys, func(a, b int) bool { return keys[a] == "type" && keys[b] != "type" })
	for _, k := range keys {
		rv, lv := rm[k], lm[k]
		if !bytes.Equal(rv, lv) {
			return fmt.Sprintf("%s: recorded %s, got %s", k, excerpt(rv), excerpt(lv))
		}
	}
	return ""
}

func compactJSON(s string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return s
	}
	return buf.String()
}

func blockFields(b message.Block) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(data, &m)
}

// excerpt shows a JSON value briefly: strings unescaped then re-quoted after
// truncation, so a long file listing does not fill the terminal.
func excerpt(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		const n = 80
		if len(s) > n {
			cut := n
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			return strconv.Quote(s[:cut]) + "…"
		}
		return strconv.Quote(s)
	}
	return transport.Truncate(string(v), 80)
}
