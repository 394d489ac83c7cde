package config

// A line scanner for TOML, just enough to find where tables start and end
// (headers, keys, multi-line strings and arrays) for the edits in mcpedit.go.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

type lineKind uint8

const (
	lineBlank    lineKind = iota
	lineComment           // only a comment
	lineHeader            // [table] or [[array of tables]], maybe with a comment
	lineKeyValue          // the first line of key = value
	lineCont              // a further line of a multi-line string, array or inline table
)

// tomlLine is one physical line of a TOML file.
type tomlLine struct {
	start, end int // data[start:end], including the line ending
	kind       lineKind
	key        toml.Key // of headers and key/value lines
	array      bool     // [[...]]
}

// scanTOML splits a TOML document that toml.Decode accepted into lines and
// tells what each is. It follows strings (including multi-line ones),
// arrays, inline tables and comments, so that text looking like a header
// inside a value is not taken for one.
func scanTOML(data []byte) ([]tomlLine, error) {
	var lines []tomlLine
	p := 0
	for p < len(data) {
		start := p
		q := p
		if start == 0 {
			q = bomLen(data)
		}
		q = skipBlank(data, q)
		switch {
		case q == len(data) || data[q] == '\n' || data[q] == '\r':
			p = lineEnd(data, q)
			lines = append(lines, tomlLine{start: start, end: p, kind: lineBlank})
		case data[q] == '#':
			p = lineEnd(data, q)
			lines = append(lines, tomlLine{start: start, end: p, kind: lineComment})
		case data[q] == '[':
			key, array, err := parseHeader(data, q)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", len(lines)+1, err)
			}
			p = lineEnd(data, q)
			lines = append(lines, tomlLine{start: start, end: p, kind: lineHeader, key: key, array: array})
		default:
			key, eq, err := parseKey(data, q, '=')
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", len(lines)+1, err)
			}
			p = scanValue(data, eq+1)
			lines = append(lines, tomlLine{start: start, end: lineEnd(data, start), kind: lineKeyValue, key: key})
			for s := lines[len(lines)-1].end; s < p; s = lines[len(lines)-1].end {
				lines = append(lines, tomlLine{start: s, end: lineEnd(data, s), kind: lineCont})
			}
		}
	}
	return lines, nil
}

// bomLen is the length of the byte order mark the TOML decoder skips: UTF-8,
// or a UTF-16 one it tolerates.
func bomLen(data []byte) int {
	switch {
	case bytes.HasPrefix(data, []byte("\xff\xfe")), bytes.HasPrefix(data, []byte("\xfe\xff")):
		return 2
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		return 3
	}
	return 0
}

func skipBlank(data []byte, p int) int {
	for p < len(data) && (data[p] == ' ' || data[p] == '\t') {
		p++
	}
	return p
}

// lineEnd is the offset just after the line ending at or after p.
func lineEnd(data []byte, p int) int {
	if i := bytes.IndexByte(data[p:], '\n'); i >= 0 {
		return p + i + 1
	}
	return len(data)
}

// parseHeader reads the key of the header starting at data[p] == '['.
func parseHeader(data []byte, p int) (toml.Key, bool, error) {
	p++
	array := p < len(data) && data[p] == '['
	if array {
		p++
	}
	key, end, err := parseKey(data, p, ']')
	if err != nil {
		return nil, false, err
	}
	if array && (end+1 >= len(data) || data[end+1] != ']') {
		return nil, false, errors.New("malformed table header")
	}
	return key, array, nil
}

// parseKey reads the dotted key at data[p] up to the byte stop ('=' after
// the key of a key/value line, ']' in a header) and returns it with the
// offset of stop.
func parseKey(data []byte, p int, stop byte) (toml.Key, int, error) {
	var key toml.Key
	for {
		part, np, err := parseKeyPart(data, skipBlank(data, p))
		if err != nil {
			return nil, p, err
		}
		key = append(key, part)
		p = skipBlank(data, np)
		switch {
		case p < len(data) && data[p] == '.':
			p++
		case p < len(data) && data[p] == stop:
			return key, p, nil
		default:
			return nil, p, fmt.Errorf("malformed key %s", key)
		}
	}
}

// parseKeyPart reads one bare, "basic" or 'literal' key at data[p].
func parseKeyPart(data []byte, p int) (string, int, error) {
	if p >= len(data) {
		return "", p, errors.New("unexpected end of file in a key")
	}
	switch data[p] {
	case '"':
		end, ok := skipBasicString(data, p)
		if !ok {
			return "", p, errors.New("unterminated quoted key")
		}
		// Let the TOML decoder deal with the escapes.
		var v struct{ K string }
		if _, err := toml.Decode("K = "+string(data[p:end]), &v); err != nil {
			return "", p, err
		}
		return v.K, end, nil
	case '\'':
		i := bytes.IndexAny(data[p+1:], "'\n")
		if i < 0 || data[p+1+i] != '\'' {
			return "", p, errors.New("unterminated quoted key")
		}
		return string(data[p+1 : p+1+i]), p + i + 2, nil
	}
	e := p
	for e < len(data) && !strings.ContainsRune(" \t.]=#\"'\r\n", rune(data[e])) {
		e++
	}
	if e == p {
		return "", p, errors.New("empty key")
	}
	return string(data[p:e]), e, nil
}

