package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestNilAndEmptyMaskNothing(t *testing.T) {
	var r *Redactor
	if r.String("abc") != "abc" || string(r.Bytes([]byte("abc"))) != "abc" || r.Error(nil) != nil || !r.Empty() {
		t.Fatal("a nil Redactor must pass everything through")
	}
	if New("", "1", "true", "debug") != nil {
		t.Fatal("values under MinLen must give no Redactor")
	}
	var buf bytes.Buffer
	if r.Writer(&buf) != &buf {
		t.Fatal("an empty Redactor's Writer must be the writer itself")
	}
}

func TestShortValuesAreKept(t *testing.T) {
	r := New("1", "hunter22")
	if got := r.String("retry 1 of 3 with hunter22"); got != "retry 1 of 3 with "+Marker {
		t.Fatalf("got %q", got)
	}
}

func TestLongestFirstAndOverlaps(t *testing.T) {
	r := New("abcdef", "abcdefghij", "ghij12345")
	for in, want := range map[string]string{
		"x abcdefghij y":    "x " + Marker + " y",
		"abcdef abcdefghij": Marker + " " + Marker,
		// "abcdefghij" and "ghij12345" overlap: one marker, no fragment left.
		"abcdefghij12345!": Marker + "!",
		"abcdefabcdef":     Marker + Marker,
		"nothing here":     "nothing here",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		if got := string(r.Bytes([]byte(in))); got != want {
			t.Errorf("Bytes(%q) = %q, want %q", in, got, want)
		}
	}
	// A secret repeated with itself overlapping.
	if got := New("aaaaaa").String("aaaaaaaa"); got != Marker {
		t.Errorf("self-overlap: %q", got)
	}
}

func TestEncodedForms(t *testing.T) {
	secret := `p@ss/w"rd+<x>&1`
	r := New(secret)
	jsonHTML, _ := json.Marshal(map[string]string{"e": secret})
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]string{"e": secret})
	for _, in := range []string{
		"q=" + url.QueryEscape(secret),
		"/p/" + url.PathEscape(secret),
		string(jsonHTML),
		plain.String(),
		"err=" + strconv.Quote("bad "+secret),
		fmt.Sprintf("%q", secret),
	} {
		if got := r.String(in); strings.Contains(got, "ss/w") || strings.Contains(got, "ss%2Fw") || !strings.Contains(got, Marker) {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
}

func TestErrorKeepsChain(t *testing.T) {
	r := New("sk-secret-123456")
	base := fmt.Errorf("call: %w: key sk-secret-123456", fs.ErrNotExist)
	err := r.Error(base)
	if strings.Contains(err.Error(), "sk-secret") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Error = %v (is %v)", err, errors.Is(err, fs.ErrNotExist))
	}
	clean := errors.New("fine")
	if r.Error(clean) != clean {
		t.Fatal("an error without secrets must come back as is")
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := New("tok-abcdef-123").Writer(&buf)
	n, err := fmt.Fprintf(w, "openheim: HTTP 401: bad tok-abcdef-123\n")
	if err != nil || n != len("openheim: HTTP 401: bad tok-abcdef-123\n") {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if buf.String() != "openheim: HTTP 401: bad "+Marker+"\n" {
		t.Fatalf("wrote %q", buf.String())
	}
}

func TestWith(t *testing.T) {
	r := New("first-secret").With("second-secret")
	if got := r.String("first-secret second-secret"); got != Marker+" "+Marker {
		t.Fatalf("got %q", got)
	}
	if (*Redactor)(nil).With() != nil || (*Redactor)(nil).With("abcdefgh").Empty() {
		t.Fatal("With on nil")
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	var cur *Redactor
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil), func() *Redactor { return cur }))
	log.Warn("before config tok-1234567890")
	cur = New("tok-1234567890", `quote"d-secret`)
	log.With("bound", "x tok-1234567890").WithGroup("g").Warn("after tok-1234567890",
		"err", errors.New(`HTTP 401: {"key":"quote\"d-secret"}`), "n", 3,
		"list", []string{"a", "tok-1234567890"}, slog.Group("inner", "v", "tok-1234567890"))
	out := buf.String()
	first, second, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "tok-1234567890") {
		t.Errorf("with no Redactor yet the line must pass: %q", first)
	}
	if strings.Contains(second, "tok-1234567890") || strings.Contains(second, "quote") || !strings.Contains(second, "g.n=3") {
		t.Errorf("redacted line: %q", second)
	}
}

func TestHandlerEnabled(t *testing.T) {
	h := Handler(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}), func() *Redactor { return nil })
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Fatal("Enabled must follow the wrapped handler")
	}
}
