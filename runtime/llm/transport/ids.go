package transport

import "github.com/openheim/openheim/runtime/ids"

// NewCallID makes an id for a tool call the server sent without one; the id
// must be unique because tool results are matched to calls by it.
func NewCallID() string { return ids.New("call_") }
