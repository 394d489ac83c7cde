//go:build !linux

package bleveindex

import "errors"

// Exchange is Linux-only (renameat2); elsewhere Rebuild uses two renames.
// A variable so tests can take the fallback path.
var Exchange = func(a, b string) error {
	return errors.New("atomic exchange unsupported")
}
