//go:build unix

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"
)

// fakeToken is the token fakeServe requires, as `openheim serve` does.
const fakeToken = "wsload-test-token"

// fakeServe speaks just enough of `openheim serve`'s /ws for the driver:
// the greeting, initialize, session/new, and a prompt answered by `chunks`
// stamped deltas, the last two merged into one frame as a server catching
// up with a slow client may do.
func fakeServe(chunks int) *httptest.Server {
	up := websocket.Upgrader{}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ws" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+fakeToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		send := func(s string) { _ = ws.WriteMessage(websocket.TextMessage, []byte(s)) }
		reply := func(id int64, result string) {
			send(fmt.Sprintf(`{"channel":"agent","data":{"jsonrpc":"2.0","id":%d,"result":%s}}`, id, result))
		}
		update := func(u string) {
			send(`{"channel":"agent","data":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + u + `}}}`)
		}
		send(`{"channel":"fs","data":{"type":"connected","message":"Connected to Openheim"}}`)
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			id := gjson.GetBytes(msg, "data.id").Int()
			switch gjson.GetBytes(msg, "data.method").Str {
			case "initialize":
				reply(id, `{"protocolVersion":1}`)
			case "session/new":
				update(`{"sessionUpdate":"available_commands_update","availableCommands":[]}`)
				reply(id, `{"sessionId":"s1"}`)
			case "session/prompt":
				text := func() string { return fmt.Sprintf("[t=%d] tok ", time.Now().UnixNano()) }
				for range chunks - 2 {
					update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text() + `"}}`)
				}
				update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text() + text() + `"}}`)
				update(`{"sessionUpdate":"usage_update","used":10,"size":0}`)
				reply(id, `{"stopReason":"end_turn"}`)
			}
		}
	}))
}

func TestRunAgainstFakeServer(t *testing.T) {
	const chunks, n = 50, 20
	ts := fakeServe(chunks)
	defer ts.Close()
	o := options{url: ts.URL, token: fakeToken, pid: os.Getpid(), cwd: t.TempDir(), chunks: chunks, dialPar: 4,
		timeout: 10 * time.Second, settle: time.Millisecond}
	r, err := run(o, n)
	if err != nil {
		t.Fatal(err)
	}
	if r.completed != n || len(r.errs) != 0 {
		t.Fatalf("completed %d of %d, errors %v", r.completed, n, r.errs)
	}
	if r.updates != n*(chunks-1) || r.chunks != n*chunks {
		t.Errorf("updates %d chunks %d, want %d and %d", r.updates, r.chunks, n*(chunks-1), n*chunks)
	}
	if int64(len(r.lat)) != r.updates || r.lat[0] < 0 || r.pct(100) > 10_000 {
		t.Errorf("latencies: %d samples, min %d ns, max %.1f ms", len(r.lat), r.lat[0], r.pct(100))
	}
	if r.others["usage_update"] != n || r.others["available_commands_update"] != n {
		t.Errorf("other frames: %v", r.others)
	}
	if r.held.RSS == 0 || r.cpuDriver < 0 {
		t.Errorf("own memory/CPU not read: %+v %v", r.held, r.cpuDriver)
	}
	var out strings.Builder
	r.row(&out)
	r.notes(&out, chunks)
	if strings.Contains(out.String(), "LOST") || strings.Contains(out.String(), "errors:") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestRunFailsWhenNoSessionStarts(t *testing.T) {
	ts := fakeServe(10)
	defer ts.Close()
	o := options{url: ts.URL + "/nowhere", cwd: t.TempDir(), chunks: 10, dialPar: 2,
		timeout: 5 * time.Second, settle: time.Millisecond}
	if _, err := run(o, 2); err == nil || !strings.Contains(err.Error(), "dial") {
		t.Fatalf("got %v, want a dial error", err)
	}
}

func TestListenLine(t *testing.T) {
	for _, line := range []string{
		`time=... level=INFO msg="openheim serve: listening on http://127.0.0.1:40123"`,
		`openheim: listening on http://127.0.0.1:40123/`,
	} {
		if u, ok := listenURL(line); !ok || u != "http://127.0.0.1:40123" {
			t.Errorf("%s: got %q", line, u)
		}
	}
}

func TestParseStamp(t *testing.T) {
	if got := parseStamp([]byte("1732950000123456789] tok")); got != 1732950000123456789 {
		t.Fatalf("got %d", got)
	}
}
