package config

// Comment-preserving edits of config.toml for `openheim mcp add` and
// `openheim mcp rm`. The file is never re-encoded: a small line scanner finds
// the table boundaries, lines are inserted or cut, and the result is checked
// three ways before it replaces the original: it must parse, it must decode
// to the original data plus (or minus) exactly the one server, and it must
// load and validate like any config.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/openheim/openheim/runtime/atomicfile"
)

// AddMCPServer appends a [mcp_servers.<name>] table to the config file at
// path ("" means DefaultPath()), creating the file (0600, parent directories
// 0700) if it is missing and keeping every other byte of it as it was. The
// table goes after the last [mcp_servers.*] table of the file, or at its end
// when there is none.
//
// It writes command, args, env, cwd, url and headers when set (env and
// headers as inline tables), tool_timeout_secs and startup_timeout_secs when
// non-zero and enabled_tools / disabled_tools when non-empty; a relative cwd
// is written as given, so it is resolved against the config file's directory.
// The name is quoted when it is not a bare key.
//
// A server holding a secret (MCPServer.HoldsSecret: a header or env value,
// a secret-looking arg, a URL with credentials) leaves the file readable by
// its owner only: group and other permissions are removed (0644 becomes
// 0600); a new file is always 0600.
//
// It fails, leaving the file untouched, when the server already exists (as a
// table, dotted keys or an inline table), when the file does not parse, and
// when the result would not load and validate: the server is checked like
// one written by hand (command or url, https:// for headers to a remote host,
// valid globs, ...), and so is the rest of the file.
func AddMCPServer(path, name string, s MCPServer) error {
	if err := checkServerName(name); err != nil {
		return err
	}
	if err := checkUTF8(name, s); err != nil {
		return err
	}
	path, err := editPath(path)
	if err != nil {
		return err
	}
	data, mode, err := readForEdit(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return err
	}
	before, md, err := decodeForEdit(path, data)
	if err != nil {
		return err
	}
	server := toml.Key{"mcp_servers", name}.String()
	if md.IsDefined("mcp_servers", name) {
		return fmt.Errorf("config: %s: %s already exists; remove it first or edit the file", path, server)
	}
	lines, err := scanTOML(data)
	if err != nil {
		return cannotEdit(path, "add", server, err)
	}
	for _, l := range lines {
		if l.kind == lineHeader {
			break
		}
		if l.kind == lineKeyValue && len(l.key) == 1 && l.key[0] == "mcp_servers" {
			// TOML forbids adding to an inline table (BurntSushi/toml
			// tolerates it, other readers do not).
			return fmt.Errorf("config: %s: mcp_servers is set as a value (mcp_servers = { ... }), which a [%s] table cannot be added to; edit the file by hand", path, server)
		}
	}

	out := insertTable(data, lines, formatServer(name, s, lineEnding(data)))

	after, md2, err := decodeForEdit(path, out)
	if err != nil {
		// E.g. mcp_servers = { ... } cannot be extended by a table.
		return cannotEdit(path, "add", server, err)
	}
	if !md2.IsDefined("mcp_servers", name) || !sameExceptServer(before, after, name) {
		return cannotEdit(path, "add", server, errors.New("the result would change other settings"))
	}
	var got struct {
		Servers map[string]toml.Primitive `toml:"mcp_servers"`
	}
	var written MCPServer
	md3, err := toml.Decode(string(out), &got)
	if err != nil {
		return cannotEdit(path, "add", server, err)
	}
	if err := md3.PrimitiveDecode(got.Servers[name], &written); err != nil ||
		!reflect.DeepEqual(compactServer(written), compactServer(s)) {
		return cannotEdit(path, "add", server, errors.New("the written table does not read back as the server"))
	}

	if missing {
		mode = 0o600
	}
	if s.HoldsSecret() {
		mode &^= 0o077
	}
	return replaceValidated(path, out, mode)
}

