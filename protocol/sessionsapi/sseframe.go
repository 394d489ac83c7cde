package sessionsapi

import (
	"strconv"

	"github.com/openheim/openheim/runtime/jsonstr"
)

// A streamed text delta is nearly every frame of a turn. It is written
// directly rather than through a map and encoding/json (sorted keys,
// reflection, a copy per layer): one allocation, the bytes exactly what
// json.Marshal of the map gives (a test holds them to it).

// deltaFrame is the SSE frame of a text delta of item id at output index,
// with extra (e.g. `"summary_index":0,`) sorted among the fields as
// encoding/json sorts a map's keys; redact sees the data line.
func deltaFrame(name, extraBefore, id string, index int, text, extraAfter string, redact func([]byte) []byte) []byte {
	n := len(name)*2 + len(id) + len(text) + len(extraBefore) + len(extraAfter) + 96
	b := make([]byte, 0, n)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	start := len(b)
	b = append(b, '{')
	b = append(b, extraBefore...)
	b = append(b, `"delta":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"item_id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, extraAfter...)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, name)
	b = append(b, '}')
	if data := redact(b[start:]); &data[0] != &b[start] {
		b = append(b[:start], data...) // a secret was masked
	}
	return append(b, "\n\n"...)
}

// appendJSONString appends s quoted as encoding/json quotes it (HTML
// characters escaped, invalid UTF-8 replaced, U+2028 and U+2029 escaped).
func appendJSONString(b []byte, s string) []byte { return jsonstr.Append(b, s, true) }
