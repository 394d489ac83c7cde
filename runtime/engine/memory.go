package engine

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/openheim/openheim/runtime/memory"
	"github.com/openheim/openheim/runtime/tools"
)

// MemoryOpener opens long-term memory on first use and keeps it open; a
// turn that never touches memory never pays for opening its index.
type MemoryOpener struct {
	Options memory.Options
	// Notice, when set, is said once through Options.Warn as the memory
	// opens: that semantic search is off, say, said when memory is used
	// rather than on every start.
	Notice string

	once sync.Once
	m    *memory.Memory
	err  error
}

// Open returns the memory, opening it the first time.
func (o *MemoryOpener) Open() (*memory.Memory, error) {
	o.once.Do(func() {
		o.m, o.err = memory.Open(o.Options)
		if o.err == nil && o.Notice != "" && o.Options.Warn != nil {
			o.Options.Warn(o.Notice)
		}
	})
	return o.m, o.err
}

// Close closes the memory if it was opened.
func (o *MemoryOpener) Close() error {
	o.once.Do(func() {}) // no opening after Close
	if o.m != nil {
		return o.m.Close()
	}
	return nil
}

// memoryTools are remember, search_memory, edit_memory and forget, opening
// the memory when first called.
func (e *Engine) memoryTools() []tools.Tool {
	if e.Memory == nil {
		return nil
	}
	var out []tools.Tool
	for _, t := range memory.Tools(nil) { // specs and kinds only
		out = append(out, lazyMemoryTool{Tool: t, opener: e.Memory})
	}
	return out
}

type lazyMemoryTool struct {
	tools.Tool
	opener *MemoryOpener
}

func (t lazyMemoryTool) Run(ctx context.Context, args json.RawMessage) tools.Result {
	m, err := t.opener.Open()
	if err != nil {
		return tools.Errorf("long-term memory is unavailable: %v", err)
	}
	name := t.Spec().Name
	for _, real := range memory.Tools(m) {
		if real.Spec().Name == name {
			return real.Run(ctx, args)
		}
	}
	return tools.Errorf("Unknown tool: %s", name)
}
