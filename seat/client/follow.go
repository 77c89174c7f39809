package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// Redialer is a manager client that dials again once its connection has
// closed (the mesh went away or restarted), so a long watch outlives one
// connection. It is safe for concurrent use.
type Redialer struct {
	dial func() (*Client, error)
	mu   sync.Mutex
	c    *Client
}

// NewRedialer makes a Redialer over dial, which returns a client whose
// connection it owns.
func NewRedialer(dial func() (*Client, error)) *Redialer { return &Redialer{dial: dial} }

// Client is the current client, dialled anew when the last one's
// connection has closed.
func (d *Redialer) Client() (*Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c != nil && !d.c.EP().Conn().IsClosed() {
		return d.c, nil
	}
	c, err := d.dial()
	if err != nil {
		return nil, err
	}
	d.c = c
	return c, nil
}

// Close closes the current client's connection.
func (d *Redialer) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c != nil {
		d.c.EP().Conn().Close()
	}
}

// screenWait bounds one screen read of a follow.
const screenWait = 5 * time.Second

// ErrSeatGone is returned by FollowScreen when the manager says it has no
// such seat any more.
var ErrSeatGone = errors.New("seat is gone")

// FollowScreen reads a seat's screen every interval until ctx ends or the
// seat exits (its last screen is shown) or goes (ErrSeatGone), calling
// show with each screen that differs from the last, and failed with each
// read error that differs from the last one (a manager not answering for
// a while is asked again).
func (d *Redialer) FollowScreen(ctx context.Context, s Seat, every time.Duration, show func(ScreenReply), failed func(error)) error {
	var last *ScreenReply
	lastErr := ""
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		r, err := d.screenOnce(ctx, s)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && isGone(err):
			return ErrSeatGone
		case err != nil:
			if msg := err.Error(); msg != lastErr {
				failed(err)
				lastErr = msg
			}
		case last == nil || r.Screen != last.Screen || r.Running != last.Running:
			lastErr = ""
			show(r)
			last = &r
			if !r.Running {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (d *Redialer) screenOnce(ctx context.Context, s Seat) (ScreenReply, error) {
	c, err := d.Client()
	if err != nil {
		return ScreenReply{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, screenWait)
	defer cancel()
	return c.Screen(cctx, s)
}

// isGone reports whether a manager said it has no such seat.
func isGone(err error) bool {
	e := proto.AsError(err)
	return e != nil && e.Code == proto.CodeNotFound && !errors.Is(err, ep.ErrNoCommand)
}