// RemoveMCPServer deletes the server's tables from the config file at path
// ("" means DefaultPath()): the [mcp_servers.<name>] header, its key lines
// and comments up to the next table (comments directly above the next table
// are left to it), every [mcp_servers.<name>.*] sub-table, and the comment
// lines directly above each removed header (no blank line between). Every
// other byte stays as it was.
//
// It fails, leaving the file untouched, when the server is not in the file,
// when it is written in a form that cannot be cut out safely (an inline
// table, dotted keys, an array of tables), and when the result would not load
// and validate.
func RemoveMCPServer(path, name string) error {
	path, err := editPath(path)
	if err != nil {
		return err
	}
	data, mode, err := readForEdit(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config: %s does not exist", path)
	} else if err != nil {
		return err
	}
	before, md, err := decodeForEdit(path, data)
	if err != nil {
		return err
	}
	server := toml.Key{"mcp_servers", name}.String()
	if !md.IsDefined("mcp_servers", name) {
		return fmt.Errorf("config: %s: there is no MCP server %q (no %s table)", path, name, server)
	}
	lines, err := scanTOML(data)
	if err != nil {
		return cannotEdit(path, "remove", server, err)
	}

	remove := make([]bool, len(lines))
	found := false
	for i, l := range lines {
		if l.kind == lineHeader && !l.array && len(l.key) >= 2 && l.key[0] == "mcp_servers" && l.key[1] == name {
			found = true
			from, to := tableRange(lines, i)
			for j := from; j < to; j++ {
				remove[j] = true
			}
		}
	}
	if !found {
		return fmt.Errorf("config: %s: %s is written as an inline table or with dotted keys, which cannot be removed automatically; edit the file by hand", path, server)
	}
	bridgeGaps(lines, remove)
	// A server cut from the end of the file takes with it the blank line
	// that separated it from what came before, so that add then remove
	// gives back the original bytes.
	if n := len(lines); n > 0 && remove[n-1] {
		j := n - 1
		for j > 0 && remove[j-1] {
			j--
		}
		if j > 0 && lines[j-1].kind == lineBlank {
			remove[j-1] = true
		}
	}
	var buf bytes.Buffer
	for i, l := range lines {
		if !remove[i] {
			buf.Write(data[l.start:l.end])
		}
	}
	out := buf.Bytes()

	after, md2, err := decodeForEdit(path, out)
	if err != nil {
		return cannotEdit(path, "remove", server, err)
	}
	if md2.IsDefined("mcp_servers", name) {
		return fmt.Errorf("config: %s: part of %s is written outside its [%s] tables (dotted keys, an inline table or an array of tables), which cannot be removed automatically; edit the file by hand", path, server, server)
	}
	if !sameExceptServer(before, after, name) {
		return cannotEdit(path, "remove", server, errors.New("the result would change other settings"))
	}
	return replaceValidated(path, out, mode)
}

func cannotEdit(path, verb, server string, err error) error {
	return fmt.Errorf("config: %s: cannot %s %s automatically (%v); edit the file by hand", path, verb, server, err)
}

