package sessionsapi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestDeltaFrameMatchesJSON: the delta frames written directly are the
// bytes the map encoding gave, whatever the text holds, and the data line
// is redacted.
func TestDeltaFrameMatchesJSON(t *testing.T) {
	texts := []string{"a typical token ", "", `quote " back \ slash`, "<b>&amp;</b>", "tab\tnl\ncr\r\x00\x1f",
		"caf\xc3\xa9 \xff bad", "line\u2028sep\u2029", "emoji 😀"}
	none := func(b []byte) []byte { return b }
	for _, text := range texts {
		for _, c := range []struct {
			name, before, after string
			fields              map[string]any
		}{
			{"response.output_text.delta", `"content_index":0,`, "", map[string]any{"content_index": 0}},
			{"response.reasoning_text.delta", `"content_index":0,`, "", map[string]any{"content_index": 0}},
			{"response.reasoning_summary_text.delta", "", `,"summary_index":0`, map[string]any{"summary_index": 0}},
		} {
			c.fields["item_id"], c.fields["output_index"], c.fields["delta"], c.fields["type"] = "msg_x_3", 2, text, c.name
			data, _ := json.Marshal(c.fields)
			want := "event: " + c.name + "\ndata: " + string(data) + "\n\n"
			if got := string(deltaFrame(c.name, c.before, "msg_x_3", 2, text, c.after, none)); got != want {
				t.Errorf("%s %q:\n got %s\nwant %s", c.name, text, got, want)
			}
		}
	}
	mask := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("sk-secret"), []byte("[REDACTED]")) }
	got := string(deltaFrame("response.output_text.delta", `"content_index":0,`, "m", 0, "key sk-secret here", "", mask))
	if want := `"delta":"key [REDACTED] here"`; !bytes.Contains([]byte(got), []byte(want)) || bytes.Contains([]byte(got), []byte("sk-secret")) {
		t.Errorf("not redacted: %s", got)
	}
}
