package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The file tools' speed through their public API (Builtins, Get, Run), so
// this file runs unchanged on older trees for before/after numbers. The
// floor benchmarks do the bare os calls on the same tree: a ratio to them
// is steadier than a time on a shared machine.

// benchTree makes a small project: 4 packages of 12 files of ~2 KB, a
// .gitignore and an ignored build directory.
func benchTree(b *testing.B) (string, *Registry) {
	b.Helper()
	root := b.TempDir()
	line := "\tfmt.Println(\"some ordinary line of code\") // filler\n"
	for p := range 4 {
		for f := range 12 {
			body := fmt.Sprintf("package pkg%d\n\n", p) + strings.Repeat(line, 36)
			if f == 5 {
				body += "// needle here\n"
			}
			path := filepath.Join(root, "src", fmt.Sprintf("pkg%d", p), fmt.Sprintf("file%02d.go", f))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	os.MkdirAll(filepath.Join(root, "build"), 0o755)
	os.WriteFile(filepath.Join(root, "build", "out.txt"), []byte("needle\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644)
	reg, err := Builtins(Options{WorkDir: root})
	if err != nil {
		b.Fatal(err)
	}
	return root, reg
}

func benchTool(b *testing.B, name string, args any, want string) {
	root, reg := benchTree(b)
	os.MkdirAll(filepath.Join(root, "out"), 0o755)
	tool, _ := reg.Get(name)
	raw, _ := json.Marshal(args)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := tool.Run(ctx, raw); r.IsError || !strings.Contains(r.Content, want) {
			b.Fatalf("%s: %+v", name, r)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	benchTool(b, "read_file", map[string]any{"path": "src/pkg2/file05.go"}, "needle here")
}

func BenchmarkWriteFile(b *testing.B) {
	benchTool(b, "write_file", map[string]any{"path": "out/bench.txt", "content": strings.Repeat("x", 2048)}, "Wrote 2048 bytes")
}

func BenchmarkEditFile(b *testing.B) {
	root, reg := benchTree(b)
	p := filepath.Join(root, "src", "pkg1", "file03.go")
	tool, _ := reg.Get("edit_file")
	args := [2][]byte{
		[]byte(`{"path":"src/pkg1/file03.go","old_string":"package pkg1","new_string":"package pkgX"}`),
		[]byte(`{"path":"src/pkg1/file03.go","old_string":"package pkgX","new_string":"package pkg1"}`),
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if r := tool.Run(ctx, args[i%2]); r.IsError {
			b.Fatalf("edit_file: %+v (%s)", r, p)
		}
		i++
	}
}

func BenchmarkListDir(b *testing.B) {
	benchTool(b, "list_dir", map[string]any{"path": "src/pkg1"}, "file11.go")
}

func BenchmarkSearch(b *testing.B) {
	benchTool(b, "search", map[string]any{"pattern": "needle"}, "src/pkg3/file05.go:39: // needle here")
}

// BenchmarkFloor is the bare os work of one read, one listing and one
// plain (not atomic) write of the tree above: what the kernel costs here.
func BenchmarkFloor(b *testing.B) {
	root, _ := benchTree(b)
	data := []byte(strings.Repeat("x", 2048))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.ReadFile(filepath.Join(root, "src", "pkg2", "file05.go")); err != nil {
			b.Fatal(err)
		}
		if _, err := os.ReadDir(filepath.Join(root, "src", "pkg1")); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "floor.txt"), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
