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
// naming the argument and what was wrong with it, which the model can act on.
type args map[string]json.RawMessage

// parseArgs accepts a JSON object; an empty payload counts as {} because
// some providers send nothing for calls without arguments.
func parseArgs(raw json.RawMessage) (args, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return args{}, nil
	}
	var a args
	if err := json.Unmarshal(trimmed, &a); err != nil || a == nil {
		return nil, fmt.Errorf("invalid arguments: expected a JSON object, got %s", excerpt(string(trimmed), 100))
	}
	return a, nil
}

func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return truncateUTF8(s, n) + "..."
}

// present reports whether name was given; an explicit null counts as absent
// because models often send null for "use the default".
func (a args) present(name string) bool {
	v, ok := a[name]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func (a args) missing(name string) error {
	return fmt.Errorf("missing required argument %q", name)
}

func (a args) wrongType(name, want string) error {
	return fmt.Errorf("argument %q must be %s, got %s", name, want, excerpt(string(bytes.TrimSpace(a[name])), 60))
}

func (a args) str(name string, required bool) (string, error) {
	if !a.present(name) {
		if required {
			return "", a.missing(name)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(a[name], &s); err != nil {
		return "", a.wrongType(name, "a string")
	}
	return s, nil
}

func (a args) boolean(name string) (bool, error) {
	if !a.present(name) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(a[name], &b); err != nil {
		return false, a.wrongType(name, "a boolean")
	}
	return b, nil
}

// integer returns an optional integer argument that must be >= min. Whole
// floats such as 10.0 are accepted because some models emit them.
func (a args) integer(name string, min int) (int, bool, error) {
	if !a.present(name) {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(a[name], &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false, a.wrongType(name, "an integer")
	}
	if int(f) < min {
		return 0, false, fmt.Errorf("argument %q must be at least %d, got %s", name, min, strings.TrimSpace(string(a[name])))
	}
	return int(f), true, nil
}
