package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// stub is a tool whose Run is a function.
type stub struct {
	name, kind, schema string
	run                func(ctx context.Context, args json.RawMessage) tools.Result
}

func (s *stub) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: s.name, Description: "stub " + s.name, Parameters: json.RawMessage(s.schema)}
}
func (s *stub) Kind() string { return s.kind }
func (s *stub) Run(ctx context.Context, args json.RawMessage) tools.Result {
	return s.run(ctx, args)
}

// observed wraps a tool and reports when its Run starts, and when it
// returns, with the context's error at that time.
type observed struct {
	tools.Tool
	started chan struct{}
	done    chan error
}

func (o *observed) Run(ctx context.Context, args json.RawMessage) tools.Result {
	close(o.started)
	r := o.Tool.Run(ctx, args)
	o.done <- ctx.Err()
	return r
}

// A client giving up on a call (notifications/cancelled) cancels the
// tool's context: a blocking stub returns, execute_command's `sleep 30` is
// killed.
func TestCancelledCallCancelsTool(t *testing.T) {
	block := &stub{name: "block", kind: tools.KindOther, schema: `{"type":"object"}`,
		run: func(ctx context.Context, _ json.RawMessage) tools.Result {
			select {
			case <-ctx.Done():
				return tools.Errorf("cancelled")
			case <-time.After(30 * time.Second):
				return tools.Result{Content: "not cancelled"}
			}
		}}
	shell := builtins(t, t.TempDir(), true)
	exec, _ := shell.Get("execute_command")
	cases := []struct {
		tool tools.Tool
		args map[string]any
	}{
		{block, nil},
		{exec, map[string]any{"command": "sleep 30"}},
	}
	for _, l := range links {
		for _, tc := range cases {
			obs := &observed{Tool: tc.tool, started: make(chan struct{}), done: make(chan error, 1)}
			cs := connect(t, Options{Tools: tools.NewRegistry(obs)}, l)
			// The client gives up once the tool runs: a deadline instead
			// could pass, on a loaded machine, before the call was even
			// sent, and then no tool would run to be cancelled.
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-obs.started:
				case <-time.After(10 * time.Second):
					t.Errorf("%s: the tool never ran", tc.tool.Spec().Name)
				}
				cancel()
			}()
			start := time.Now()
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool.Spec().Name, Arguments: tc.args})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: call error %v, want cancelled", tc.tool.Spec().Name, err)
			}
			select {
			case err := <-obs.done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("%s: tool context ended with %v, want cancelled", tc.tool.Spec().Name, err)
				}
				t.Logf("%s: %s returned %v after the call started", l.name, tc.tool.Spec().Name,
					time.Since(start).Round(time.Millisecond))
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: %s still running 10s after the call was cancelled", l.name, tc.tool.Spec().Name)
			}
		}
	}
}

func TestResults(t *testing.T) {
	image := &stub{name: "image", kind: tools.KindRead, schema: `{"type":"object"}`,
		run: func(context.Context, json.RawMessage) tools.Result {
			return tools.Result{Content: "a pixel", Images: []message.Block{
				{Type: message.TypeImage, Data: "iVBORw0KGgo=", MimeType: "image/png"},
				{Type: message.TypeImage, Data: "not base64!", MimeType: "image/png"},
			}}
		}}
	fails := &stub{name: "fails", kind: tools.KindOther, schema: `{"type":"object"}`,
		run: func(context.Context, json.RawMessage) tools.Result { return tools.Errorf("no luck") }}
	panics := &stub{name: "panics", kind: tools.KindOther, schema: `{"type":"object"}`,
		run: func(context.Context, json.RawMessage) tools.Result { panic("boom") }}
	cs := connect(t, Options{Tools: tools.NewRegistry(image, fails, panics)}, links[0])

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "image"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.Content)
	if want := `[{"type":"text","text":"a pixel"},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]`; string(got) != want || res.IsError {
		t.Errorf("image result = %s (isError %v), want %s", got, res.IsError, want)
	}
	if text, isErr := call(t, cs, "fails", nil); !isErr || text != "no luck" {
		t.Errorf("failing tool = %q, isError=%v", text, isErr)
	}
	if text, isErr := call(t, cs, "panics", nil); !isErr || !strings.Contains(text, "boom") {
		t.Errorf("panicking tool = %q, isError=%v", text, isErr)
	}
	if text, isErr := call(t, cs, "fails", nil); !isErr || text != "no luck" {
		t.Errorf("after a panic: %q, isError=%v", text, isErr)
	}
}

func TestInputSchema(t *testing.T) {
	noop := func(context.Context, json.RawMessage) tools.Result { return tools.Result{} }
	reg := tools.NewRegistry(
		&stub{name: "empty", kind: tools.KindThink, run: noop},
		&stub{name: "untyped", kind: tools.KindOther, schema: `{"properties":{"q":{"type":"string"}}}`, run: noop},
		&stub{name: "array", kind: tools.KindOther, schema: `{"type":"array"}`, run: noop},
		&stub{name: "broken", kind: tools.KindOther, schema: `[`, run: noop},
	)
	cs := connect(t, Options{Tools: reg}, links[0])
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		got[tl.Name] = string(b)
	}
	want := map[string]string{
		"empty":   `{"type":"object"}`,
		"untyped": `{"properties":{"q":{"type":"string"}},"type":"object"}`,
	}
	if len(got) != len(want) || got["empty"] != want["empty"] || got["untyped"] != want["untyped"] {
		t.Errorf("schemas = %v, want %v (array and broken left out)", got, want)
	}
}

// ServeStdio speaks newline-delimited JSON-RPC on its streams, returns nil
// at EOF and when its context ends, and writes nothing but protocol
// messages.
func TestServeStdio(t *testing.T) {
	opts := Options{Tools: builtins(t, t.TempDir(), false)}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), opts, inR, outW); outW.Close() }()

	lines := bufio.NewScanner(outR)
	send := func(msg string) string {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, `"id"`) {
			return ""
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s: %v", msg, lines.Err())
		}
		return lines.Text()
	}
	init := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if !strings.Contains(init, `"serverInfo":{"name":"openheim"`) {
		t.Errorf("initialize answer: %s", init)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if list := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); !strings.Contains(list, `"name":"list_dir"`) {
		t.Errorf("tools/list answer: %s", list)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio at EOF = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return at EOF")
	}
	if lines.Scan() {
		t.Errorf("unexpected output after EOF: %s", lines.Text())
	}

	ctx, cancel := context.WithCancel(context.Background())
	blocked, unblock := io.Pipe() // never written to
	t.Cleanup(func() { unblock.Close() })
	go func() { done <- ServeStdio(ctx, opts, blocked, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return when its context ended")
	}
}
