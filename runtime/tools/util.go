package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// sniffLen is how much of a file is inspected to decide whether it is
// binary; it matches git's and ripgrep's heuristic of looking for NUL.
const sniffLen = 8192

func looksBinary(head []byte) bool { return bytes.IndexByte(head, 0) >= 0 }

// truncateUTF8 cuts s to at most n bytes without splitting a rune, so the
// model never sees a mangled character at a cut point.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// trimPartialRune drops an incomplete UTF-8 sequence left at the end of b by
// a byte-count cut.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// args is a decoded argument object. Tools read fields through it rather
// than json.Unmarshal into a struct so that every bad call gets a message
// naming the argument and what was wrong with it, which the model can act
// on. The first problem sticks (like bufio.Scanner): read every field, then
// check Err once.
type args struct {
	m   map[string]json.RawMessage
	err error
}

// parseArgs accepts a JSON object; an empty payload counts as {} because
// some providers send nothing for calls without arguments.
func parseArgs(raw json.RawMessage) *args {
	a := &args{m: map[string]json.RawMessage{}}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return a
	}
	if err := json.Unmarshal(trimmed, &a.m); err != nil || a.m == nil {
		a.err = fmt.Errorf("invalid arguments: expected a JSON object, got %s", excerpt(string(trimmed), 100))
	}
	return a
}

// Err is the first problem met while reading the arguments.
func (a *args) Err() error { return a.err }

func (a *args) fail(err error) {
	if a.err == nil {
		a.err = err
	}
}

func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return truncateUTF8(s, n) + "..."
}

// present reports whether name was given; an explicit null counts as absent
// because models often send null for "use the default".
func (a *args) present(name string) bool {
	v, ok := a.m[name]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func (a *args) missing(name string) error {
	return fmt.Errorf("missing required argument %q", name)
}

func (a *args) wrongType(name, want string) error {
	return fmt.Errorf("argument %q must be %s, got %s", name, want, excerpt(string(bytes.TrimSpace(a.m[name])), 60))
}

func (a *args) str(name string, required bool) string {
	if a.err != nil || !a.present(name) {
		if required {
			a.fail(a.missing(name))
		}
		return ""
	}
	var s string
	if err := json.Unmarshal(a.m[name], &s); err != nil {
		a.fail(a.wrongType(name, "a string"))
	}
	return s
}

func (a *args) boolean(name string) bool {
	if a.err != nil || !a.present(name) {
		return false
	}
	var b bool
	if err := json.Unmarshal(a.m[name], &b); err != nil {
		a.fail(a.wrongType(name, "a boolean"))
	}
	return b
}

// integer returns an optional integer argument that must be >= min. Whole
// floats such as 10.0 are accepted because some models emit them.
func (a *args) integer(name string, min int) (int, bool) {
	if a.err != nil || !a.present(name) {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(a.m[name], &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		a.fail(a.wrongType(name, "an integer"))
		return 0, false
	}
	if int(f) < min {
		a.fail(fmt.Errorf("argument %q must be at least %d, got %s", name, min, strings.TrimSpace(string(a.m[name]))))
		return 0, false
	}
	return int(f), true
}
