package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll drains r and returns its events and the error that ended it.
func readAll(r *Reader) ([]Event, error) {
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if len(evs) > 1e6 {
			return evs, errors.New("runaway")
		}
	}
}

// chunkReader returns the input in chunks whose sizes cycle through sizes,
// so a test can put a read boundary at any byte.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = c.sizes[c.i%len(c.sizes)]
		c.i++
	}
	n = max(1, min(n, len(p), len(c.data)))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestReaderCases(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
		err  error
	}{
		{"lf", "data: a\n\ndata: b\n\n", []Event{{Data: "a"}, {Data: "b"}}, io.EOF},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []Event{{Data: "a"}, {Data: "b"}}, io.EOF},
		{"cr", "data: a\r\rdata: b\r\r", []Event{{Data: "a"}, {Data: "b"}}, io.EOF},
		{"mixed line ends", "data: a\r\n\ndata: b\r\r\ndata: c\n\r", []Event{{Data: "a"}, {Data: "b"}, {Data: "c"}}, io.EOF},
		{"no space", "data:a\n\n", []Event{{Data: "a"}}, io.EOF},
		{"only one space stripped", "data:  a\n\n", []Event{{Data: " a"}}, io.EOF},
		{"multi-line data", "data: a\ndata:b\ndata\n\n", []Event{{Data: "a\nb\n"}}, io.EOF},
		{"empty data dispatched", "data:\n\n", []Event{{Data: ""}}, io.EOF},
		{"comments ignored", ": keep-alive\n\n: x\ndata: a\n: y\n\n", []Event{{Data: "a"}}, io.EOF},
		{"event type", "event: ping\ndata: {}\n\ndata: x\n\n", []Event{{Type: "ping", Data: "{}"}, {Data: "x"}}, io.EOF},
		{"type without data dropped", "event: ping\n\ndata: x\n\n", []Event{{Data: "x"}}, io.EOF},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []Event{{ID: "7", Data: "a"}, {ID: "7", Data: "b"}, {Data: "c"}}, io.EOF},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", []Event{{ID: "1", Data: "a"}, {ID: "1", Data: "b"}}, io.EOF},
		{"unknown and retry fields", "retry: 10\nfoo: bar\ndata: a\n\n", []Event{{Data: "a"}}, io.EOF},
		{"bom stripped", "\xEF\xBB\xBFdata: a\n\n", []Event{{Data: "a"}}, io.EOF},
		{"utf8 kept", "data: héllo 世界 🎉\n\n", []Event{{Data: "héllo 世界 🎉"}}, io.EOF},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []Event{{Data: `{"a":"b:c"}`}}, io.EOF},
		{"empty stream", "", nil, io.EOF},
		{"only blank lines", "\n\r\n\r", nil, io.EOF},
		// End-of-stream choices (see the package comment).
		{"final event without blank line", "data: a\n\ndata: [DONE]\n", []Event{{Data: "a"}, {Data: "[DONE]"}}, io.EOF},
		{"final event ended by CR", "data: [DONE]\r", []Event{{Data: "[DONE]"}}, io.EOF},
		{"unterminated final line", "data: a\n\ndata: {\"x\":", []Event{{Data: "a"}}, io.ErrUnexpectedEOF},
		{"partial event discarded", "data: a\ndata: b", nil, io.ErrUnexpectedEOF},
		{"unterminated comment", "data: a\n\n: ka", []Event{{Data: "a"}}, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		for _, mode := range []string{"whole", "bytes", "pairs", "odd"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tt.in)
				switch mode {
				case "bytes":
					src = iotest.OneByteReader(src)
				case "pairs":
					src = &chunkReader{data: []byte(tt.in), sizes: []int{2}}
				case "odd":
					src = &chunkReader{data: []byte(tt.in), sizes: []int{3, 1, 7}}
				}
				got, err := readAll(NewReader(src))
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("events = %#v, want %#v", got, tt.want)
				}
			})
		}
	}
}

func TestReaderSplitEverywhere(t *testing.T) {
	// A CRLF stream with multi-byte characters, cut into two reads at every
	// position: the boundary lands inside a CRLF and inside UTF-8 runes.
	in := "data: {\"a\":\"é世\"}\r\n\r\n: keep-alive\r\n\r\ndata:🎉\r\ndata: z\r\n\r\ndata: [DONE]\r\n\r\n"
	want := []Event{{Data: `{"a":"é世"}`}, {Data: "🎉\nz"}, {Data: "[DONE]"}}
	for i := 0; i <= len(in); i++ {
		r := NewReader(io.MultiReader(strings.NewReader(in[:i]), strings.NewReader(in[i:])))
		got, err := readAll(r)
		if err != io.EOF || !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: %#v, %v", i, got, err)
		}
	}
}

