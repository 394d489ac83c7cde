//go:build linux

package fschannel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/confine/confinetest"
)

// TestBoundaryRace swaps a directory of the work directory for a link to an
// outside folder, and a file for a FIFO, as fast as it can, while every
// action of the channel runs in a loop on paths through them and a watch
// is kept on the tree while files appear outside. Nothing outside may be
// read, listed, reported, written, renamed, created or deleted, and no
// call may hang.
func TestBoundaryRace(t *testing.T) {
	race := confinetest.NewRace(t)
	rec := &recorder{}
	c, err := New(race.Root, rec.send)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, f := confinetest.Dir, confinetest.File
	actions := []struct{ req, ok string }{
		{`{"action":"read","path":"` + d + `/secret.txt"}`, "file_content"},
		{`{"action":"read","path":"` + d + `/sub/deep.txt"}`, "file_content"},
		{`{"action":"read","path":"` + f + `"}`, "file_content"},
		{`{"action":"list","path":"` + d + `"}`, "file_list"},
		{`{"action":"list","path":"` + d + `","recursive":true}`, "file_list"},
		{`{"action":"list","path":"","recursive":true}`, "file_list"},
		{`{"action":"write","path":"` + d + `/w.txt","content":"written"}`, "write_success"},
		{`{"action":"write","path":"` + d + `/victim","content":"inside\n"}`, "write_success"},
		{`{"action":"rename","from":"` + d + `/r1","to":"` + d + `/r2"}`, "rename_success"},
		{`{"action":"rename","from":"` + d + `/r2","to":"` + d + `/r1"}`, "rename_success"},
		{`{"action":"delete","path":"` + d + `/victim"}`, "delete_success"},
		{`{"action":"mkdir","path":"` + d + `/made/deeper"}`, "mkdir_success"},
		{`{"action":"delete","path":"` + d + `/made"}`, "delete_success"},
		{`{"action":"watch","path":"` + d + `"}`, "watching"},
		{`{"action":"watch","path":""}`, "watching"},
	}
	// Files keep appearing outside: a watch that followed the link out
	// would report them.
	var quit atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !quit.Load(); i++ {
			p := filepath.Join(race.Outside, fmt.Sprintf("evt-%d", i%50))
			os.WriteFile(p, []byte("x"), 0o644)
			os.Remove(p)
			time.Sleep(100 * time.Microsecond)
		}
	})
	defer func() { quit.Store(true); wg.Wait() }()

	worked := map[string]int{}
	stop := race.Start(t)
	n := 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		for _, a := range actions {
			for _, msg := range handleWithin(t, c, rec, a.req) {
				data, _ := json.Marshal(msg)
				if race.Leaked(string(data)) {
					t.Errorf("escape: %s answered %s", a.req, data)
				}
				if strings.Contains(string(data), `"type":"`+a.ok+`"`) {
					worked[a.ok]++
				}
			}
			n++
		}
	}
	stop()
	c.Close()
	for _, msg := range rec.take() { // events sent since the last call
		if data, _ := json.Marshal(msg); race.Leaked(string(data)) {
			t.Errorf("escape: event %s", data)
		}
	}
	quit.Store(true)
	wg.Wait()
	race.CheckOutside(t)
	t.Logf("%d requests during %d swaps; answers that got through: %v", n, race.Swaps.Load(), worked)
	if race.Swaps.Load() < 10 {
		t.Fatalf("only %d swaps: the boundary was not raced", race.Swaps.Load())
	}
	for _, a := range actions {
		if worked[a.ok] == 0 {
			t.Errorf("no %s answer: the test proves nothing about it", a.ok)
		}
	}
}

// handleWithin handles one request and returns every message sent since the
// previous call (its reply, and events of the watch); a request that does
// not return within a generous deadline fails the test as a hang.
func handleWithin(t *testing.T, c *Channel, rec *recorder, req string) []any {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); c.Handle(context.Background(), json.RawMessage(req)) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("hang: %s did not return", req)
	}
	return rec.take()
}
