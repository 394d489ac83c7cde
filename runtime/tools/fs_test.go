package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/openheim/openheim/runtime/confine"
)

// fakeFS stands in for an editor's buffers: it serves its own contents and
// records every call.
type fakeFS struct {
	mu       sync.Mutex
	files    map[string]string // by absolute path
	calls    []string          // "read <path>" / "write <path>"
	readErr  error
	writeErr error
	ctxVals  []any
}

type ctxKey struct{}

func newFakeFS(files map[string]string) *fakeFS {
	if files == nil {
		files = map[string]string{}
	}
	return &fakeFS{files: files}
}

func (f *fakeFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "read "+path)
	f.ctxVals = append(f.ctxVals, ctx.Value(ctxKey{}))
	if f.readErr != nil {
		return "", f.readErr
	}
	text, ok := f.files[path]
	if !ok {
		return "", errors.New("no such buffer")
	}
	return text, nil
}

func (f *fakeFS) WriteTextFile(ctx context.Context, path, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "write "+path)
	f.ctxVals = append(f.ctxVals, ctx.Value(ctxKey{}))
	if f.writeErr != nil {
		return f.writeErr
	}
	f.files[path] = content
	return nil
}

// take returns the calls so far and forgets them.
func (f *fakeFS) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// checkCalls fails unless every recorded path is absolute, clean and inside
// the sandbox, and the calls are exactly want.
func checkCalls(t *testing.T, sb *confine.Root, f *fakeFS, want ...string) {
	t.Helper()
	got := f.take()
	for _, c := range got {
		_, p, _ := strings.Cut(c, " ")
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || !strings.HasPrefix(p, sb.Path()+"/") {
			t.Errorf("FS saw unchecked path %q", p)
		}
	}
	if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		t.Fatalf("calls %q, want %q", got, want)
	}
}

func TestFSReadFile(t *testing.T) {
	sb, _ := rootTree(t)
	// The disk holds the saved files; the editor has unsaved changes.
	writeFiles(t, sb.Path(), map[string]string{
		"five.txt":   "saved\n",
		"bin.txt":    "saved\n",
		"a/only.txt": "saved\n",
		"late.txt":   "saved\n",
	})
	abs := func(rel string) string { return filepath.Join(sb.Path(), filepath.FromSlash(rel)) }
	late := strings.Repeat("a", sniffLen) + "\n\x00\n"
	fake := newFakeFS(map[string]string{
		abs("five.txt"):   "one\ntwo\nthree\nfour\nfive\n",
		abs("bin.txt"):    "text\x00more",
		abs("a/only.txt"): "unsaved\n",
		abs("late.txt"):   late,
	})
	tool := &ReadFile{Root: sb, FS: fake}
	read := func(p string, offset, limit int) Result { return run(t, tool, readArgs(t, p, offset, limit)) }

	wantOK(t, read("five.txt", 0, 0), "one\ntwo\nthree\nfour\nfive\n")
	checkCalls(t, sb, fake, "read "+abs("five.txt"))
	wantOK(t, read("five.txt", 2, 2), "two\nthree\n\n[... truncated: showing lines 2-3 of 5. Call read_file again with offset=4 to continue.]")
	wantErr(t, read("five.txt", 6, 0), "offset 6 is past the end of five.txt, which has 5 lines")
	checkCalls(t, sb, fake, "read "+abs("five.txt"), "read "+abs("five.txt"))
	// Absolute paths and inside links reach the FS as the real path.
	wantOK(t, read(abs("five.txt"), 5, 0), "five\n")
	wantOK(t, read("in_link/only.txt", 0, 0), "unsaved\n")
	checkCalls(t, sb, fake, "read "+abs("five.txt"), "read "+abs("a/only.txt"))
	// The binary refusal applies to the editor's text too, on the head only.
	wantErr(t, read("bin.txt", 0, 0), "cannot read bin.txt: it appears to be a binary file (it contains NUL bytes)")
	wantOK(t, read("late.txt", 0, 0), late)
	fake.take()

	// Everything the sandbox refuses never reaches the FS.
	for p, want := range map[string]string{
		"out_link/secret.txt":   "is outside the work directory",
		"../outside/secret.txt": "is outside the work directory",
		"/etc/passwd":           "is outside the work directory",
		"abs_out_link/x":        "is outside the work directory",
		"dangling_out":          "is outside the work directory",
		"loop1":                 "too many levels of symbolic links",
		"a":                     "'a' is a directory, not a file; use list_dir to see its contents",
		"":                      "'' is a directory, not a file",
		"nope.txt":              "file not found: nope.txt",
	} {
		wantErr(t, read(p, 0, 0), want)
	}
	checkCalls(t, sb, fake)
}

