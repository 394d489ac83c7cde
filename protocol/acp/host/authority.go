//go:build unix

package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/confine"
)

// hostMaxReadBytes: a read answer usually lands in the agent's context.
const hostMaxReadBytes = 10 << 20

// hostError puts the reason in the message itself: agents built on the
// TypeScript SDK show their model error.message and drop data, and a bare
// "Invalid params" gives the model nothing to act on.
func hostError(code int, format string, a ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: jsonrpc.Message(code) + ": " + fmt.Sprintf(format, a...)}
}

func decodeHostParams(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		return hostError(jsonrpc.InvalidParams, "%v", err)
	}
	return nil
}

// hostFS answers an external agent's fs/* requests through the work
// directory's root, the kernel-enforced confinement of openheim's own file
// tools (nothing outside it, links followed inside only, special files
// refused), so driving Claude Code or Codex grants nothing the built-in
// agent could not do. Whether the request may touch the path at all is
// the gate's (gateFS) before it gets here.
type hostFS struct{ root *confine.Root }

func newHostFS(root string) (*hostFS, error) {
	r, err := confine.Open(root)
	if err != nil {
		return nil, err
	}
	return &hostFS{root: r}, nil
}

// check refuses a path the agent may not name (ACP says absolute; a
// relative one is taken from root, as the file tools do) before anything
// is looked at.
func (f *hostFS) check(p string) error {
	if p == "" {
		return hostError(jsonrpc.InvalidParams, "path is required")
	}
	if _, err := f.root.Name(p); err != nil {
		return hostError(jsonrpc.InvalidParams, "%v", err)
	}
	return nil
}

// readTextFile serves fs/read_text_file: {sessionId, path, line?, limit?}
// -> {content}.
func (f *hostFS) readTextFile(_ context.Context, params json.RawMessage) (any, error) {
	var r acp.ReadTextFileRequest
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	if (r.Line != nil && *r.Line < 0) || (r.Limit != nil && *r.Limit < 0) {
		return nil, hostError(jsonrpc.InvalidParams, "line and limit must not be negative")
	}
	if err := f.check(r.Path); err != nil {
		return nil, err
	}
	// Open refuses a FIFO or device before it could block the read.
	file, fi, err := f.root.Open(r.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil, hostError(jsonrpc.ResourceNotFound, "file not found: %s", r.Path)
	case errors.Is(err, confine.ErrOutside):
		return nil, hostError(jsonrpc.InvalidParams, "%v", err)
	case errors.Is(err, confine.ErrSpecial):
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a regular file", r.Path)
	case err != nil:
		return nil, hostError(jsonrpc.Internal, "cannot read %s: %v", r.Path, err)
	}
	defer file.Close()
	if fi.IsDir() {
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a regular file", r.Path)
	}
	// Bounded whatever the size said: the file may grow meanwhile.
	b, err := io.ReadAll(io.LimitReader(file, hostMaxReadBytes+1))
	if err != nil {
		return nil, hostError(jsonrpc.Internal, "cannot read %s: %v", r.Path, err)
	}
	if len(b) > hostMaxReadBytes {
		return nil, hostError(jsonrpc.InvalidParams, "%s is too large (over %d bytes)", r.Path, hostMaxReadBytes)
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a text file (it contains NUL bytes or invalid UTF-8)", r.Path)
	}
	return acp.ReadTextFileResponse{Content: lineWindow(string(b), r.Line, r.Limit)}, nil
}

// lineWindow returns limit lines of s from the 1-based line on, each with
// its newline so windows concatenate back to the file. Line 0 is taken as 1
// (the schema allows it); a window past the end is empty.
func lineWindow(s string, line, limit *int) string {
	lines := strings.SplitAfter(s, "\n")
	from, to := 0, len(lines)
	if line != nil && *line > 1 {
		from = min(*line-1, to)
	}
	if limit != nil {
		to = min(from+*limit, to)
	}
	return strings.Join(lines[from:to], "")
}

// writeTextFile serves fs/write_text_file: {sessionId, path, content} ->
// {}. The schema's result is an object and some Rust agents cannot parse a
// null one, so `{}` it is.
func (f *hostFS) writeTextFile(_ context.Context, params json.RawMessage) (any, error) {
	var r acp.WriteTextFileRequest
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	if err := f.check(r.Path); err != nil {
		return nil, err
	}
	if fi, err := f.root.Stat(r.Path); err == nil && !fi.Mode().IsRegular() {
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a regular file", r.Path)
	}
	// Parents are created, the file replaced atomically, its mode kept.
	err := f.root.WriteFile(r.Path, []byte(r.Content))
	var pe *confine.ParentError
	switch {
	case err == nil:
		return acp.EmptyResponse{}, nil
	case errors.Is(err, confine.ErrOutside):
		return nil, hostError(jsonrpc.InvalidParams, "%v", err)
	case errors.Is(err, confine.ErrSpecial), errors.Is(err, syscall.EISDIR):
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a regular file", r.Path)
	case errors.As(err, &pe):
		return nil, hostError(jsonrpc.Internal, "cannot create parent directories of %s: %v", r.Path, pe.Err)
	}
	return nil, hostError(jsonrpc.Internal, "cannot write %s: %v", r.Path, err)
}
