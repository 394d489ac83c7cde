package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Whatever the pieces a text arrives in, what a Stream lets out is what
// redacting the whole text gives: no secret split across pieces gets
// through, and nothing else is lost or changed.
func TestStreamMatchesWholeText(t *testing.T) {
	r := New("sk-live-0123456789", "tok/en with space", "abcdefgh", "cdefghij")
	texts := []string{
		"the key is sk-live-0123456789, keep it",
		"sk-live-0123456789sk-live-0123456789",
		"url: https://x/?k=tok%2Fen+with+space&z=1",
		"abcdefghij and abcdefg and cdefgh",
		"sk-live-012345678 (one short) then sk-live-0123456789",
		"nothing secret here at all, sk-live- is only a prefix",
		`json: "tok\/en with space"`,
		"ünïcödé ✓ sk-live-0123456789 ✓ end",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range texts {
		want := r.String(text)
		for trial := 0; trial < 200; trial++ {
			s := r.Stream()
			var got strings.Builder
			rest := text
			for rest != "" {
				n := 1 + rng.IntN(min(len(rest), 7))
				got.WriteString(s.Push(rest[:n]))
				rest = rest[n:]
			}
			got.WriteString(s.Flush())
			if got.String() != want {
				t.Fatalf("%q in pieces gave\n%q, want\n%q", text, got.String(), want)
			}
		}
	}
}

// Text that cannot be the start of a secret goes out at once; only a
// possible start waits.
func TestStreamHoldsBackOnlyWhatCouldBeASecret(t *testing.T) {
	s := New("sk-live-0123456789").Stream()
	if got := s.Push("Hello, world. "); got != "Hello, world. " {
		t.Errorf("plain text held: %q", got)
	}
	if got := s.Push("Key: sk-li"); got != "Key: " {
		t.Errorf("a possible secret went out: %q", got)
	}
	if got := s.Push("ke a cat"); got != "sk-like a cat" {
		t.Errorf("not a secret after all: %q", got)
	}
	if got := s.Push("sk-live-01234"); got != "" {
		t.Errorf("held: %q", got)
	}
	if got := s.Push("56789!"); got != Marker+"!" {
		t.Errorf("secret across pieces: %q", got)
	}
	s.Push("sk-live")
	if got := s.Flush(); got != "sk-live" {
		t.Errorf("flush: %q", got)
	}
	if New().Stream() != nil {
		t.Error("an empty redactor streams")
	}
}