// checkServerName accepts any name TOML can hold as a key (quoted when it is
// not bare), except the empty one and names with control characters, which
// are surely mistakes.
func checkServerName(name string) error {
	switch {
	case name == "":
		return errors.New("config: an MCP server needs a non-empty name")
	case !utf8.ValidString(name):
		return fmt.Errorf("config: MCP server name %q is not valid UTF-8", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("config: MCP server name %q contains control characters", name)
	}
	return nil
}

// checkUTF8 rejects strings TOML cannot hold, with the key they were for.
func checkUTF8(name string, s MCPServer) error {
	key := func(k string) string { return toml.Key{"mcp_servers", name, k}.String() }
	check := func(k string, vals ...string) error {
		for _, v := range vals {
			if !utf8.ValidString(v) {
				if k == "env" || k == "headers" || k == "args" || k == "url" {
					return keyErr(key(k), "an entry is not valid UTF-8 (not shown: it may be a secret)")
				}
				return keyErr(key(k), "%q is not valid UTF-8", v)
			}
		}
		return nil
	}
	for _, f := range []struct {
		key  string
		vals []string
	}{
		{"command", []string{s.Command}}, {"args", s.Args}, {"cwd", []string{s.Cwd}}, {"url", []string{s.URL}},
		{"env", slices.Concat(slices.Collect(maps.Keys(s.Env)), slices.Collect(maps.Values(s.Env)))},
		{"headers", slices.Concat(slices.Collect(maps.Keys(s.Headers)), slices.Collect(maps.Values(s.Headers)))},
		{"enabled_tools", s.EnabledTools}, {"disabled_tools", s.DisabledTools},
	} {
		if err := check(f.key, f.vals...); err != nil {
			return err
		}
	}
	return nil
}

// editPath makes path absolute and, when it is a symlink, follows it so the
// rename replaces the file rather than the link.
func editPath(path string) (string, error) {
	if path == "" {
		path = DefaultPath()
	}
	path = expandTilde(path)
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// readForEdit returns the file's bytes and permission bits; a missing file
// is reported with an error matching fs.ErrNotExist.
func readForEdit(path string) ([]byte, fs.FileMode, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	if err != nil {
		return nil, 0, fmt.Errorf("config: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("config: %s is not a regular file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("config: %w", err)
	}
	return data, fi.Mode().Perm(), nil
}

func decodeForEdit(path string, data []byte) (map[string]any, toml.MetaData, error) {
	m := map[string]any{}
	md, err := toml.Decode(string(data), &m)
	if err != nil {
		return nil, md, &fileError{path: path, err: err}
	}
	return m, md, nil
}

// sameExceptServer reports whether two decoded files differ at most in
// mcp_servers.<name>. They are compared through their TOML encoding, which
// sorts keys and, unlike reflect.DeepEqual, treats nan as equal to itself.
func sameExceptServer(a, b map[string]any, name string) bool {
	strip := func(m map[string]any) map[string]any {
		m = maps.Clone(m)
		if servers, ok := m["mcp_servers"].(map[string]any); ok {
			servers = maps.Clone(servers)
			delete(servers, name)
			m["mcp_servers"] = servers
			if len(servers) == 0 {
				// An [mcp_servers] table made only by [mcp_servers.<name>].
				delete(m, "mcp_servers")
			}
		}
		return m
	}
	a, b = strip(a), strip(b)
	ea, errA := toml.Marshal(a)
	eb, errB := toml.Marshal(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(ea, eb)
}

// compactServer makes empty and nil lists and tables compare equal.
func compactServer(s MCPServer) MCPServer {
	if len(s.Args) == 0 {
		s.Args = nil
	}
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
	if len(s.EnabledTools) == 0 {
		s.EnabledTools = nil
	}
	if len(s.DisabledTools) == 0 {
		s.DisabledTools = nil
	}
	return s
}

// replaceValidated writes data to a temporary file next to path, loads it
// like any config and only then renames it over path, so a failed check or
// a crash leaves the original as it was. Parent directories created for a
// new file are removed again on failure.
func replaceValidated(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, serr := os.Stat(d); serr == nil || !errors.Is(serr, fs.ErrNotExist) || filepath.Dir(d) == d {
			break
		}
		created = append(created, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer func() {
		if err != nil {
			for _, d := range created { // deepest first; Remove refuses non-empty ones
				_ = os.Remove(d)
			}
		}
	}()

	var invalid error // what loading the new file said, returned as it is
	err = atomicfile.Writer{Perm: mode, Check: func(tmp string) error {
		_, invalid = LoadWith(tmp, io.Discard)
		// Name the real file, not the temporary one.
		if fe, ok := errors.AsType[*fileError](invalid); ok {
			invalid = &fileError{path: path, err: fe.err}
		}
		return invalid
	}}.Write(path, data)
	switch {
	case invalid != nil:
		return invalid
	case err != nil:
		return fmt.Errorf("config: %w", err)
	}
	return nil
}