func TestFSWriteFile(t *testing.T) {
	sb, tmp := rootTree(t)
	fake := newFakeFS(nil)
	tool := &WriteFile{Root: sb, FS: fake}
	write := func(p, content string) Result {
		return run(t, tool, argsJSON(t, map[string]any{"path": p, "content": content}))
	}
	abs := filepath.Join(sb.Path(), "sub", "new.txt")

	wantOK(t, write("sub/new.txt", "hello"), "Wrote 5 bytes to sub/new.txt")
	checkCalls(t, sb, fake, "write "+abs)
	if fake.files[abs] != "hello" {
		t.Fatalf("FS got %q", fake.files[abs])
	}
	// The editor writes; the tool itself touches nothing on disk.
	if _, err := os.Lstat(filepath.Join(sb.Path(), "sub")); err == nil {
		t.Fatal("the tool wrote to the disk itself")
	}
	wantOK(t, write("dangling_in", "via link"), "Wrote 8 bytes to a/new.txt")
	checkCalls(t, sb, fake, "write "+filepath.Join(sb.Path(), "a", "new.txt"))

	wantErr(t, write("a", "x"), "'a' is a directory, not a file")
	wantErr(t, write("in_link", "x"), "'in_link' is a directory, not a file")
	wantErr(t, write("", "x"), "'' is the work directory, not a file")
	for _, p := range []string{"../escape.txt", "out_link/new.txt", "dangling_out", "dangling_chain", "a/up/x.txt", "/tmp/x"} {
		wantErr(t, write(p, "pwned"), "path '"+p+"' is outside the work directory '"+sb.Path()+"'")
	}
	checkCalls(t, sb, fake)
	if _, err := os.Lstat(filepath.Join(tmp, "outside", "nope")); err == nil {
		t.Fatal("created outside the sandbox")
	}
}

func TestFSEditFile(t *testing.T) {
	sb, _ := rootTree(t)
	const saved = "a := 1\nb := 1\nc := 2\n"
	writeFiles(t, sb.Path(), map[string]string{"code.go": saved, "bin.dat": "saved"})
	path := filepath.Join(sb.Path(), "code.go")
	bin := filepath.Join(sb.Path(), "bin.dat")
	fake := newFakeFS(map[string]string{
		path: "a := 1\nb := 1\nc := 2\nd := 7\n", // unsaved line d
		bin:  "x\x00y",
	})
	tool := &EditFile{Root: sb, FS: fake}
	edit := func(p, oldS, newS string, all bool) Result {
		return run(t, tool, argsJSON(t, map[string]any{"path": p, "old_string": oldS, "new_string": newS, "replace_all": all}))
	}

	// The edit applies to the editor's text, which only the editor has.
	wantOK(t, edit("code.go", "d := 7", "d := 8", false), "Replaced 1 occurrence in code.go")
	checkCalls(t, sb, fake, "read "+path, "write "+path)
	if got := fake.files[path]; got != "a := 1\nb := 1\nc := 2\nd := 8\n" {
		t.Fatalf("FS content %q", got)
	}
	wantOK(t, edit(path, ":= 1", ":= 5", true), "Replaced 2 occurrences in code.go")
	checkCalls(t, sb, fake, "read "+path, "write "+path)
	if got := readString(t, path); got != saved {
		t.Fatalf("the tool wrote to the disk itself: %q", got)
	}

	// Failed edits read but never write.
	wantErr(t, edit("code.go", "zzz", "x", false), "old_string not found in code.go")
	wantErr(t, edit("code.go", "a := 1", "x", false), "old_string not found") // only on disk now
	wantErr(t, edit("bin.dat", "x", "z", false), "cannot edit bin.dat: it appears to be a binary file")
	checkCalls(t, sb, fake, "read "+path, "read "+path, "read "+bin)
	wantOK(t, edit("code.go", "d := 8", "d := 9", false), "Replaced 1 occurrence in code.go")
	fake.take()

	for _, p := range []string{"out_link/secret.txt", "../outside/secret.txt", "chain_out/secret.txt", "a", "nope.go"} {
		if r := edit(p, "secret", "x", false); !r.IsError {
			t.Fatalf("edit %q succeeded", p)
		}
	}
	checkCalls(t, sb, fake)
}

