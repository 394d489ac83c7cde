package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v3"
)

// jsonFlags are the machine-output flags every listing command shares.
func jsonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object per line (NDJSON)"},
		&cli.StringFlag{Name: "select", Usage: "print only the field at `PATH` (gjson syntax, e.g. id or meta.title) of each JSON object, one per line"},
	}
}

// jsonOutput is what jsonFlags asked for.
type jsonOutput struct {
	JSON   bool
	Select string // a gjson path; "" prints whole objects
	// missed says once that --select matched nothing (nil: never).
	missed *sync.Once
}

func jsonOutputOf(cmd *cli.Command) jsonOutput {
	return jsonOutput{JSON: cmd.Bool("json"), Select: cmd.String("select"), missed: new(sync.Once)}
}

// machine reports whether the command prints JSON (or selected fields)
// instead of text for people.
func (o jsonOutput) machine() bool { return o.JSON || o.Select != "" }

// print writes v as one line of JSON, or with --select the field at the
// gjson path: strings bare (so `xargs` gets plain ids), anything else as
// JSON; a missing field prints an empty line so lines stay aligned.
func (o jsonOutput) print(ios *IOStreams, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // titles and transcripts read better unescaped
	if err := enc.Encode(v); err != nil {
		return failure(err)
	}
	line := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	var err error
	if o.Select != "" {
		r := gjson.GetBytes(line, o.Select)
		switch {
		case !r.Exists():
			o.sayMissed(ios, line)
			_, err = fmt.Fprintln(ios.Out)
		case r.Type == gjson.String:
			_, err = fmt.Fprintln(ios.Out, r.String())
		default:
			_, err = fmt.Fprintln(ios.Out, r.Raw)
		}
		return err
	}
	_, err = fmt.Fprintf(ios.Out, "%s\n", line)
	return err
}

// sayMissed tells, once, that the --select path is not in the objects
// printed, and which fields they have: an empty line alone looks like an
// empty value.
func (o jsonOutput) sayMissed(ios *IOStreams, obj []byte) {
	if o.missed == nil {
		return
	}
	o.missed.Do(func() {
		var keys []string
		gjson.ParseBytes(obj).ForEach(func(k, _ gjson.Result) bool {
			keys = append(keys, k.String())
			return true
		})
		fmt.Fprintf(ios.ErrOut, "openheim: warning: --select %s matches nothing (an empty line is printed); the fields are: %s\n",
			o.Select, strings.Join(keys, ", "))
	})
}

// table aligns columns as text/tabwriter does, through a buffer: the
// tabwriter writes every cell with a Write of its own, which on an
// unbuffered stdout is a system call per cell (over 600 for the 50 rows of
// `sessions ls`). Flush writes the table out.
type table struct {
	*tabwriter.Writer
	buf *bufio.Writer
}

func newTable(w io.Writer) *table {
	buf := bufio.NewWriterSize(w, 16<<10)
	return &table{Writer: tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0), buf: buf}
}

// Flush aligns what was written and writes it to the output.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	return t.buf.Flush()
}
