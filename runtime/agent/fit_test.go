package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// history builds n earlier turns, each a user message, an assistant tool
// call, its result and an answer, every block about size tokens.
func history(n, size int) []message.Message {
	pad := strings.Repeat("x", size*charsPerToken)
	var h []message.Message
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		h = append(h,
			message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(fmt.Sprintf("q%d %s", i, pad))}},
			message.Message{Role: message.RoleAssistant, Content: []message.Block{use(id, "t", `{}`)}},
			message.Message{Role: message.RoleTool, Content: []message.Block{message.ToolResult(id, "t", pad, false)}},
			message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text(pad)}},
		)
	}
	return h
}

func TestFitLeavesOutOldestWholeTurns(t *testing.T) {
	h := history(5, 100) // ~5 x 300 tokens
	msgs := append(append([]message.Message{}, h...), message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("now")}})
	got, err := fit(msgs, len(h), 50, 800)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Role != message.RoleUser || got[0].Content[0].Text != omittedNote(len(msgs)-len(got)) {
		t.Fatalf("kept history must start with the note on a user message: %+v", got[0].Content[0])
	}
	if !strings.HasPrefix(got[0].Content[1].Text, "q") {
		t.Fatalf("the cut must fall before a user message, got %q", got[0].Content[1].Text[:5])
	}
	if 50+estimateTokens(got) > 800 {
		t.Errorf("still too large: %d", 50+estimateTokens(got))
	}
	if got[len(got)-1].JoinText() != "now" {
		t.Error("the current turn must be kept")
	}
	if len(h[0].Content) != 1 || msgs[len(msgs)-len(got)].Content[0].Text == got[0].Content[0].Text {
		t.Error("fit changed the stored history")
	}
	// Every tool call kept has its result right after it.
	for i, m := range got {
		if len(m.ToolUses()) > 0 && (i+1 >= len(got) || got[i+1].Role != message.RoleTool) {
			t.Fatalf("tool call at %d separated from its result", i)
		}
	}
}

func TestFitNoWindowOrSmallRequestUnchanged(t *testing.T) {
	h := history(2, 10)
	for _, budget := range []int{0, 1 << 20} {
		got, err := fit(h, len(h)-4, 10, budget)
		if err != nil || len(got) != len(h) {
			t.Fatalf("budget %d: %d msgs, %v", budget, len(got), err)
		}
	}
}

func TestFitCurrentTurnTooLarge(t *testing.T) {
	h := history(1, 10)
	msgs := append(h, message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(strings.Repeat("y", 4000))}})
	_, err := fit(msgs, len(h), 10, 500)
	if !errors.Is(err, errTurnTooLarge) || !strings.Contains(err.Error(), "start a new session") {
		t.Fatalf("err = %v", err)
	}
}

// tooLong rejects every request whose estimate exceeds limit tokens.
type tooLong struct {
	limit int
	sizes []int
	calls int
}

func (p *tooLong) Stream(_ context.Context, req *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
	p.calls++
	size := fixedTokens(req.System, req.Tools) + estimateTokens(req.Messages)
	p.sizes = append(p.sizes, size)
	if size > p.limit {
		return nil, fmt.Errorf("HTTP 400: prompt is too long: %w", llm.ErrContextTooLong)
	}
	return &llm.Response{Content: []message.Block{message.Text("ok")}, StopReason: event.StopEndTurn}, nil
}

func TestContextTooLongRetriedSmaller(t *testing.T) {
	h := history(6, 100)
	p := &tooLong{limit: 1000}
	a := &Agent{Provider: p} // no context_window: only the provider knows
	end := a.Run(context.Background(), Turn{History: h, Input: message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}})
	if end.Err != nil || end.StopReason != event.StopEndTurn {
		t.Fatalf("end = %+v, sizes %v", end, p.sizes)
	}
	if p.calls < 2 || p.calls > 3 || p.sizes[1] > p.sizes[0]*3/4+10 {
		t.Fatalf("retries: sizes %v", p.sizes)
	}
}

func TestContextTooLongGivesUpAfterTwoRetries(t *testing.T) {
	p := &tooLong{limit: 1}
	a := &Agent{Provider: p}
	end := a.Run(context.Background(), Turn{History: history(6, 100), Input: message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}})
	if end.Err == nil || p.calls > 3 {
		t.Fatalf("end = %+v after %d calls", end, p.calls)
	}
	if !strings.Contains(end.Err.Error(), "new session") {
		t.Errorf("err = %v", end.Err)
	}
}

func TestPauseTurnContinues(t *testing.T) {
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		func(context.Context, func(llm.Delta) error) (*llm.Response, error) {
			return &llm.Response{Content: []message.Block{message.Text("searching...")}, StopReason: llm.StopPauseTurn}, nil
		},
		text("done"),
	}}
	end, _, saved := runTurn(t, &Agent{Provider: p}, context.Background())
	if end.StopReason != event.StopEndTurn || end.Iterations != 2 {
		t.Fatalf("end = %+v", end)
	}
	last := p.requests[1].Messages
	if last[len(last)-1].Role != message.RoleAssistant || last[len(last)-1].JoinText() != "searching..." {
		t.Fatal("the paused reply must be sent back as the last message")
	}
	if len(saved) != 3 {
		t.Fatalf("saved %d", len(saved))
	}
}