// blockingReader hands out its chunks one at a time and then blocks, the way
// a live connection does between events.
type blockingReader struct {
	chunks []string
	block  chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if len(b.chunks) == 0 {
		<-b.block
		return 0, io.EOF
	}
	n := copy(p, b.chunks[0])
	b.chunks[0] = b.chunks[0][n:]
	if b.chunks[0] == "" {
		b.chunks = b.chunks[1:]
	}
	return n, nil
}

func TestReaderDoesNotWaitForLFAfterCR(t *testing.T) {
	// With CR-only line ends the event is complete at the second CR; the
	// reader must dispatch it without reading further (which would block).
	br := &blockingReader{chunks: []string{"data: a\r", "\r"}, block: make(chan struct{})}
	defer close(br.block)
	ev, err := NewReader(br).Next()
	if err != nil || ev.Data != "a" {
		t.Fatalf("got %#v, %v", ev, err)
	}
}

func TestReaderLineCap(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"exactly at cap", "data: " + strings.Repeat("x", 10) + "\n\n", false},
		{"over cap", "data: " + strings.Repeat("x", 11) + "\n\n", true},
		{"over cap without line end", "data: " + strings.Repeat("x", 40), true},
		{"event data over cap", "data: xxxxxxxx\ndata: xxxxxxxx\n\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(iotest.HalfReader(strings.NewReader(tt.in)))
			r.MaxLine = 16
			_, err := readAll(r)
			if got := errors.Is(err, ErrLineTooLong); got != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr && !strings.Contains(err.Error(), "16 bytes") {
				t.Fatalf("error should name the cap: %v", err)
			}
		})
	}
}

func TestReaderDefaultCap(t *testing.T) {
	big := strings.Repeat("y", DefaultMaxLine-len("data: "))
	ev, err := NewReader(strings.NewReader("data: " + big + "\n\n")).Next()
	if err != nil || len(ev.Data) != len(big) {
		t.Fatalf("line of exactly the cap: len %d, %v", len(ev.Data), err)
	}
	_, err = NewReader(strings.NewReader("data: " + big + "z\n\n")).Next()
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("line over the cap: %v", err)
	}
}

func TestReaderErrorsAreSticky(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)))
	if ev, err := r.Next(); err != nil || ev.Data != "a" {
		t.Fatalf("first: %#v, %v", ev, err)
	}
	for i := 0; i < 2; i++ {
		if _, err := r.Next(); !errors.Is(err, boom) {
			t.Fatalf("call %d: %v, want boom (pending event must not be dispatched)", i, err)
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	if _, err := NewReader(zeroReader{}).Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: a\r\n\r\n",
		"data:a\rdata:b\r\r",
		": keep-alive\n\nevent: x\nid: 1\ndata: {}\n\n",
		"data: é世🎉\n\ndata: [DONE]",
		"\xEF\xBB\xBFdata: a\n\ndata: b\n",
	} {
		f.Add([]byte(s), []byte{1, 2, 3})
	}
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		whole := NewReader(bytes.NewReader(in))
		whole.MaxLine = 64
		wantEvs, wantErr := readAll(whole)

		sz := make([]int, len(sizes))
		for i, s := range sizes {
			sz[i] = int(s%16) + 1
		}
		chunked := NewReader(&chunkReader{data: in, sizes: sz})
		chunked.MaxLine = 64
		gotEvs, gotErr := readAll(chunked)

		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("chunked err %v, whole err %v", gotErr, wantErr)
		}
		if !reflect.DeepEqual(gotEvs, wantEvs) {
			t.Fatalf("chunked %#v\nwhole   %#v", gotEvs, wantEvs)
		}
		for _, ev := range wantEvs {
			if len(ev.Data) > 64 {
				t.Fatalf("event data over the cap: %d", len(ev.Data))
			}
		}
	})
}

// TestReaderOther: lines outside the event-stream format (a raw JSON error
// object after the events, as Gemini sends) reach Other, the unterminated
// last one included; fields, comments and a cut data line do not, and the
// events are unchanged.
func TestReaderOther(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      error
	}{
		{"raw error after events", "data: a\r\n\r\n{\n  \"error\": {\n    \"code\": 503\n  }\n}\n",
			[]string{"{", `  "error": {`, `    "code": 503`, "  }", "}"}, io.EOF},
		{"unterminated raw tail", "data: a\n\n{\"error\":{}}", []string{`{"error":{}}`}, io.ErrUnexpectedEOF},
		{"fields and comments", "retry: 1\nid: 2\nevent: x\n: ka\ndata: a\n\n", nil, io.EOF},
		{"cut data line is not other", "data: a\n\ndata: {\"x\":", nil, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			r := NewReader(iotest.OneByteReader(strings.NewReader(tt.in)))
			r.Other = func(line []byte) { got = append(got, string(line)) }
			events, err := readAll(r)
			if !errors.Is(err, tt.err) || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("other = %q, err = %v", got, err)
			}
			if len(events) == 0 || events[0].Data != "a" {
				t.Fatalf("events = %#v", events)
			}
		})
	}
}
