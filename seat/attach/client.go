package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// keysPiece is the most typed bytes one frame carries.
const keysPiece = 64 << 10

// DropNotice is the line a client shows when the seat's output outran it.
func DropNotice(n int64) string {
	return fmt.Sprintf("[cotal: %d bytes dropped - backpressure]", n)
}

// ClientOptions say where a client session delivers what the seat draws.
type ClientOptions struct {
	// Cols and Rows, when both are positive, are sent as a resize before
	// the first ready, so the first screen is drawn at the holder's size.
	Cols, Rows int
	// OnData receives the seat's terminal bytes, in order; the session
	// gives credit back only as it returns, so a slow OnData slows the
	// seat's output to this holder (which the seat then drops), never the
	// seat. Required.
	OnData func(p []byte)
	// OnDrop is told how many bytes were dropped before the next output;
	// nil writes DropNotice on its own line through OnData. A repaint
	// follows.
	OnDrop func(n int64)
	Rail   RailOptions
}

// ClientStats are a client session's counters.
type ClientStats struct {
	BytesIn  int64 // terminal bytes received
	Dropped  int64 // bytes the server reported dropped
	BytesOut int64 // bytes typed and sent
	Rail     RailStats
}

// Client is the holder's side of a session.
type Client struct {
	rail *Rail
	opts ClientOptions

	mu     sync.Mutex
	reason Reason // from the end payload

	bytesIn, dropped, bytesOut atomic.Int64
}

// Dial joins the session a grant names: it subscribes to the output,
// confirms the subscription, sends the size and asks for the first screen.
func Dial(ctx context.Context, nc *nats.Conn, g Grant, opts ClientOptions) (*Client, error) {
	if opts.OnData == nil {
		return nil, errors.New("attach: ClientOptions.OnData is required")
	}
	if opts.OnDrop == nil {
		onData := opts.OnData
		opts.OnDrop = func(n int64) { onData([]byte("\r\n" + DropNotice(n) + "\r\n")) }
	}
	opts.Rail.DropGarbled = false
	c := &Client{opts: opts}
	r, err := OpenRail(ctx, nc, g.Subjects.In, g.Subjects.Out, g.Window, c.handle, opts.Rail)
	if err != nil {
		return nil, err
	}
	c.rail = r
	if opts.Cols > 0 && opts.Rows > 0 {
		if err := c.Resize(ctx, opts.Cols, opts.Rows); err != nil {
			r.Close()
			return nil, err
		}
	}
	if err := c.Ready(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return c, nil
}

// handle runs on the rail's deliver goroutine. A payload the server should
// never send breaks the rail: the serving side is trusted to speak the
// protocol.
func (c *Client) handle(raw json.RawMessage) error {
	p, err := decodePayload(raw)
	if err != nil {
		return &FaultError{Fault: FaultGarbled, Detail: err.Error()}
	}
	switch p.kind {
	case kindData:
		c.bytesIn.Add(int64(len(p.b)))
		c.opts.OnData(p.b)
	case kindDrop:
		c.dropped.Add(p.bytes)
		c.opts.OnDrop(p.bytes)
	case kindEnd:
		c.mu.Lock()
		c.reason = p.reason
		c.mu.Unlock()
		go c.rail.Close()
	default:
		return &FaultError{Fault: FaultGarbled, Detail: "the server sent a " + p.kind + " payload"}
	}
	return nil
}

// send sends one payload, waiting for credit until ctx ends.
func (c *Client) send(ctx context.Context, p []byte) error {
	for {
		err := c.rail.Send(p)
		if !errors.Is(err, ErrWindowFull) {
			return err
		}
		select {
		case <-c.rail.CreditReady():
		case <-c.rail.Done():
			return ErrRailClosed
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrWindowFull, ctx.Err())
		}
	}
}

// Keys types p into the seat, in frames of at most 64 KiB, waiting for
// credit until ctx ends (the caller stops reading its keyboard meanwhile;
// nothing is buffered here).
func (c *Client) Keys(ctx context.Context, p []byte) error {
	for len(p) > 0 {
		n := min(len(p), keysPiece)
		if err := c.send(ctx, encodeData(p[:n])); err != nil {
			return err
		}
		c.bytesOut.Add(int64(n))
		p = p[n:]
	}
	return nil
}

// Resize tells the seat the holder's terminal size.
func (c *Client) Resize(ctx context.Context, cols, rows int) error {
	if cols < 1 || rows < 1 || cols > 1<<16 || rows > 1<<16 {
		return fmt.Errorf("attach: terminal size %dx%d out of range", cols, rows)
	}
	return c.send(ctx, encodeResize(cols, rows))
}

// Ready asks for a fresh screen; the output that follows it continues from
// exactly that screen.
func (c *Client) Ready(ctx context.Context) error { return c.send(ctx, readyPayload) }

// Close leaves the session; the server ends it as closed.
func (c *Client) Close() { c.rail.Close() }

// Done is closed when the session has ended.
func (c *Client) Done() <-chan struct{} { return c.rail.Done() }

// End is why the session ended, once Done: the server's end reason, or
// ReasonClosed with the rail's error when it broke or either side closed
// it without one.
func (c *Client) End() (Reason, error) {
	c.mu.Lock()
	r := c.reason
	c.mu.Unlock()
	if r != "" {
		return r, nil
	}
	return ReasonClosed, c.rail.Err()
}

// Stats reports the client's counters.
func (c *Client) Stats() ClientStats {
	return ClientStats{BytesIn: c.bytesIn.Load(), Dropped: c.dropped.Load(), BytesOut: c.bytesOut.Load(), Rail: c.rail.Stats()}
}
