//go:build unix

package memory

import (
	"os"
	"syscall"
)

// mapFile maps the file at path read-only and returns its bytes and the
// function that unmaps them. A new process reads notes.heads this way: the
// page cache's own pages, where reading would fault in and fill as many
// fresh heap pages (at 100,000 notes, ~3 MB: most of what a `memory search`
// spent outside bleve). The file is only ever replaced by rename, never
// rewritten in place, so the mapping's bytes do not change under it.
func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size <= 0 || size > headsMaxSize {
		return nil, nil, errHeads
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
