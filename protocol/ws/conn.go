package ws

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Close codes and reasons the server sends.
const (
	CloseSlowClient = websocket.ClosePolicyViolation // 1008
	reasonSlow      = "send queue full: the client is not reading fast enough"
	reasonShutdown  = "server shutting down"
)

const (
	writeWait  = 10 * time.Second // one frame must be written within this
	pongWait   = 60 * time.Second // a client silent this long (no pong) is gone
	pingPeriod = pongWait / 2
	closeGrace = time.Second // how long a closing client may take to reply
)

// ErrSlow is returned by Send when the connection was closed because its
// queue was full.
var ErrSlow = errors.New("ws: " + reasonSlow)

// ErrClosed is returned by Send after the connection has closed.
var ErrClosed = errors.New("ws: connection closed")

// Conn is one WebSocket connection with a bounded queue of frames to send.
// Send never blocks: a client that does not keep up is disconnected with
// a reason instead of stalling the turn that produces its updates.
type Conn struct {
	ws       *websocket.Conn
	batch    *batchConn
	envelope bool // speaks seed 000's {channel, data} (gets system notices)

	// ctx ends the connection's ACP peer (Shutdown); served is closed
	// once the peer has answered what it was doing and stopped.
	ctx    context.Context
	stop   context.CancelFunc
	served chan struct{}

	mu     sync.Mutex
	queue  [][]byte
	limit  int
	closed bool
	code   int // with reason: the close frame sent once the queue is flushed
	reason string
	wake   chan struct{}
	done   chan struct{} // closed when the writer has stopped

	readOnce sync.Once
	readDone chan struct{} // closed when Read has failed: the client is gone
	// readStopped: interruptRead made Read fail; no read deadline is set
	// after it (under mu), or a pong could extend the read it ended.
	readStopped bool
}

func newConn(c *websocket.Conn, batch *batchConn, limit int, readLimit int64) *Conn {
	c.SetReadLimit(readLimit)
	c.SetReadDeadline(time.Now().Add(pongWait))
	ctx, stop := context.WithCancel(context.Background())
	conn := &Conn{ws: c, batch: batch, ctx: ctx, stop: stop, served: make(chan struct{}), limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{}), readDone: make(chan struct{})}
	c.SetPongHandler(func(string) error { return conn.readUntil(time.Now().Add(pongWait)) })
	go conn.writeLoop()
	return conn
}

// readUntil sets the read deadline, unless Read was interrupted.
func (c *Conn) readUntil(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readStopped {
		return nil
	}
	return c.ws.SetReadDeadline(t)
}

// interruptRead makes a blocked Read return at once, without closing the
// connection: the peer that reads it is stopping, and what it still sends
// (its answers to what it was doing, then the close frame) goes out.
func (c *Conn) interruptRead() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readStopped = true
	c.ws.SetReadDeadline(time.Unix(1, 0))
}

// Send queues one text frame.
func (c *Conn) Send(frame []byte) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if len(c.queue) >= c.limit {
		c.closeLocked(CloseSlowClient, reasonSlow, true)
		c.mu.Unlock()
		return ErrSlow
	}
	c.queue = append(c.queue, frame)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// Close sends what is queued, then a close frame with code and reason,
// and closes the connection.
func (c *Conn) Close(code int, reason string) {
	c.mu.Lock()
	c.closeLocked(code, reason, false)
	c.mu.Unlock()
}

// closeLocked marks the connection closed; drop discards the queue (the
// client is too slow to be sent it anyway).
func (c *Conn) closeLocked(code int, reason string, drop bool) {
	if c.closed {
		return
	}
	c.closed, c.code, c.reason = true, code, reason
	if drop {
		c.queue = nil
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// closeUnlessShutdown closes the connection normally (1000) once its peer
// has stopped, unless the server is shutting down (its ctx ended): Shutdown
// then closes it with 1001 and its reason, which must not lose the race.
func (c *Conn) closeUnlessShutdown() {
	if c.ctx.Err() == nil {
		c.Close(websocket.CloseNormalClosure, "")
	}
}

// Done is closed once the connection is closed and the writer has stopped.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Read returns the next data frame's payload. One goroutine reads until
// Read fails; a failed Read closes the connection.
func (c *Conn) Read() ([]byte, error) {
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.readOnce.Do(func() { close(c.readDone) })
		c.mu.Lock()
		// An interrupted read leaves the close to the server (whose
		// reason, "server shutting down", the client should get).
		if !c.readStopped {
			c.closeLocked(websocket.CloseNormalClosure, "", false)
		}
		c.mu.Unlock()
	}
	return b, err
}

func (c *Conn) writeLoop() {
	defer close(c.done)
	defer c.ws.Close()
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	var batch [][]byte
	for {
		select {
		case <-c.wake:
		case <-ping.C:
			if c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
				c.abandon()
				return
			}
			continue
		}
		c.mu.Lock()
		batch, c.queue = c.queue, batch[:0]
		closed, code, reason := c.closed, c.code, c.reason
		c.mu.Unlock()
		if !c.writeBatch(batch) {
			c.abandon()
			return
		}
		clear(batch)
		if closed {
			c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(writeWait))
			// Closing the socket with the client's frames unread would
			// reset it and could lose the close frame: wait for the
			// client's reply to reach the reader, briefly.
			c.readUntil(time.Now().Add(closeGrace))
			select {
			case <-c.readDone:
			case <-time.After(closeGrace):
			}
			c.drain()
			return
		}
	}
}

// writeBatch writes frames, in one system call when the connection batches.
func (c *Conn) writeBatch(frames [][]byte) bool {
	if len(frames) == 0 {
		return true
	}
	c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	if c.batch != nil {
		c.batch.begin()
	}
	ok := true
	for _, f := range frames {
		if c.ws.WriteMessage(websocket.TextMessage, f) != nil {
			ok = false
			break
		}
	}
	if c.batch != nil && c.batch.end() != nil {
		ok = false
	}
	return ok
}

// drain half-closes the socket and discards what the client still sends
// until it closes too (or briefly): closing with unread data would reset
// the connection, and the client could lose the close frame and its reason.
func (c *Conn) drain() {
	nc := c.ws.UnderlyingConn()
	if bc, ok := nc.(*batchConn); ok {
		nc = bc.Conn
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	nc.SetReadDeadline(time.Now().Add(closeGrace))
	io.Copy(io.Discard, nc)
}

// abandon marks a connection whose writes fail as closed.
func (c *Conn) abandon() {
	c.mu.Lock()
	c.closed, c.queue = true, nil
	c.mu.Unlock()
}
