package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// Wire shapes of the Gemini generateContent API (v1beta), request and
// streamed response. Only what openheim sends or reads is modelled.

type gmRequest struct {
	Contents          []gmContent         `json:"contents"`
	SystemInstruction *gmContent          `json:"systemInstruction,omitempty"`
	Tools             []gmTool            `json:"tools,omitempty"`
	GenerationConfig  *gmGenerationConfig `json:"generationConfig,omitempty"`
}

type gmContent struct {
	Role  string   `json:"role,omitempty"`
	Parts []gmPart `json:"parts"`
}

type gmPart struct {
	Text             string              `json:"text,omitempty"`
	Thought          bool                `json:"thought,omitempty"`
	InlineData       *gmBlob             `json:"inlineData,omitempty"`
	FunctionCall     *gmFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *gmFunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string              `json:"thoughtSignature,omitempty"`
}

// gmPartFields is gmPart without its MarshalJSON.
type gmPartFields gmPart

// MarshalJSON writes "text" even when empty on a part that holds only a
// thoughtSignature: the API sends signatures so (the last part of a
// streamed answer is often {"text":"","thoughtSignature":...}) and a part
// must hold some data.
func (p gmPart) MarshalJSON() ([]byte, error) {
	if p.Text == "" && p.ThoughtSignature != "" && p.InlineData == nil && p.FunctionCall == nil && p.FunctionResponse == nil {
		return json.Marshal(struct {
			Text string `json:"text"`
			gmPartFields
		}{"", gmPartFields(p)})
	}
	return json.Marshal(gmPartFields(p))
}

type gmBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type gmFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type gmFunctionResponse struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name"`
	Response map[string]string `json:"response"`
}

type gmTool struct {
	FunctionDeclarations []gmFunctionDecl `json:"functionDeclarations"`
}

type gmFunctionDecl struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type gmGenerationConfig struct {
	MaxOutputTokens int               `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *gmThinkingConfig `json:"thinkingConfig,omitempty"`
}

type gmThinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
	ThinkingBudget  int  `json:"thinkingBudget"`
}

// gmResponse is one streamed GenerateContentResponse, or an error object.
type gmResponse struct {
	Candidates     []gmCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *gmUsage        `json:"usageMetadata"`
	Error         json.RawMessage `json:"error"`
}

type gmCandidate struct {
	Content *struct {
		Parts []gmPart `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
	Index        int    `json:"index"`
}

type gmUsage struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
}

type gmError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// buildGMRequest converts a Request into the wire request. maxTokens is the
// effective cap (0: the model's default); thinking and budget are
// Config.Thinking and Config.ThinkingBudget.
func buildGMRequest(req *llm.Request, maxTokens int, thinking string, budget int) (*gmRequest, error) {
	out := &gmRequest{Contents: []gmContent{}}
	var system []gmPart
	if req.System != "" {
		system = append(system, gmPart{Text: req.System})
	}
	// Tool results must name their function; older histories may lack it.
	names := map[string]string{}
	for _, m := range req.Messages {
		for _, b := range m.ToolUses() {
			names[b.ID] = b.Name
		}
	}
	for _, m := range req.Messages {
		if m.Role == message.RoleSystem {
			for _, b := range m.Content {
				if b.Type == message.TypeText && b.Text != "" {
					system = append(system, gmPart{Text: b.Text})
				}
			}
			continue
		}
		out.Contents = appendGMContent(out.Contents, m, names)
	}
	if len(system) > 0 {
		out.SystemInstruction = &gmContent{Parts: system}
	}
	if len(req.Tools) > 0 {
		decls := make([]gmFunctionDecl, 0, len(req.Tools))
		for _, t := range req.Tools {
			params, err := geminiSchema(t.Parameters)
			if err != nil {
				return nil, fmt.Errorf("llm: tool %q: parameters: %w", t.Name, err)
			}
			decls = append(decls, gmFunctionDecl{Name: t.Name, Description: t.Description, Parameters: params})
		}
		out.Tools = []gmTool{{FunctionDeclarations: decls}}
	}
	gc := &gmGenerationConfig{MaxOutputTokens: maxTokens}
	tc, err := thinkingConfig(thinking, req.Model, budget)
	if err != nil {
		return nil, err
	}
	gc.ThinkingConfig = tc
	if gc.MaxOutputTokens > 0 || gc.ThinkingConfig != nil {
		out.GenerationConfig = gc
	}
	return out, nil
}

