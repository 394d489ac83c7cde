package bleveindex

import "golang.org/x/sys/unix"

// Exchange atomically swaps two directory entries (renameat2 with
// RENAME_EXCHANGE), so dir is never absent while Rebuild replaces it.
// Filesystems without support return EINVAL and Rebuild falls back to two
// renames. A variable so tests can take the fallback path.
var Exchange = func(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
