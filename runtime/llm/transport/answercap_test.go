package transport

import (
	"strings"
	"testing"
)

func TestAnswerCapTake(t *testing.T) {
	tests := []struct {
		limit      int
		in         []string
		want       string
		wantCapped bool
	}{
		{10, []string{"abc", "def"}, "abcdef", false},
		{6, []string{"abc", "def"}, "abcdef", false},
		{5, []string{"abc", "def"}, "abcde", true},
		{4, []string{"héllo"}, "hél", true}, // é is 2 bytes: "hél" is 4
		{2, []string{"hé"}, "h", true},      // no half rune
		{3, []string{"ab", "€"}, "ab", true},
		{-1, []string{strings.Repeat("x", 1000)}, strings.Repeat("x", 1000), false},
	}
	for _, tt := range tests {
		c := NewAnswerCap(tt.limit)
		var got strings.Builder
		capped := false
		for _, s := range tt.in {
			kept, err := c.Take(s)
			got.WriteString(kept)
			if err != nil {
				capped = true
				break
			}
		}
		if got.String() != tt.want || capped != tt.wantCapped {
			t.Errorf("limit %d, %q: got %q capped=%v, want %q capped=%v", tt.limit, tt.in, got.String(), capped, tt.want, tt.wantCapped)
		}
	}
	if c := NewAnswerCap(0); c.limit != DefaultMaxAnswerBytes {
		t.Errorf("zero limit = %d", c.limit)
	}
}
