// Package redact masks secret values in text that leaves the process:
// errors, warnings, log lines, NDJSON and SSE events, API answers, relayed
// stderr and cassettes. A Redactor is built once from the configuration's
// secrets (runtime/config's Config.Redactor) and applied at the few places
// where text goes out; the classification helpers here (URLSecrets,
// HeaderSecrets, ArgSecrets, EnvSecrets) decide which parts of a config
// value are secret.
//
// It is a leaf: the standard library only, so every layer can use it.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Marker replaces every secret; runtime/config's public view uses the same.
const Marker = "<redacted>"

// MinLen is the shortest value that is masked. Shorter ones are settings
// ("1", "true", "debug"), not credentials, and masking them wherever they
// occur would shred every line of output ("<redacted>" for each "true").
// A real credential is far longer; one under 6 characters is guessable
// whatever is done here.
const MinLen = 6

// Redactor masks a fixed set of secrets. The zero value and nil mask
// nothing, so a config without secrets costs one nil check per string.
// It is immutable and safe for concurrent use.
type Redactor struct {
	secrets []string // as given (deduplicated), for With
	needles []string // secrets and their encoded forms, longest first
}

// New returns a Redactor for secrets; values shorter than MinLen are
// ignored. It returns nil when nothing is left to mask.
func New(secrets ...string) *Redactor {
	var keep []string
	for _, s := range secrets {
		if len(s) >= MinLen && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	r := &Redactor{secrets: keep}
	for _, s := range keep {
		for _, n := range forms(s) {
			if !slices.Contains(r.needles, n) {
				r.needles = append(r.needles, n)
			}
		}
	}
	// Longest first: where one secret contains another, the whole of the
	// longer one goes (the merge in mask would also cover it; the order
	// keeps the fast path's first hit the most specific).
	slices.SortStableFunc(r.needles, func(a, b string) int { return len(b) - len(a) })
	return r
}

// With returns a Redactor masking r's secrets and more (r may be nil).
func (r *Redactor) With(more ...string) *Redactor {
	if len(more) == 0 {
		return r
	}
	if r == nil {
		return New(more...)
	}
	return New(append(slices.Clone(r.secrets), more...)...)
}

// Empty reports whether r masks nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.needles) == 0 }

// forms is a secret as it may appear in output: itself, URL-encoded (in a
// query or a path: net/http quotes URLs in its errors), JSON-escaped (an
// error body echoed inside JSON, with or without HTML escaping) and Go-quoted
// (%q, slog's text handler).
func forms(s string) []string {
	out := []string{s}
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	if b, err := json.Marshal(s); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) == nil {
		b := bytes.TrimRight(buf.Bytes(), "\n")
		add(string(b[1 : len(b)-1]))
	}
	q := strconv.Quote(s)
	add(q[1 : len(q)-1])
	return out
}

// String returns s with every occurrence of a secret replaced by Marker.
// Overlapping occurrences (of two secrets, or of one secret in another's
// encoding) become one Marker, so no fragment of either is left.
func (r *Redactor) String(s string) string {
	if r.Empty() {
		return s
	}
	spans := r.find(len(s), func(n string, from int) int { return strings.Index(s[from:], n) })
	if spans == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(Marker)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// Bytes is String for a byte slice. It returns p itself when nothing
// matched, so callers may not assume a copy.
func (r *Redactor) Bytes(p []byte) []byte {
	if r.Empty() {
		return p
	}
	spans := r.find(len(p), func(n string, from int) int { return bytes.Index(p[from:], []byte(n)) })
	if spans == nil {
		return p
	}
	out := make([]byte, 0, len(p))
	last := 0
	for _, sp := range spans {
		out = append(out, p[last:sp[0]]...)
		out = append(out, Marker...)
		last = sp[1]
	}
	return append(out, p[last:]...)
}

// find returns the merged [start, end) spans of every needle in a text of
// length n; index(needle, from) is the offset of needle in text[from:] or -1.
func (r *Redactor) find(n int, index func(needle string, from int) int) [][2]int {
	var spans [][2]int
	for _, nd := range r.needles {
		if len(nd) > n {
			continue
		}
		for from := 0; from <= n-len(nd); {
			i := index(nd, from)
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{from + i, from + i + len(nd)})
			from += i + 1
		}
	}
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp[0] < last[1] {
			last[1] = max(last[1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// Error returns err with its message redacted; errors.Is and errors.As
// still see the original chain. It returns err itself when nothing matched.
func (r *Redactor) Error(err error) error {
	if err == nil || r.Empty() {
		return err
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Writer returns a writer that redacts each Write before passing it to w
// (w itself when r is empty). Each Write is redacted on its own: callers
// write whole messages (fmt.Fprintf, one log record, one encoded line), and
// a secret split across two writes is not seen.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r.Empty() {
		return w
	}
	return &writer{w: w, r: r}
}

type writer struct {
	w io.Writer
	r *Redactor
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
