package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestWireEventHasEveryField: the wire form names each field of Event
// but Shared (which says nothing about the event), so a field added to
// Event cannot be left out of what crosses to other replicas unnoticed.
func TestWireEventHasEveryField(t *testing.T) {
	for _, wt := range []reflect.Type{reflect.TypeFor[wireEvent](), reflect.TypeFor[wireOut]()} {
		checkWireFields(t, wt)
	}
}

func checkWireFields(t *testing.T, wt reflect.Type) {
	for f := range reflect.TypeFor[Event]().Fields() {
		_, ok := wt.FieldByName(f.Name)
		if f.Name == "Shared" {
			if ok {
				t.Error("Shared must not cross a process")
			}
			continue
		}
		if !ok {
			t.Errorf("Event.%s is not in %s", f.Name, wt)
		}
	}
}

func TestWireOmitsEmptyFields(t *testing.T) {
	data, err := MarshalWire(Text("s", AgentMessageChunk, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), `{"SessionID":"s","Kind":"agent_message_chunk","Content":{"type":"text","text":"hi"}}`; got != want {
		t.Fatalf("wire form:\n got %s\nwant %s", got, want)
	}
}

// collect is a WireBatch's send that keeps copies of the messages.
func collect(msgs *[][]byte) func([]byte) {
	return func(b []byte) { *msgs = append(*msgs, bytes.Clone(b)) }
}

func decodeAll(t *testing.T, msgs [][]byte) []Event {
	t.Helper()
	var evs []Event
	for _, m := range msgs {
		var err error
		if evs, err = UnmarshalWireBatch(evs, m); err != nil {
			t.Fatalf("%v: %s", err, m)
		}
	}
	return evs
}

func TestWireBatchRoundTrip(t *testing.T) {
	in := []Event{
		Text("s", AgentMessageChunk, "hello"),
		{SessionID: "s", Kind: ToolCall, Tool: &ToolCallInfo{ID: "c1", Title: "read", Status: StatusPending, RawInput: []byte(`{"path":"x"}`)}},
		{SessionID: "s", Kind: Dropped, Count: 3},
		{SessionID: "s", Kind: TurnEnd, End: &End{StopReason: StopEndTurn, Iterations: 2, Err: errors.New("provider: 500")}},
	}
	var b WireBatch
	var msgs [][]byte
	for i := range in {
		if err := b.Add(&in[i], collect(&msgs)); err != nil {
			t.Fatal(err)
		}
	}
	if len(msgs) != 0 || b.Len() != len(in) {
		t.Fatalf("sent %d messages before the flush, holds %d events", len(msgs), b.Len())
	}
	b.Flush(collect(&msgs))
	if len(msgs) != 1 || msgs[0][0] != '[' || !json.Valid(msgs[0]) {
		t.Fatalf("want one JSON array, got %q", msgs)
	}
	got := decodeAll(t, msgs)
	if got[3].End.Err == nil || got[3].End.Err.Error() != "provider: 500" {
		t.Fatalf("error lost: %+v", got[3].End)
	}
	got[3].End.Err, in[3].End.Err = nil, nil
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, in)
	}
	// The single-event form decodes as a batch of one.
	one, _ := MarshalWire(in[0])
	if evs, err := UnmarshalWireBatch(nil, one); err != nil || len(evs) != 1 || evs[0].Content.Text != "hello" {
		t.Fatalf("single form: %v %+v", err, evs)
	}
	if _, err := UnmarshalWireBatch(nil, []byte(`[{"Kind":1}]`)); err == nil {
		t.Fatal("a bad batch decoded")
	}
}

// TestWireBatchSplitsAtMax: a run larger than a message may be goes as
// several, each within the bound, the events in order; an event larger
// than the bound on its own is refused and the batch goes on.
func TestWireBatchSplitsAtMax(t *testing.T) {
	const max = 1000
	b := WireBatch{Max: max}
	var msgs [][]byte
	var want strings.Builder
	for i := range 40 {
		text := strings.Repeat(string(rune('a'+i%26)), 90)
		want.WriteString(text)
		ev := Text("s", AgentMessageChunk, text)
		if err := b.Add(&ev, collect(&msgs)); err != nil {
			t.Fatal(err)
		}
		if i == 20 {
			big := Text("s", AgentMessageChunk, strings.Repeat("x", max))
			if err := b.Add(&big, collect(&msgs)); !errors.Is(err, ErrWireTooLarge) {
				t.Fatalf("an event past Max: %v", err)
			}
		}
	}
	b.Flush(collect(&msgs))
	if len(msgs) < 4 {
		t.Fatalf("%d messages for ~6 KB at %d bytes each", len(msgs), max)
	}
	for _, m := range msgs {
		if len(m) > max {
			t.Fatalf("a message of %d bytes, past %d", len(m), max)
		}
	}
	var got strings.Builder
	for _, e := range decodeAll(t, msgs) {
		got.WriteString(e.Content.Text)
	}
	if got.String() != want.String() {
		t.Fatal("the events did not come back whole and in order")
	}
}

// BenchmarkWireBatch encodes batches of 16 text chunks, as a relay sends
// a streaming reply's backlog: `make bench` (-benchmem) shows the
// allocations per batch (one once warm; an allocation count is a
// benchmark's job: the race detector the tests run under empties
// encoding/json's pools at random).
func BenchmarkWireBatch(b *testing.B) {
	var wb WireBatch
	ev := Text("s", AgentMessageChunk, "a typical token ")
	send := func([]byte) {}
	b.ReportAllocs()
	for b.Loop() {
		for range 16 {
			wb.Add(&ev, send)
		}
		wb.Flush(send)
	}
}

// TestWireTextAsBlockEncodes: a plain text block takes a shortcut; its
// form is the block's own (MarshalJSON), byte for byte.
func TestWireTextAsBlockEncodes(t *testing.T) {
	for _, text := range []string{"", "plain", "<b>&amp;</b> \u2028 \"q\" \\ é\x01"} {
		e := Text("s", AgentMessageChunk, text)
		data, err := MarshalWire(e)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct{ Content json.RawMessage }
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(e.Content)
		if !bytes.Equal(raw.Content, want) {
			t.Fatalf("text %q:\n got %s\nwant %s", text, raw.Content, want)
		}
	}
}
