package acp

import (
	"context"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/live"
)

// Hub is what the connections of one process share (runtime/live): the
// running turns and the fan-out of each session's updates, to ACP clients
// and the sessions API's streams alike.
type Hub = live.Hub

// NewHub returns a hub whose turns run until Stop (or ctx ends).
func NewHub(ctx context.Context, e *engine.Engine) *Hub { return live.NewHub(ctx, e) }
