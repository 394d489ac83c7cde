//go:build !linux

package memory

import "errors"

// exchange is Linux-only (renameat2); elsewhere Rebuild uses two renames.
// A variable so tests can take the fallback path.
var exchange = func(a, b string) error {
	return errors.New("atomic exchange unsupported")
}