func TestFSErrorsPassThrough(t *testing.T) {
	sb, _ := rootTree(t)
	writeFiles(t, sb.Path(), map[string]string{"f.txt": "x\n"})
	abs := filepath.Join(sb.Path(), "f.txt")
	fake := newFakeFS(map[string]string{abs: "x\n"})
	fake.readErr = errors.New("buffer is closing")
	ctx := context.WithValue(context.Background(), ctxKey{}, "turn-1")

	r := (&ReadFile{Root: sb, FS: fake}).Run(ctx, []byte(`{"path":"f.txt"}`))
	if !r.IsError || r.Content != "cannot read f.txt: buffer is closing" {
		t.Fatalf("read_file: %+v", r)
	}
	edit := []byte(`{"path":"f.txt","old_string":"x","new_string":"y"}`)
	r = (&EditFile{Root: sb, FS: fake}).Run(ctx, edit)
	if !r.IsError || r.Content != "cannot read f.txt: buffer is closing" {
		t.Fatalf("edit_file read: %+v", r)
	}
	checkCalls(t, sb, fake, "read "+abs, "read "+abs)

	fake.readErr = nil
	fake.writeErr = errors.New("permission denied by the editor")
	r = (&WriteFile{Root: sb, FS: fake}).Run(ctx, []byte(`{"path":"f.txt","content":"z"}`))
	if !r.IsError || r.Content != "cannot write f.txt: permission denied by the editor" {
		t.Fatalf("write_file: %+v", r)
	}
	r = (&EditFile{Root: sb, FS: fake}).Run(ctx, edit)
	if !r.IsError || r.Content != "cannot write f.txt: permission denied by the editor" {
		t.Fatalf("edit_file write: %+v", r)
	}
	checkCalls(t, sb, fake, "write "+abs, "read "+abs, "write "+abs)

	// The tool's ctx reaches the FS.
	for i, v := range fake.ctxVals {
		if v != "turn-1" {
			t.Fatalf("call %d got ctx value %v", i, v)
		}
	}
}

func TestBuiltinsFS(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"f.txt": "disk needle\n"})
	sb := mustRoot(t, root)
	abs := filepath.Join(sb.Path(), "f.txt")
	fake := newFakeFS(map[string]string{abs: "buffer\n"})
	reg, err := Builtins(Options{WorkDir: root, FS: fake})
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) Tool { tool, _ := reg.Get(name); return tool }

	wantOK(t, run(t, get("read_file"), `{"path":"f.txt"}`), "buffer\n")
	wantOK(t, run(t, get("edit_file"), `{"path":"f.txt","old_string":"buffer","new_string":"edited"}`), "Replaced 1 occurrence in f.txt")
	wantOK(t, run(t, get("write_file"), `{"path":"f.txt","content":"new"}`), "Wrote 3 bytes to f.txt")
	checkCalls(t, sb, fake, "read "+abs, "read "+abs, "write "+abs, "write "+abs)
	// list_dir and search still read the disk.
	wantOK(t, run(t, get("list_dir"), `{}`), "f.txt")
	if r := run(t, get("search"), `{"pattern":"needle"}`); r.IsError || !strings.Contains(r.Content, "disk needle") {
		t.Fatalf("search: %+v", r)
	}
	checkCalls(t, sb, fake)
	if got := readString(t, abs); got != "disk needle\n" {
		t.Fatalf("disk changed to %q", got)
	}
}

// Without an FS the tools write the disk through the root: new files get
// 0644, rewritten ones keep their bits, no temporary file is left, and a
// failure to make the parent is worded as it always was.
func TestDiskWrites(t *testing.T) {
	root := t.TempDir()
	wt := &WriteFile{Root: mustRoot(t, root)}
	p := filepath.Join(root, "x", "y", "f.txt")
	wantOK(t, run(t, wt, argsJSON(t, map[string]any{"path": "x/y/f.txt", "content": "one"})), "Wrote 3 bytes to x/y/f.txt")
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v %v", fi, err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	wantOK(t, run(t, wt, argsJSON(t, map[string]any{"path": p, "content": "two"})), "Wrote 3 bytes to x/y/f.txt")
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}
	noTempFiles(t, filepath.Dir(p))
	if got := readString(t, p); got != "two" {
		t.Fatalf("content %q", got)
	}
	writeFiles(t, root, map[string]string{"plain": "x"})
	wantErr(t, run(t, wt, `{"path":"plain/f.txt","content":"x"}`), "cannot create parent directories of plain/f.txt: mkdir ")
}
