package event

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

func TestWireRoundTrip(t *testing.T) {
	line := 3
	old := "a"
	b := message.Text("hi")
	for _, e := range []Event{
		Text("s", AgentMessageChunk, "hello"),
		{SessionID: "s", Kind: ToolCall, Tool: &ToolCallInfo{ID: "c1", Title: "read", Kind: "read", Status: StatusPending,
			RawInput: []byte(`{"path":"x"}`), Content: []ToolContent{{Block: &b}, {Diff: &Diff{Path: "/x", OldText: &old, NewText: "b"}}},
			Locations: []Location{{Path: "/x", Line: &line}}}},
		{SessionID: "s", Kind: Committed, Index: 4, Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{b}}}},
		{SessionID: "s", Kind: Dropped, Count: 7},
		{SessionID: "s", Kind: TurnEnd, End: &End{StopReason: StopCancelled, Iterations: 2, Duration: time.Second}},
	} {
		data, err := MarshalWire(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalWire(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v", e.Kind, got, e)
		}
	}
	e := Event{SessionID: "s", Kind: TurnEnd, End: &End{StopReason: StopEndTurn, Err: errors.New("provider: 500")}}
	data, _ := MarshalWire(e)
	got, _ := UnmarshalWire(data)
	if got.End.Err == nil || got.End.Err.Error() != "provider: 500" {
		t.Fatalf("error lost: %+v", got.End)
	}
}
