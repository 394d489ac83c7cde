// Package confinetest holds what tests of confined code share: a tree of
// symlinks that stay inside, escape, dangle and nest, and a racer that
// keeps swapping a directory for a link out and a file for a FIFO.
package confinetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Tree builds tmp/root and a sibling tmp/outside (holding secret.txt,
// "secret\n") under a fresh temp dir, with links in root that stay inside,
// escape, dangle, nest and loop, and tmp/alias, a link to root. It returns
// the symlink-free root and tmp.
func Tree(tb testing.TB) (root, tmp string) {
	tb.Helper()
	tmp, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	root = filepath.Join(tmp, "root")
	outside := filepath.Join(tmp, "outside")
	for _, d := range []string{filepath.Join(root, "a", "b"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for p, c := range map[string]string{
		filepath.Join(root, "a", "b", "file.txt"): "inside\n",
		filepath.Join(outside, "secret.txt"):      "secret\n",
	} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	links := map[string]string{
		"root/in_link":          "a",
		"root/abs_in_link":      filepath.Join(root, "a"),
		"root/out_link":         "../outside",
		"root/abs_out_link":     outside,
		"root/dangling_out":     "../outside/nope/new.txt",
		"root/dangling_abs_out": "/nonexistent-openheim-dir/x",
		"root/dangling_in":      "a/new.txt",
		"root/a/up":             "../..",
		"root/a/b/upin":         "..",
		"root/chain":            "in_link/b/upin",
		"root/chain_out":        "a/up/outside",
		"root/loop1":            "loop2",
		"root/loop2":            "loop1",
		"root/missing_trick":    "a/missing/../../../outside",
		"root/dangling_chain":   "dangling_out",
		"alias":                 "root",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(tmp, name)); err != nil {
			tb.Fatal(err)
		}
	}
	return root, tmp
}
