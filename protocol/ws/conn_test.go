package ws

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestInterruptedReadStaysInterrupted: once interruptRead has ended a
// Read, nothing extends the read deadline again (a pong from the client,
// the close handshake's grace), so a Read returns at once, and the
// connection is not closed by it (the server closes it with its reason).
func TestInterruptedReadStaysInterrupted(t *testing.T) {
	conns := make(chan *Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		conns <- newConn(c, nil, 16, 1<<20)
	}))
	defer srv.Close()
	client, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn := <-conns
	conn.interruptRead()
	if err := conn.readUntil(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Read()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Read returned no error after interruptRead")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read deadline set after interruptRead held the read")
	}
	conn.mu.Lock()
	closed := conn.closed
	conn.mu.Unlock()
	if closed {
		t.Fatal("the interrupted Read closed the connection")
	}
	conn.Close(websocket.CloseGoingAway, reasonShutdown)
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err = client.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.CloseGoingAway || ce.Text != reasonShutdown {
		t.Fatalf("client got %v, want 1001 %q", err, reasonShutdown)
	}
}
