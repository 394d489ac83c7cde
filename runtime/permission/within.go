package permission

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// maxLinkHops bounds symlink expansion, as the kernel's ELOOP does.
const maxLinkHops = 255

// Within reports whether path p is inside the directory root (root itself
// included) once symlinks are followed as the kernel would follow them on
// open: every component of p that exists is resolved, in order (so
// "dir/link/.." is where the link leads, not "dir"); the components past
// the last existing one are taken as written, since creating them cannot
// follow a link that does not exist yet. root is resolved the same way, so
// a work_dir reached through a symlink matches its real path too.
//
// A relative p, a NUL byte or a symlink loop is never inside. This is a
// judgement made before an external agent acts on its own, not a
// confinement: openheim opens nothing here (the agent does), and paths
// outside the root must be resolved too (allow_outside), which
// runtime/confine refuses by design. What openheim itself opens goes
// through runtime/confine, where the kernel refuses a path swapped for a
// symlink after it was judged.
func Within(root, p string) bool {
	rr, ok := resolvePath(root)
	if !ok {
		return false
	}
	pr, ok := resolvePath(p)
	if !ok {
		return false
	}
	return pr == rr || rr == "/" || strings.HasPrefix(pr, rr+"/")
}

// resolvePath returns the clean absolute path p leads to (see Within);
// false when p is not absolute, holds a NUL byte or loops.
func resolvePath(p string) (string, bool) {
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", false
	}
	out := "/"
	rest := strings.Split(p, "/")
	hops := 0
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch c {
		case "", ".":
			continue
		case "..":
			out = filepath.Dir(out)
			continue
		}
		next := filepath.Join(out, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing (or unreadable): the rest names what would be
			// created, lexically.
			return filepath.Join(append([]string{out}, rest[i:]...)...), true
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			out = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", false
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false
		}
		if filepath.IsAbs(target) {
			out = "/"
		}
		rest = append(strings.Split(target, "/"), rest[i+1:]...)
		i = -1
	}
	return out, true
}

// outsideAllowed reports whether an allow_outside pattern names the
// resolved path p. A pattern's fixed leading directories are resolved
// too, so "/tmp/**" still names /tmp's files where /tmp is a symlink; a
// link inside an allowed folder that leads elsewhere is judged by where it
// leads.
func (r Rules) outsideAllowed(p string) bool {
	for _, pat := range r.AllowOutside {
		base, rest := doublestar.SplitPattern(pat)
		if rb, ok := resolvePath(base); ok {
			base = rb
		}
		full := escapeMeta(base)
		if rest != "" {
			full = strings.TrimSuffix(full, "/") + "/" + rest
		}
		if ok, err := doublestar.Match(full, p); ok && err == nil {
			return true
		}
	}
	return false
}

// escapeMeta makes a literal path safe to use as the head of a pattern.
func escapeMeta(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
