package fschannel

import (
	"strings"
	"testing"
)

func TestInvalidPayloads(t *testing.T) {
	const variants = "expected one of `watch`, `unwatch`, `list`, `read`, `write`, `mkdir`, `delete`, `rename`"
	tests := []struct {
		name, raw, want string
		id              any // echoed id, nil when none
	}{
		{"empty", ``, "EOF while parsing a value", nil},
		{"string", `"read"`, `invalid type: string "read", expected internally tagged enum FsRequest`, nil},
		{"array", `[{"action":"read"}]`, "invalid type: sequence, expected internally tagged enum FsRequest", nil},
		{"number", `42`, "invalid type: integer `42`, expected internally tagged enum FsRequest", nil},
		{"null", `null`, "invalid type: null, expected internally tagged enum FsRequest", nil},
		{"empty object", `{}`, "missing field `action`", nil},
		{"no action", `{"path":"a","id":4}`, "missing field `action`", float64(4)},
		{"unknown action", `{"action":"foo"}`, "unknown variant `foo`, " + variants, nil},
		{"action case matters", `{"action":"Read","id":"r"}`, "unknown variant `Read`, " + variants, "r"},
		{"action number", `{"action":5}`, "invalid type: integer `5`, expected variant identifier", nil},
		{"action null", `{"action":null}`, "invalid type: null, expected variant identifier", nil},
		{"read without path", `{"action":"read"}`, "missing field `path`", nil},
		{"watch without path", `{"action":"watch"}`, "missing field `path`", nil},
		{"list without path", `{"action":"list","recursive":true}`, "missing field `path`", nil},
		{"mkdir without path", `{"action":"mkdir"}`, "missing field `path`", nil},
		{"delete without path", `{"action":"delete"}`, "missing field `path`", nil},
		{"write without path", `{"action":"write","content":"x"}`, "missing field `path`", nil},
		{"write without content", `{"action":"write","path":"a"}`, "missing field `content`", nil},
		{"rename without from", `{"action":"rename","to":"b"}`, "missing field `from`", nil},
		{"rename without to", `{"action":"rename","from":"a"}`, "missing field `to`", nil},
		{"path number", `{"action":"read","path":5}`, "invalid type: integer `5`, expected a string for field `path`", nil},
		{"path null", `{"action":"read","path":null}`, "invalid type: null, expected a string for field `path`", nil},
		{"path float", `{"action":"read","path":1.5}`, "invalid type: floating point `1.5`, expected a string for field `path`", nil},
		{"path array", `{"action":"read","path":["a"]}`, "invalid type: sequence, expected a string for field `path`", nil},
		{"content object", `{"action":"write","path":"a","content":{}}`, "invalid type: map, expected a string for field `content`", nil},
		{"to bool", `{"action":"rename","from":"a","to":true}`, "invalid type: boolean `true`, expected a string for field `to`", nil},
		{"recursive string", `{"action":"list","path":"","recursive":"yes"}`, `invalid type: string "yes", expected a boolean for field ` + "`recursive`", nil},
		{"recursive number", `{"action":"list","path":"","recursive":1,"id":2}`, "invalid type: integer `1`, expected a boolean for field `recursive`", float64(2)},
	}
	c, r := newChannel(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := call(t, c, r, tt.raw)
			want := map[string]any{"type": "error", "message": "Invalid payload: " + tt.want}
			if tt.id != nil {
				want["id"] = tt.id
			}
			if len(got) != len(want) || got["type"] != want["type"] || got["message"] != want["message"] || got["id"] != want["id"] {
				t.Errorf("%s:\n got %v\nwant %v", tt.raw, got, want)
			}
		})
	}
	// Not JSON at all (the server normally rejects it earlier).
	got := call(t, c, r, `{"action":`)
	if msg, _ := got["message"].(string); got["type"] != "error" || !strings.HasPrefix(msg, "Invalid payload: ") || len(msg) <= len("Invalid payload: ") {
		t.Errorf("malformed JSON: %v", got)
	}
}

// Fields an action does not use are ignored, as serde does.
func TestExtraFieldsIgnored(t *testing.T) {
	c, r := newChannel(t)
	got := call(t, c, r, `{"action":"unwatch","path":5,"extra":[1]}`)
	if len(got) != 1 || got["type"] != "unwatched" {
		t.Errorf("got %v", got)
	}
}

func TestUnexpectedExcerpt(t *testing.T) {
	long := `"` + strings.Repeat("é", 100) + `"`
	got := unexpected([]byte(long))
	if !strings.HasSuffix(got, "…") || len(got) > 80 || !strings.HasPrefix(got, `string "`) {
		t.Errorf("unexpected(long) = %q", got)
	}
}
