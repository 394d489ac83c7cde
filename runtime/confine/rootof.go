package confine

import (
	"io/fs"
	"os"
)

// rootByName opens name below parent as a handle and checks that it is
// the directory f. The open has no O_DIRECTORY (os.Root gives no way to
// ask for one), so a FIFO swapped in between the two opens could block
// it: that window is what /proc/self/fd closes on Linux.
func rootByName(f *os.File, parent *os.Root, name string) (*os.Root, error) {
	h, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	a, err1 := f.Stat()
	b, err2 := h.Stat(".")
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		h.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: errChanged}
	}
	return h, nil
}
