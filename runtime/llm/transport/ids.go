package transport

import (
	"crypto/rand"
	"encoding/hex"
)

// NewCallID makes an id for a tool call the server sent without one; the id
// must be unique because tool results are matched to calls by it.
func NewCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
