//go:build linux

package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/confine/confinetest"
)

// The host's fs/read_text_file and fs/write_text_file hold the boundary
// while a directory is swapped for a link out and a file for a FIFO: no
// outside content read, nothing written outside, no call hanging.
func TestHostFSBoundaryRace(t *testing.T) {
	race := confinetest.NewRace(t)
	f, err := newHostFS(race.Root)
	if err != nil {
		t.Fatal(err)
	}
	d := confinetest.Dir
	calls := []struct {
		h    hostHandler
		path string
	}{
		{f.readTextFile, d + "/secret.txt"},
		{f.readTextFile, filepath.Join(race.Root, d, "sub", "deep.txt")},
		{f.readTextFile, confinetest.File},
		{f.writeTextFile, d + "/new.txt"},
		{f.writeTextFile, d + "/sub/deep.txt"},
	}
	worked := 0
	stop := race.Start(t)
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		for _, c := range calls {
			raw, _ := json.Marshal(map[string]any{"sessionId": "s", "path": c.path, "content": "inside\n"})
			type answer struct {
				out []byte
				err error
			}
			done := make(chan answer, 1)
			go func() {
				res, err := c.h(context.Background(), raw)
				out, _ := json.Marshal(res)
				done <- answer{out, err}
			}()
			select {
			case a := <-done:
				if got := fmt.Sprintf("%s %v", a.out, a.err); race.Leaked(got) {
					t.Errorf("escape: %s answered %s", c.path, got)
				}
				if a.err == nil {
					worked++
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("hang: %s", c.path)
			}
		}
	}
	stop()
	race.CheckOutside(t)
	if worked == 0 {
		t.Fatal("no call got through: the test proves nothing")
	}
}

// A FIFO is refused at once, for reading and for writing.
func TestHostFSRefusesFIFO(t *testing.T) {
	f, root := newTestHostFS(t)
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, h := range []hostHandler{f.readTextFile, f.writeTextFile} {
		done := make(chan error, 1)
		go func() {
			_, err := invoke(t, h, map[string]any{"sessionId": "s", "path": "pipe", "content": "x"})
			done <- err
		}()
		select {
		case err := <-done:
			wantRPCError(t, err, jsonrpc.InvalidParams, "pipe", "not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatal("a FIFO blocked the host")
		}
	}
}
