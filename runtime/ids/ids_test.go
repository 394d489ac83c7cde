package ids

import (
	"regexp"
	"testing"
)

func TestNewShape(t *testing.T) {
	seen := map[string]bool{}
	shape := regexp.MustCompile(`^ag_[0-9a-f]{24}$`)
	for range 1000 {
		id := New("ag_")
		if !shape.MatchString(id) {
			t.Fatalf("id %q", id)
		}
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
		if !Is(id, "ag_") {
			t.Fatalf("Is refuses New's id %q", id)
		}
	}
	if got := NewN("delegate-", 4); !regexp.MustCompile(`^delegate-[0-9a-f]{8}$`).MatchString(got) {
		t.Errorf("NewN: %q", got)
	}
}

func TestIs(t *testing.T) {
	for id, want := range map[string]bool{
		"file_0123456789abcdef01234567":   true,
		"file_0123456789abcdef0123456":    false, // short
		"file_0123456789abcdef012345678":  false, // long
		"file_0123456789ABCDEF01234567":   false, // upper case
		"file_../../../../etc/passwd0000": false,
		"ag_0123456789abcdef01234567":     false, // other prefix
		"":                                false,
	} {
		if got := Is(id, "file_"); got != want {
			t.Errorf("Is(%q) = %v", id, got)
		}
	}
}
