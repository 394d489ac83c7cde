package commands

import (
	"fmt"
	"strings"
	"testing"
)

type countingWriter struct {
	strings.Builder
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Builder.Write(p)
}

// TestTableWritesOnce: a table of 50 rows reaches its output aligned, in
// one Write (the bare tabwriter made one per cell: 600 system calls for
// `sessions ls` on an unbuffered stdout).
func TestTableWritesOnce(t *testing.T) {
	var w countingWriter
	tw := newTable(&w)
	fmt.Fprintln(tw, "ID\tTITLE")
	for i := range 50 {
		fmt.Fprintf(tw, "%d\trow %d\n", i*1000, i)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if w.writes != 1 || len(lines) != 51 {
		t.Fatalf("%d writes, %d lines", w.writes, len(lines))
	}
	if lines[0] != "ID     TITLE" || lines[50] != "49000  row 49" {
		t.Errorf("not aligned: %q ... %q", lines[0], lines[50])
	}
}
