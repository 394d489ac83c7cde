package commands

import (
	"bytes"
	"encoding/json"
	"fmt"

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
}

func jsonOutputOf(cmd *cli.Command) jsonOutput {
	return jsonOutput{JSON: cmd.Bool("json"), Select: cmd.String("select")}
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
