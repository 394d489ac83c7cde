// Package ids makes the random ids openheim hands out: a prefix that says
// what the id names ("ag_", "file_", "call_") and random lowercase hex.
//
// The random part comes from crypto/rand, not a counter: ids appear in URLs
// and on disk, must not be guessable from one another, and must not collide
// across processes and restarts without any coordination.
package ids

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Bytes is how much randomness New puts in an id: 96 bits, 24 hex digits.
const Bytes = 12

// New returns prefix followed by 24 random lowercase hex digits.
func New(prefix string) string { return NewN(prefix, Bytes) }

// NewN returns prefix followed by n random bytes as 2n lowercase hex
// digits, for the few ids kept short on purpose.
func NewN(prefix string, n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return prefix + hex.EncodeToString(b)
}

// Is reports whether id has exactly the shape New makes with prefix, so an
// id taken from a request can be trusted as a file name component before
// anything is looked up by it.
func Is(id, prefix string) bool {
	hexPart, ok := strings.CutPrefix(id, prefix)
	if !ok || len(hexPart) != 2*Bytes {
		return false
	}
	for _, c := range []byte(hexPart) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
