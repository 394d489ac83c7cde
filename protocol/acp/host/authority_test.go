//go:build unix

package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
)

type hostHandler func(context.Context, json.RawMessage) (any, error)

// invoke calls h with params as JSON and returns the result as the peer
// would send it.
func invoke(t *testing.T, h hostHandler, params any) (string, error) {
	t.Helper()
	raw, _ := json.Marshal(params)
	res, err := h(context.Background(), raw)
	if err != nil {
		return "", err
	}
	out, _ := json.Marshal(res)
	return string(out), nil
}

// mustInvoke is invoke that must succeed, decoding the result into into.
func mustInvoke(t *testing.T, h hostHandler, params, into any) string {
	t.Helper()
	out, err := invoke(t, h, params)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(out), into); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
	}
	return out
}

// wantRPCError checks err is a JSON-RPC error with code whose message
// contains every part.
func wantRPCError(t *testing.T, err error, code int, parts ...string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("error %v is not a *jsonrpc.Error", err)
	}
	if rpc.Code != code {
		t.Errorf("code %d, want %d (%v)", rpc.Code, code, err)
	}
	for _, p := range parts {
		if !strings.Contains(rpc.Message, p) {
			t.Errorf("message %q lacks %q", rpc.Message, p)
		}
	}
}

// realTempDir is t.TempDir with symlinks resolved (macOS's /var), as the
// sandbox reports it.
func realTempDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newTestHostFS(t *testing.T) (*hostFS, string) {
	root := realTempDir(t)
	f, err := newHostFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return f, root
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHostFSRead(t *testing.T) {
	f, root := newTestHostFS(t)
	abs := filepath.Join(root, "a.txt")
	writeTestFile(t, abs, "one\ntwo\nthree\nfour")
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"path": abs}, "one\ntwo\nthree\nfour"},
		{map[string]any{"path": "a.txt"}, "one\ntwo\nthree\nfour"},
		{map[string]any{"path": abs, "line": 2, "limit": 2}, "two\nthree\n"},
		{map[string]any{"path": abs, "line": 3}, "three\nfour"},
		{map[string]any{"path": abs, "line": 0, "limit": 1}, "one\n"},
		{map[string]any{"path": abs, "line": 4, "limit": 5}, "four"},
		{map[string]any{"path": abs, "line": 9}, ""},
		{map[string]any{"path": abs, "limit": 0}, ""},
	} {
		c.params["sessionId"] = "s"
		var r acp.ReadTextFileResponse
		if mustInvoke(t, f.readTextFile, c.params, &r); r.Content != c.want {
			t.Errorf("%v: got %q, want %q", c.params, r.Content, c.want)
		}
	}
	for _, c := range []struct {
		params map[string]any
		code   int
		want   string
	}{
		{map[string]any{"path": "missing.txt"}, jsonrpc.ResourceNotFound, "missing.txt"},
		{map[string]any{"path": "a.txt/under-a-file"}, jsonrpc.ResourceNotFound, "a.txt/under-a-file"},
		{map[string]any{"path": root}, jsonrpc.InvalidParams, "not a regular file"},
		{map[string]any{}, jsonrpc.InvalidParams, "path is required"},
		{map[string]any{"path": abs, "line": -1}, jsonrpc.InvalidParams, "negative"},
	} {
		c.params["sessionId"] = "s"
		_, err := invoke(t, f.readTextFile, c.params)
		wantRPCError(t, err, c.code, c.want)
	}
}

func TestHostFSReadRefusesNonText(t *testing.T) {
	f, root := newTestHostFS(t)
	writeTestFile(t, filepath.Join(root, "nul.bin"), "abc\x00def")
	writeTestFile(t, filepath.Join(root, "latin1.txt"), "caf\xe9\n")
	for _, name := range []string{"nul.bin", "latin1.txt"} {
		_, err := invoke(t, f.readTextFile, map[string]any{"sessionId": "s", "path": name})
		wantRPCError(t, err, jsonrpc.InvalidParams, name, "not a text file")
	}
	// Over the limit by one byte (sparse, so cheap to make).
	big := filepath.Join(root, "big.txt")
	writeTestFile(t, big, "")
	if err := os.Truncate(big, hostMaxReadBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err := invoke(t, f.readTextFile, map[string]any{"sessionId": "s", "path": big})
	wantRPCError(t, err, jsonrpc.InvalidParams, "too large")
}

func TestHostFSWrite(t *testing.T) {
	f, root := newTestHostFS(t)
	if out := mustInvoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": filepath.Join(root, "x/y/z.txt"), "content": "héllo\n"}, nil); out != "{}" {
		t.Errorf("result %s, want {}", out)
	}
	if b, err := os.ReadFile(filepath.Join(root, "x/y/z.txt")); err != nil || string(b) != "héllo\n" {
		t.Fatalf("read back %q, %v", b, err)
	}

	// Replacing keeps the mode and leaves no temporary file behind.
	p := filepath.Join(root, "script.sh")
	writeTestFile(t, p, "old")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	mustInvoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": "script.sh", "content": "new"}, nil)
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("mode after write: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if tmp, _ := filepath.Glob(filepath.Join(root, ".*.tmp-*")); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}

	for _, p := range []string{"x", root} {
		_, err := invoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": p, "content": "no"})
		wantRPCError(t, err, jsonrpc.InvalidParams, "not a regular file")
	}
}

func TestHostFSOutsideRoot(t *testing.T) {
	f, root := newTestHostFS(t)
	outside := realTempDir(t)
	secret := filepath.Join(outside, "secret.txt")
	writeTestFile(t, secret, "secret")
	for name, target := range map[string]string{"link": outside, "file-link": secret} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{secret, "../" + filepath.Base(outside) + "/secret.txt", "link/secret.txt", "file-link", "link/new.txt"} {
		_, err := invoke(t, f.readTextFile, map[string]any{"sessionId": "s", "path": p})
		wantRPCError(t, err, jsonrpc.InvalidParams, p, root, "outside")
		_, err = invoke(t, f.writeTextFile, map[string]any{"sessionId": "s", "path": p, "content": "pwned"})
		wantRPCError(t, err, jsonrpc.InvalidParams, p, root, "outside")
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("the file outside was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("a file was created outside the root")
	}
}