// skipBasicString returns the offset after the one-line "..." string at p.
func skipBasicString(data []byte, p int) (int, bool) {
	for i := p + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		case '\n':
			return i, false
		}
	}
	return len(data), false
}

// scanValue returns the offset just after the line ending that ends the
// value starting at p, following multi-line strings, arrays and inline
// tables (which TOML 1.1 lets span lines) and skipping comments.
func scanValue(data []byte, p int) int {
	depth := 0
	for p < len(data) {
		switch c := data[p]; c {
		case '\n':
			p++
			if depth <= 0 {
				return p
			}
		case '#':
			i := bytes.IndexByte(data[p:], '\n')
			if i < 0 {
				return len(data)
			}
			p += i
		case '"', '\'':
			p = skipString(data, p, c)
		case '[', '{':
			depth++
			p++
		case ']', '}':
			depth--
			p++
		default:
			p++
		}
	}
	return len(data)
}

// skipString returns the offset after the string starting at data[p] == q,
// one-line or multi-line (three quotes, either kind).
func skipString(data []byte, p int, q byte) int {
	triple := []byte{q, q, q}
	if bytes.HasPrefix(data[p:], triple) {
		for i := p + 3; i < len(data); i++ {
			if q == '"' && data[i] == '\\' {
				i++
				continue
			}
			if bytes.HasPrefix(data[i:], triple) {
				// Up to two more quotes belong to the content: """"" ends
				// a string whose last character is "".
				e := i + 3
				for n := 0; n < 2 && e < len(data) && data[e] == q; n++ {
					e++
				}
				return e
			}
		}
		return len(data)
	}
	for i := p + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			if q == '"' {
				i++
			}
		case q:
			return i + 1
		case '\n':
			return i
		}
	}
	return len(data)
}

// insertTable places table (ending with a line ending) after the last
// [mcp_servers...] table of the file, or at its end, separated by a blank
// line. The layout is chosen so that RemoveMCPServer cuts exactly the
// inserted bytes again.
func insertTable(data []byte, lines []tomlLine, table string) []byte {
	eol := lineEnding(data)
	last := -1
	for i, l := range lines {
		if l.kind == lineHeader && !l.array && l.key[0] == "mcp_servers" {
			last = i
		}
	}
	if last >= 0 {
		if _, to := tableRange(lines, last); to < len(lines) {
			// Before whatever follows the last server: comments for the
			// next table, or that table itself.
			var prefix string
			if to > 0 && lines[to-1].kind == lineComment {
				// A blank line, so those comments are not taken for ours.
				prefix = eol
			}
			at := lines[to].start
			return slices.Concat(data[:at], []byte(prefix+table+eol), data[at:])
		}
	}
	if len(data) == 0 {
		return []byte(table)
	}
	out := slices.Clone(data)
	if out[len(out)-1] != '\n' {
		out = append(out, eol...)
	}
	return append(append(out, eol...), table...)
}

// tableRange is the half-open range of lines that removing the table whose
// header is lines[h] takes away: the comment lines directly above the
// header, the header, its key lines, the comment lines directly after its
// last key (unless they run straight into the next header, whose comments
// they then are), and the blank lines after that.
func tableRange(lines []tomlLine, h int) (from, to int) {
	next := h + 1
	for next < len(lines) && lines[next].kind != lineHeader {
		next++
	}
	from = h
	for from > 0 && lines[from-1].kind == lineComment {
		from--
	}
	last := h
	for i := h + 1; i < next; i++ {
		if k := lines[i].kind; k == lineKeyValue || k == lineCont {
			last = i
		}
	}
	to = last + 1
	c := to
	for c < next && lines[c].kind == lineComment {
		c++
	}
	if c == len(lines) || lines[c].kind == lineBlank {
		to = c
	}
	for to < next && lines[to].kind == lineBlank {
		to++
	}
	return from, to
}

// bridgeGaps also removes blank and comment lines lying between two removed
// ranges (say between [mcp_servers.x] and [mcp_servers.x.env]): they are in
// the middle of the server's definition.
func bridgeGaps(lines []tomlLine, remove []bool) {
	for i := 0; i < len(lines); {
		if remove[i] {
			i++
			continue
		}
		j := i
		for j < len(lines) && !remove[j] && (lines[j].kind == lineBlank || lines[j].kind == lineComment) {
			j++
		}
		if i > 0 && remove[i-1] && j < len(lines) && remove[j] {
			for k := i; k < j; k++ {
				remove[k] = true
			}
		}
		for j < len(lines) && !remove[j] {
			j++
		}
		i = j
	}
}
