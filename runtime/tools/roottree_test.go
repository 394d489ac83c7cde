package tools

import (
	"testing"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/confine/confinetest"
)

// rootTree opens the shared tree of inside, escaping, dangling and looping
// links (see confinetest.Tree) as a root. It returns the root and the
// symlink-free temp dir holding it and the outside folder.
func rootTree(tb testing.TB) (*confine.Root, string) {
	tb.Helper()
	dir, tmp := confinetest.Tree(tb)
	r, err := confine.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r, tmp
}
