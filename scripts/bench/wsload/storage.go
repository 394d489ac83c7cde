//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// storageFloor measures what the server's storage costs where its data
// lives: the mean time of an atomic file replace (create a temporary file,
// write a meta-sized body, fsync, rename it over the target), the pattern
// of a turn's meta save; a new session also creates its files. It varies
// by filesystem far more than anything openheim does: on ext4 without a
// journal, creating a file scans the inodes freed in the last seconds
// (the kernel's recently_deleted), so a busy server that replaces files
// pays ~1 ms a creation, against ~0.1 ms on journaled ext4 and ~0.02 ms on
// tmpfs. Each replace frees an inode, as the server's do: the first half
// warms that up, the second half is measured.
func storageFloor(dir string) (string, error) {
	d, err := os.MkdirTemp(dir, "storage-floor")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(d)
	body := make([]byte, 600)
	target := filepath.Join(d, "meta.json")
	const n = 1000
	var start time.Time
	for i := range 2 * n {
		if i == n {
			start = time.Now()
		}
		tmp := filepath.Join(d, fmt.Sprintf(".tmp-%d", i))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", err
		}
		_, err = f.Write(body)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, target)
		}
		if err != nil {
			return "", err
		}
	}
	mean := time.Since(start) / n
	return fmt.Sprintf("storage floor: an atomic file replace (create, write, fsync, rename) takes %.0f us on the %s holding %s (mean of %d)",
		float64(mean.Nanoseconds())/1e3, fsType(dir), dir, n), nil
}
