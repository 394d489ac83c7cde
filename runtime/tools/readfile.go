package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/llm"
)

// maxReadBytes is the 100 KB promised in the read_file description.
const maxReadBytes = 102400

// ReadFile returns a window of whole lines of a text file.
type ReadFile struct {
	Root *confine.Root
	// FS serves the content; nil means the local disk, through Root.
	FS FS
}

func (*ReadFile) Spec() llm.ToolSpec {
	return spec(readFileName, readFileDescription, readFileParams)
}

func (*ReadFile) Kind() string { return KindRead }

func (t *ReadFile) Run(ctx context.Context, raw json.RawMessage) Result {
	a := parseArgs(raw)
	p := a.str("path", true)
	offset, hasOffset := a.integer("offset", 1)
	if !hasOffset {
		offset = 1
	}
	limit, _ := a.integer("limit", 1)
	if err := a.Err(); err != nil {
		return Errorf("%v", err)
	}
	f, err := openContent(ctx, t.Root, t.FS, p, "")
	if err != nil {
		return Errorf("%v", err)
	}
	defer f.Close()
	w, err := readWindow(f, offset, limit, maxReadBytes)
	if err != nil {
		return Errorf("cannot read %s: %v", p, err)
	}
	return w.result(p)
}

var errBinary = errors.New("it appears to be a binary file (it contains NUL bytes)")

// window is the outcome of one read_file call.
type window struct {
	text        string
	first, last int  // 1-based lines included; last < first when none
	total       int  // lines in the file
	partialLine bool // a single line longer than the budget was cut
	offset      int
}

// readWindow streams the file once: it collects whole lines from offset
// until limit or budget is reached, then keeps going only to count lines so
// the note can say how much is left. Lines are read in chunks so a
// multi-megabyte line (minified code) never has to fit in memory.
func readWindow(r io.Reader, offset, limit, budget int) (*window, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	if looksBinary(head) {
		return nil, errBinary
	}
	w := &window{first: offset, last: offset - 1, offset: offset}
	var out, pending strings.Builder
	line := 1
	collecting := true
	overflow := false // the current line no longer fits the budget
	inLine := false   // part of the current line has been read
	take := func() bool {
		return collecting && line >= offset && (limit == 0 || line < offset+limit)
	}
	endLine := func() {
		if take() {
			switch {
			case !overflow:
				out.WriteString(pending.String())
				w.last = line
			case out.Len() == 0:
				// Not even one line fits: show the head of it rather than
				// nothing, or the model could never get past it.
				out.WriteString(pending.String())
				w.last = line
				w.partialLine = true
				collecting = false
			default:
				collecting = false
			}
		}
		pending.Reset()
		overflow, inLine = false, false
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			inLine = true
			if take() && !overflow {
				if out.Len()+pending.Len()+len(chunk) <= budget {
					pending.Write(chunk)
				} else {
					overflow = true
					if out.Len() == 0 {
						pending.WriteString(truncateUTF8(string(chunk), budget-pending.Len()))
					}
				}
			}
			if chunk[len(chunk)-1] == '\n' {
				endLine()
				line++
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	w.total = line - 1
	if inLine {
		// A final line without a newline is still a line.
		endLine()
		w.total = line
	}
	w.text = out.String()
	return w, nil
}

func (w *window) result(p string) Result {
	if w.total == 0 {
		if w.offset > 1 {
			return Errorf("offset %d is past the end of %s: the file is empty", w.offset, p)
		}
		return Result{Content: "(empty file)"}
	}
	if w.offset > w.total {
		return Errorf("offset %d is past the end of %s, which has %s", w.offset, p, plural(w.total, "line", "lines"))
	}
	if w.partialLine {
		return Result{Content: sprintf("%s\n[... truncated: line %d is longer than %d bytes and only its start is shown. Call read_file again with offset=%d to continue after it.]",
			w.text, w.last, maxReadBytes, w.last+1)}
	}
	if w.last < w.total {
		return Result{Content: sprintf("%s\n[... truncated: showing lines %d-%d of %d. Call read_file again with offset=%d to continue.]",
			w.text, w.first, w.last, w.total, w.last+1)}
	}
	return Result{Content: w.text}
}
