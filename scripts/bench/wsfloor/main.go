// Command wsfloor is the floor of the serve benchmark: a bare
// gorilla/websocket server that speaks just enough of `openheim serve`'s
// /ws for scripts/bench/wsload (the greeting, initialize, session/new,
// session/prompt) and answers each prompt by streaming the same fake
// provider's reply (scripts/bench/streamllm) as the same frames, one
// agent_message_chunk notification per delta, written as each arrives.
// No sessions are stored, no hub, no agent loop: what it costs is what the
// machine, Go's HTTP client and gorilla/websocket cost for the same
// traffic, and `openheim serve`'s figures are read as ratios to it.
//
// It takes serve's command line (`--config FILE serve --host H --port 0`)
// so the driver starts it the same way; the provider's URL is the config's
// api_base, the token $OPENHEIM_TOKEN, and it logs "listening on URL".
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"
)

var apiBase = regexp.MustCompile(`(?m)^\s*api_base\s*=\s*"([^"]+)"`)

func main() {
	fs := flag.NewFlagSet("wsfloor", flag.ExitOnError)
	cfg := fs.String("config", "", "openheim config whose api_base is the provider")
	_ = fs.Parse(os.Args[1:])
	args := fs.Args()
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	sfs := flag.NewFlagSet("serve", flag.ExitOnError)
	host := sfs.String("host", "127.0.0.1", "")
	port := sfs.Int("port", 0, "")
	_ = sfs.Parse(args)
	raw, err := os.ReadFile(*cfg)
	m := apiBase.FindSubmatch(raw)
	if err != nil || m == nil {
		fmt.Fprintln(os.Stderr, "wsfloor: no api_base in --config", *cfg, err)
		os.Exit(2)
	}
	f := &floor{llm: string(m[1]) + "/chat/completions", token: os.Getenv("OPENHEIM_TOKEN"),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsfloor:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "wsfloor: listening on http://%s\n", ln.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}

type floor struct {
	llm, token string
	client     *http.Client
	up         websocket.Upgrader
}

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/ws" {
		http.NotFound(w, r)
		return
	}
	if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	ws, err := f.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	send := func(b []byte) bool { return ws.WriteMessage(websocket.TextMessage, b) == nil }
	if !send([]byte(`{"channel":"fs","data":{"type":"connected","message":"Connected to Openheim"}}`)) {
		return
	}
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		d := gjson.GetBytes(msg, "data")
		id := d.Get("id").Raw
		var result string
		switch d.Get("method").Str {
		case "initialize":
			result = `{"protocolVersion":1,"agentCapabilities":{}}`
		case "session/new":
			result = `{"sessionId":"` + newID() + `"}`
		case "session/prompt":
			if !f.stream(d.Get("params.sessionId").Str, send) {
				return
			}
			result = `{"stopReason":"end_turn"}`
		default:
			result = `{}`
		}
		if !send([]byte(`{"channel":"agent","data":{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}}`)) {
			return
		}
	}
}

// stream relays one provider reply as agent_message_chunk notifications;
// false if the client went away.
func (f *floor) stream(sid string, send func([]byte) bool) bool {
	body := `{"model":"bench","stream":true,"messages":[{"role":"user","content":"go"}]}`
	resp, err := f.client.Post(f.llm, "application/json", bytes.NewBufferString(body))
	if err != nil {
		return true
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	head := []byte(`{"channel":"agent","data":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid +
		`","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`)
	var frame []byte
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: {")) {
			continue
		}
		text := gjson.GetBytes(line[6:], "choices.0.delta.content").Str
		if text == "" {
			continue
		}
		q, _ := json.Marshal(text)
		frame = append(append(append(frame[:0], head...), q...), "}}}}}"...)
		if !send(frame) {
			return false
		}
	}
	return true
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
