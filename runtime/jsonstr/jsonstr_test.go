package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Append writes what encoding/json writes, with HTML escaping and without.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "<b> & </b>", "tab\tnl\ncr\r\b\f\x01\x1f",
		"ünïcödé ✓", "bad \xff utf8 \xc3", "line\u2028sep\u2029", "\x00"} {
		want, _ := json.Marshal(s)
		if got := Append(nil, s, true); !bytes.Equal(got, want) {
			t.Errorf("html %q: %s, want %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got := Append(nil, s, false); !bytes.Equal(got, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
			t.Errorf("no html %q: %s, want %s", s, got, buf.Bytes())
		}
	}
}
