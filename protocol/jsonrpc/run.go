package jsonrpc

import "context"

// readAside reads on a goroutine of its own, so that ctx ending stops Run
// even when the stream's Read cannot be interrupted (stdin).
func (p *Peer) readAside(ctx, hctx context.Context) error {
	readDone := make(chan error, 1)
	go func() { readDone <- p.readLoop(hctx) }()
	select {
	case err := <-readDone:
		return err
	case <-ctx.Done():
		// Unblock the reader; if the stream cannot be interrupted, the
		// reader goroutine exits when its Read returns and dispatches nothing.
		p.s.Close()
		return ctx.Err()
	}
}

// readInline reads on Run's goroutine; ctx ending interrupts the Read. The
// stream is not closed: the handlers still write their answers to it.
func (p *Peer) readInline(ctx, hctx context.Context, ri ReadInterrupter) error {
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		ri.InterruptRead()
	})
	err := p.readLoop(hctx)
	if !stop() {
		// ctx ended first: what Read returned is the interruption (or it
		// is about to be: it must not reach a stream Run has given back).
		<-interrupted
		return ctx.Err()
	}
	return err
}
