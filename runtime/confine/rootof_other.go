//go:build !linux

package confine

import "os"

// rootOf makes a handle of its own for the directory f, opened as name
// below parent. Without Linux's /proc/self/fd it is opened by name again
// and checked to be the same directory.
func rootOf(f *os.File, parent *os.Root, name string) (*os.Root, error) {
	return rootByName(f, parent, name)
}