// appendGMContent converts one message, merging it into the previous content
// when both have the same wire role (Gemini wants user and model to alternate).
func appendGMContent(out []gmContent, m message.Message, names map[string]string) []gmContent {
	role := "user"
	if m.Role == message.RoleAssistant {
		role = "model"
	}
	var parts []gmPart
	for _, b := range m.Content {
		switch b.Type {
		case message.TypeText:
			// A signature came on the text part it goes back on, even
			// an empty one (see gmPart.MarshalJSON).
			p := gmPart{Text: b.Text}
			if b.Signature != nil && role == "model" {
				p.ThoughtSignature = *b.Signature
			}
			if p.Text != "" || p.ThoughtSignature != "" {
				parts = append(parts, p)
			}
		case message.TypeImage:
			parts = append(parts, gmPart{InlineData: &gmBlob{MimeType: b.MimeType, Data: b.Data}})
		case message.TypeThinking:
			// Gemini reads no unsigned thought text back; a signed thought is
			// returned as the thought part it came from, signature included.
			if b.Signature != nil && *b.Signature != "" && role == "model" && b.Origin == "" {
				parts = append(parts, gmPart{Thought: true, Text: b.Thinking, ThoughtSignature: *b.Signature})
			}
		case message.TypeToolUse:
			fc := &gmFunctionCall{ID: b.ID, Name: b.Name, Args: geminiArgs(b.Arguments)}
			p := gmPart{FunctionCall: fc}
			if b.Signature != nil {
				p.ThoughtSignature = *b.Signature
			}
			parts = append(parts, p)
		case message.TypeToolResult:
			name := b.ToolName
			if name == "" {
				name = names[b.ToolCallID]
			}
			resp := map[string]string{"content": b.Content}
			if b.IsError {
				resp = map[string]string{"error": b.Content}
			}
			p := gmPart{FunctionResponse: &gmFunctionResponse{ID: b.ToolCallID, Name: name, Response: resp}}
			if role == "model" {
				// A result filed under the assistant still answers as user.
				out = appendGMParts(out, "user", []gmPart{p})
				continue
			}
			parts = append(parts, p)
		}
		// Redacted thinking is Anthropic's; it means nothing here.
	}
	return appendGMParts(out, role, parts)
}

func appendGMParts(out []gmContent, role string, parts []gmPart) []gmContent {
	if len(parts) == 0 {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Role == role {
		out[n-1].Parts = append(out[n-1].Parts, parts...)
		return out
	}
	return append(out, gmContent{Role: role, Parts: parts})
}

// geminiArgs is a tool call's argument string as the JSON object Gemini
// wants. Arguments that are empty or not an object (a call cut short by
// max_tokens, or from another provider) become {}.
func geminiArgs(s string) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return buf.Bytes()
}

// geminiSchema converts a JSON schema into the OpenAPI subset Gemini accepts
// for function parameters: keys it rejects ("$schema", "additionalProperties",
// ...) are dropped, local $refs inlined, a type list becomes one type plus
// nullable, const becomes a one-value enum. A schema without properties is
// sent as no parameters at all, since Gemini rejects an empty OBJECT.
func geminiSchema(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	defs := map[string]any{}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := root[k].(map[string]any); ok {
			for name, v := range d {
				defs["#/"+k+"/"+name] = v
			}
		}
	}
	out := cleanSchema(root, defs, 0)
	if props, _ := out["properties"].(map[string]any); len(props) == 0 {
		return nil, nil
	}
	return out, nil
}

// geminiSchemaKeys are the Schema fields Gemini knows; properties, items and
// anyOf are handled apart because they hold schemas.
var geminiSchemaKeys = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "required": true, "minItems": true, "maxItems": true, "minimum": true,
	"maximum": true, "minLength": true, "maxLength": true, "pattern": true, "example": true,
	"default": true, "propertyOrdering": true, "minProperties": true, "maxProperties": true,
}

// geminiFormats are the formats the Gemini API accepts; others fail the call.
var geminiFormats = map[string]bool{"enum": true, "date-time": true, "int32": true, "int64": true, "float": true, "double": true}

func cleanSchema(s map[string]any, defs map[string]any, depth int) map[string]any {
	if depth > 16 {
		return map[string]any{}
	}
	if ref, ok := s["$ref"].(string); ok {
		if d, ok := defs[ref].(map[string]any); ok {
			s = d
		} else {
			return map[string]any{}
		}
	}
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "properties":
			if props, ok := v.(map[string]any); ok && len(props) > 0 {
				clean := make(map[string]any, len(props))
				for name, p := range props {
					if ps, ok := p.(map[string]any); ok {
						clean[name] = cleanSchema(ps, defs, depth+1)
					}
				}
				out[k] = clean
			}
		case "items":
			if is, ok := v.(map[string]any); ok {
				out[k] = cleanSchema(is, defs, depth+1)
			}
		case "anyOf", "oneOf":
			if list, ok := v.([]any); ok {
				var clean []any
				for _, e := range list {
					if es, ok := e.(map[string]any); ok {
						clean = append(clean, cleanSchema(es, defs, depth+1))
					}
				}
				if len(clean) > 0 {
					out["anyOf"] = clean
				}
			}
		case "type":
			if list, ok := v.([]any); ok {
				for _, t := range list {
					if t == "null" {
						out["nullable"] = true
					} else if _, set := out["type"]; !set {
						out["type"] = t
					}
				}
			} else {
				out[k] = v
			}
		case "const":
			out["enum"] = []any{v}
		case "format":
			if f, _ := v.(string); geminiFormats[f] {
				out[k] = v
			}
		default:
			if geminiSchemaKeys[k] {
				out[k] = v
			}
		}
	}
	if enum, ok := out["enum"].([]any); ok {
		// Gemini's enum is a list of strings.
		strs := make([]any, len(enum))
		for i, e := range enum {
			if s, ok := e.(string); ok {
				strs[i] = s
			} else {
				b, _ := json.Marshal(e)
				strs[i] = strings.Trim(string(b), `"`)
			}
		}
		out["enum"] = strs
	}
	return out
}
