package sessionsapi

import (
	"strconv"
	"unicode/utf8"
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes it (HTML
// characters escaped, invalid UTF-8 replaced, U+2028 and U+2029 escaped).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
