//go:build linux

package confine

import (
	"os"
	"runtime"
	"strconv"
)

// rootOf makes a handle of its own for the directory f, opened as name
// below parent. Through /proc/self/fd it is the very directory f is,
// whatever happened to name since; without /proc it is opened by name.
func rootOf(f *os.File, parent *os.Root, name string) (*os.Root, error) {
	h, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	runtime.KeepAlive(f)
	if err == nil {
		return h, nil
	}
	return rootByName(f, parent, name)
}
