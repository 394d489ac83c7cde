//go:build linux

package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/confine/confinetest"
)

// raceFor is how long the boundary is raced; calls run in a loop until then.
const raceFor = 3 * time.Second

// callDeadline is how long one call may take before it counts as a hang:
// generous, since a loaded machine under -race is slow, and a call blocked
// on a FIFO never returns at all.
const callDeadline = 20 * time.Second

// TestBoundaryRace swaps a directory of the work directory for a link to
// an outside folder, and a file for a FIFO, as fast as it can, while every
// file tool runs in a loop on paths through them. Nothing outside may be
// read, listed, written or changed, and no call may hang.
func TestBoundaryRace(t *testing.T) {
	race := confinetest.NewRace(t)
	reg, err := Builtins(Options{WorkDir: race.Root})
	if err != nil {
		t.Fatal(err)
	}
	d := confinetest.Dir
	calls := []struct{ tool, args, ok string }{
		{"read_file", `{"path":"` + d + `/secret.txt"}`, "inside"},
		{"read_file", `{"path":"` + d + `/sub/deep.txt"}`, "inside"},
		{"read_file", `{"path":"` + confinetest.File + `"}`, "plain inside"},
		{"list_dir", `{"path":"` + d + `"}`, "secret.txt"},
		{"list_dir", `{"path":"` + d + `/sub"}`, "deep.txt"},
		{"search", `{"pattern":"SECRET|inside","path":"` + d + `"}`, "inside"},
		{"search", `{"pattern":"SECRET|inside"}`, "inside"},
		{"write_file", `{"path":"` + d + `/new.txt","content":"written"}`, "Wrote"},
		{"write_file", `{"path":"` + d + `/sub/new.txt","content":"written"}`, "Wrote"},
		{"edit_file", `{"path":"` + d + `/edit.txt","old_string":"old","new_string":"new"}`, "Replaced"},
		{"edit_file", `{"path":"` + d + `/edit.txt","old_string":"new","new_string":"old"}`, "Replaced"},
	}
	worked := map[string]int{}
	stop := race.Start(t)
	n := 0
	for end := time.Now().Add(raceFor); time.Now().Before(end); {
		for _, c := range calls {
			tool, _ := reg.Get(c.tool)
			r := runWithin(t, tool, c.args)
			n++
			if race.Leaked(r.Content) {
				t.Errorf("escape: %s %s returned %q", c.tool, c.args, r.Content)
			}
			if !r.IsError && strings.Contains(r.Content, c.ok) {
				worked[c.tool]++
			}
		}
	}
	stop()
	race.CheckOutside(t)
	t.Logf("%d calls during %d swaps; calls that got through: %v", n, race.Swaps.Load(), worked)
	if race.Swaps.Load() < 10 {
		t.Fatalf("only %d swaps: the boundary was not raced", race.Swaps.Load())
	}
	for _, c := range calls {
		if worked[c.tool] == 0 {
			t.Errorf("%s never got through: the test proves nothing about it", c.tool)
		}
	}
}

// runWithin runs one call and fails the test if it does not return within
// callDeadline.
func runWithin(t *testing.T, tool Tool, args string) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- tool.Run(context.Background(), []byte(args)) }()
	select {
	case r := <-done:
		return r
	case <-time.After(callDeadline):
		t.Fatalf("hang: %s %s did not return within %v", tool.Spec().Name, args, callDeadline)
		return Result{}
	}
}
