//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// fsType names dir's filesystem, and says when an ext4 has no journal
// (creating files there is slow under churn: see storageFloor).
func fsType(dir string) string {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return "filesystem"
	}
	switch st.Type {
	case 0x01021994:
		return "tmpfs"
	case 0xEF53:
		if noJournal(dir) {
			return "ext4 (no journal)"
		}
		return "ext4"
	case 0x9123683E:
		return "btrfs"
	case 0x58465342:
		return "xfs"
	case 0x794c7630:
		return "overlayfs"
	}
	return fmt.Sprintf("filesystem (type %#x)", st.Type)
}

// noJournal: an ext4 with a journal has /proc/fs/jbd2/<device>-8. Where
// /proc/fs/jbd2 cannot be seen (a container), it does not say.
func noJournal(dir string) bool {
	if _, err := os.Stat("/proc/fs/jbd2"); err != nil {
		return false
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return false
	}
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return false
	}
	_, err = os.Stat("/proc/fs/jbd2/" + filepath.Base(link) + "-8")
	return os.IsNotExist(err)
}
