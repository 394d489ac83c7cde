package server

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/openheim/openheim/runtime/atomicfile"
)

// TokenFileName is the file in the data directory that keeps the token
// `openheim serve` and `openheim mcp serve --http` require when none is
// given.
const TokenFileName = "serve_token"

// StoredToken is the token of the data directory.
type StoredToken struct {
	Value string
	Path  string
	New   bool // made by this call
	// Replaced says why an existing file was not used (its mode let other
	// users read it, or it held no valid token); "" when there was none or
	// it was used.
	Replaced string
}

// tokenBytes of randomness: 256 bits, 43 URL-safe characters.
const tokenBytes = 32

// LoadToken returns the token kept in dir, making it on first use: random
// (crypto/rand), URL-safe, written 0600 in one step so no reader sees half
// a token, and kept across restarts. A file other users could read (or
// that is not a plain file, or holds no valid token) is replaced by a new
// token: its token may have been seen.
func LoadToken(dir string) (StoredToken, error) {
	st := StoredToken{Path: filepath.Join(dir, TokenFileName)}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return st, fmt.Errorf("token: %w", err)
	}
	for range 3 {
		tok, why, err := readToken(st.Path)
		if err != nil {
			return st, fmt.Errorf("token: %w", err)
		}
		if tok != "" {
			st.Value = tok
			return st, nil
		}
		tok = newToken()
		won, err := writeToken(st.Path, tok, why != "")
		if err != nil {
			return st, fmt.Errorf("token: writing %s: %w", st.Path, err)
		}
		if won {
			st.Value, st.New, st.Replaced = tok, true, why
			return st, nil
		}
		// Another process made the file first: use its token.
	}
	return st, fmt.Errorf("token: %s keeps changing", st.Path)
}

func newToken() string {
	b := make([]byte, tokenBytes)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readToken returns the file's token; "" and no reason when there is no
// file, "" and why when it must be replaced.
func readToken(path string) (tok, why string, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	if !fi.Mode().IsRegular() {
		return "", "it is not a regular file", nil
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Sprintf("its mode %04o let other users read or change it", fi.Mode().Perm()), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return "", "it changed while being read", nil
	}
	b, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return "", "", err
	}
	tok = strings.TrimSpace(string(b))
	if !validToken(tok) {
		return "", "it holds no valid token", nil
	}
	return tok, "", nil
}

// validToken accepts what newToken makes, and tokens a person wrote into
// the file: at least 22 URL-safe characters (128 bits as base64).
func validToken(t string) bool {
	if len(t) < 22 {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// writeToken stores tok at path, 0600 from its first byte: a hard link
// makes the file only if none exists (false when another process was
// first), a rename replaces one.
func writeToken(path, tok string, replace bool) (bool, error) {
	err := atomicfile.Writer{Perm: 0o600, NoReplace: !replace}.Write(path, []byte(tok+"\n"))
	if !replace && errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	return err == nil, err
}
