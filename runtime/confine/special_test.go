//go:build unix

package confine

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test if f does not return within a generous deadline:
// an open that blocks on a FIFO would otherwise hang the test binary.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return: it blocks", what)
	}
}

func TestSpecialFilesRefused(t *testing.T) {
	r, _ := openTree(t)
	root := r.Path()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("fifo", filepath.Join(root, "fifo_link"))
	ln, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	specials := map[string]string{
		"fifo":      "a named pipe (FIFO)",
		"fifo_link": "a named pipe (FIFO)",
		"sock":      "a socket",
	}
	// A device node needs root to make; /dev/null is one to compare with.
	if err := syscall.Mknod(filepath.Join(root, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		specials["null"] = "a device"
	} else {
		t.Logf("no device node (%v): devices are covered by the Stat check shared with FIFOs", err)
	}
	for p, kind := range specials {
		want := "'" + p + "' is " + kind + ", not a regular file or directory"
		within(t, "Open("+p+")", func() {
			f, _, err := r.Open(p)
			if err == nil {
				f.Close()
			}
			if !errors.Is(err, ErrSpecial) || err.Error() != want {
				t.Errorf("Open(%s) = %v, want %q", p, err, want)
			}
		})
		within(t, "OpenDir("+p+")", func() {
			if d, err := r.OpenDir(p); err == nil {
				d.Close()
				t.Errorf("OpenDir(%s) succeeded", p)
			}
		})
		within(t, "WriteFile("+p+")", func() {
			if err := r.WriteFile(p, []byte("x")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("WriteFile(%s) = %v", p, err)
			}
		})
		d, err := r.OpenDir(".")
		if err != nil {
			t.Fatal(err)
		}
		within(t, "Dir.Open("+p+")", func() {
			if _, _, err := d.Open(p); !errors.Is(err, ErrSpecial) {
				t.Errorf("Dir.Open(%s) = %v", p, err)
			}
			if _, err := d.Sub(p); err == nil {
				t.Errorf("Dir.Sub(%s) succeeded", p)
			}
		})
		d.Close()
	}
	// The FIFO is still a FIFO: nothing replaced it.
	if fi, err := os.Lstat(filepath.Join(root, "fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("fifo after the refusals: %v, %v", fi, err)
	}
}

// A FIFO that takes the place of a regular file between the check and the
// open is caught by the open itself (O_NONBLOCK, then fstat).
func TestOpenRefusesFIFOAfterCheck(t *testing.T) {
	dir := t.TempDir()
	osr, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer osr.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "f"), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, "open of a FIFO", func() {
		f, err := osr.OpenFile("f", os.O_RDONLY|oNonblock, 0)
		if err != nil {
			t.Errorf("non-blocking open: %v", err)
			return
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || openable(fi.Mode()) {
			t.Errorf("opened FIFO taken as openable: %v %v", fi, err)
		}
	})
}
