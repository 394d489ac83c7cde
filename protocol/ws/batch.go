package ws

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
)

// batchConn lets the writer send everything queued for a client with one
// system call: between begin and end, writes are gathered and flushed
// together. Outside a batch (the handshake, pings, close frames) writes go
// straight through. Under load a client's queue holds many updates, and a
// write per frame was a tenth of a busy server's time.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	buf      []byte
	batching bool
}

// flushAt bounds a batch's buffer.
const flushAt = 16 << 10

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.batching {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	if len(c.buf) >= flushAt {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// batchBufs recycles batch buffers: a busy client fills one per wake-up.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, flushAt+4<<10); return &b }}

func (c *batchConn) begin() {
	c.mu.Lock()
	c.batching = true
	c.buf = (*batchBufs.Get().(*[]byte))[:0]
	c.mu.Unlock()
}

// end flushes the batch.
func (c *batchConn) end() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batching = false
	err := c.flushLocked()
	if cap(c.buf) <= 2*flushAt { // a huge frame's buffer is left to the GC
		b := c.buf
		batchBufs.Put(&b)
	}
	c.buf = nil // an idle client keeps no buffer
	return err
}

func (c *batchConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// hijacker hands the WebSocket upgrader a batchConn.
type hijacker struct {
	http.ResponseWriter
	conn *batchConn
}

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("ws: the response cannot be hijacked")
	}
	c, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = &batchConn{Conn: c}
	return h.conn, rw, nil
}
