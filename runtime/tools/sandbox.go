package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Sandbox confines file tools to one directory tree.
//
// Checking the cleaned path lexically is not enough: a symlink inside the
// tree can point anywhere, and a file that does not exist yet can sit below
// such a link. Resolve therefore follows every symlink of the path itself,
// including dangling ones, and judges the real location. It returns that
// real path so the caller operates on exactly what was checked rather than
// letting the kernel follow the links again.
type Sandbox struct {
	// Root is absolute and free of symlinks.
	Root string
}

// NewSandbox returns a sandbox rooted at dir, which must be a directory.
// An empty dir means the current directory.
func NewSandbox(dir string) (*Sandbox, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("work directory %q: %w", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("work directory %q: %w", dir, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("work directory %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("work directory %q is not a directory", dir)
	}
	return &Sandbox{Root: root}, nil
}

// maxSymlinks bounds link chains the way the kernel does (ELOOP), so a
// cycle of links cannot spin Resolve forever.
const maxSymlinks = 40

// Resolve maps a path argument to a real absolute path inside Root.
// Relative paths are taken from Root and the empty path means Root.
func (s *Sandbox) Resolve(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	joined := p
	if !filepath.IsAbs(p) {
		joined = filepath.Join(s.Root, p)
	}
	real, err := realPath(filepath.Clean(joined))
	if err != nil {
		// Failing closed is what matters here; the cause (a link loop, a
		// directory without search permission) is passed on as is.
		return "", fmt.Errorf("path '%s': %w", p, err)
	}
	if !s.contains(real) {
		return "", s.outside(p)
	}
	return real, nil
}

func (s *Sandbox) outside(p string) error {
	return fmt.Errorf("path '%s' is outside the work directory '%s'", p, s.Root)
}

// contains reports whether the clean absolute path abs is Root or below it.
func (s *Sandbox) contains(abs string) bool {
	if abs == s.Root {
		return true
	}
	prefix := s.Root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(abs, prefix)
}

// Rel returns abs relative to Root for messages, or abs itself when it is
// not below Root.
func (s *Sandbox) Rel(abs string) string {
	r, err := filepath.Rel(s.Root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(r)
}

var errTooManyLinks = errors.New("too many levels of symbolic links")

// realPath is filepath.EvalSymlinks for paths that may not fully exist: it
// resolves component by component, follows dangling links to their target,
// and keeps missing components as they are. Unlike resolving only the
// longest existing prefix, this also sees links reached through ".." in a
// link target, and a dangling link whose target is outside.
func realPath(abs string) (string, error) {
	resolved := string(filepath.Separator)
	rest := abs
	links := 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, string(filepath.Separator))
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			links++
			if links > maxSymlinks {
				return "", errTooManyLinks
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			if filepath.IsAbs(target) {
				resolved = string(filepath.Separator)
			}
			// The target is spliced in front of what is left so its own
			// links and ".." are resolved relative to the link's directory.
			if rest != "" {
				target += string(filepath.Separator) + rest
			}
			rest = target
		case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			// Missing components are kept literally: nothing below them
			// exists, so there is no link left to follow until a ".."
			// brings the walk back to existing ground.
			resolved = next
		default:
			return "", err
		}
	}
	return resolved, nil
}
