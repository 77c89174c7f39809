package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// Link states, as cotal_connection_status reports them.
const (
	StateReady        = "ready"        // connected, and the connector answers
	StateDegraded     = "degraded"     // connected to the broker, but the connector or delivery service does not answer
	StateConnecting   = "connecting"   // never connected yet: the first dials are failing or under way
	StateDisconnected = "disconnected" // was connected; the connection is lost and being restored
	StateStopped      = "stopped"      // the server is shutting down
)

// Link timings.
const (
	dialTimeout = 20 * time.Second
	watchEvery  = 500 * time.Millisecond
	// redialAfter is how long a lost connection may try to come back by
	// itself before the endpoint is closed and dialled afresh (the mesh may
	// have restarted on another port).
	redialAfter = 5 * time.Second
	maxBackoff  = 5 * time.Second
)

// link keeps one endpoint to the mesh open: dialled at start, dialled
// again after a failure or a lost connection. One goroutine (run) owns
// the dialling; mu guards the fields below it.
type link struct {
	opts Options
	stop chan struct{}
	done chan struct{}

	mu        sync.Mutex
	e         *mesh.Endpoint
	conn      connector
	mgr       *client.Client // the managers, as e's identity
	stopped   bool
	everUp    bool
	upSince   time.Time
	downSince time.Time // when the current endpoint's connection was last seen lost
	lastErr   error
	lastErrAt time.Time
	dials     int
	changed   chan struct{} // closed and replaced when a dial ends
	client    string        // the MCP client that connected, "" until one did
	greeted   bool          // the seat's connector was told the client is in
}

// clientIn records that the MCP client connected and tells the seat's
// connector when the link is up (or as soon as it is), in the background:
// the client's handshake does not wait for it.
func (l *link) clientIn(client string) {
	l.mu.Lock()
	l.client = client
	l.mu.Unlock()
	go l.greet()
}

// greet tells a seat's connector, once, that the MCP client is in: the
// seat's readiness. A standalone server has no one to tell.
func (l *link) greet() {
	l.mu.Lock()
	sc, ok := l.conn.(*seatConnector)
	if !ok || l.greeted || l.client == "" {
		l.mu.Unlock()
		return
	}
	l.greeted = true
	who := l.client
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), selfCallTimeout)
	defer cancel()
	if err := sc.call(ctx, wire.ManagerHello, client.HelloArgs{Client: who}, nil); err != nil {
		l.mu.Lock()
		l.greeted = false
		l.mu.Unlock()
		if l.opts.Logf != nil {
			l.opts.Logf("telling the seat's connector the client is in: %v", err)
		}
	}
}

func newLink(opts Options) *link {
	return &link{opts: opts, stop: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{})}
}

// signal wakes the tool calls waiting for a dial; l.mu must be held.
func (l *link) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// run dials and watches until close.
func (l *link) run() {
	defer close(l.done)
	backoff := 250 * time.Millisecond
	for {
		l.mu.Lock()
		e := l.e
		l.mu.Unlock()
		if e == nil {
			if err := l.dial(); err != nil {
				select {
				case <-l.stop:
					return // the dial was cut short by closing
				default:
				}
				l.fail(err)
				if !l.sleep(backoff) {
					return
				}
				backoff = min(backoff*2, maxBackoff)
				continue
			}
			backoff = 250 * time.Millisecond
			continue
		}
		if !l.sleep(watchEvery) {
			return
		}
		if why := l.check(e); why != nil {
			l.drop(e, why)
		}
	}
}

// sleep waits d, or reports false when the link is closing.
func (l *link) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.stop:
		return false
	case <-t.C:
		return true
	}
}

func (l *link) dial() error {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	l.mu.Lock()
	l.dials++
	l.mu.Unlock()
	e, err := l.opts.Dial(ctx)
	if err != nil {
		return err
	}
	mgr, err := newManagers(e)
	if err != nil {
		_ = e.Close()
		return err
	}
	var c connector = localConnector{e}
	if l.opts.Manager != "" {
		sc, err := newSeatConnector(e, l.opts.Manager)
		if err != nil {
			_ = e.Close()
			return err
		}
		c = sc
	}
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		_ = e.Close()
		return errors.New("closing")
	}
	defer l.mu.Unlock()
	l.e, l.conn, l.mgr, l.everUp, l.upSince, l.downSince = e, c, mgr, true, time.Now(), time.Time{}
	l.lastErr = nil
	l.signal()
	go l.greet()
	return nil
}

func (l *link) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastErr, l.lastErrAt = err, time.Now()
	l.signal()
	if l.opts.Logf != nil {
		l.opts.Logf("mesh: %v", err)
	}
}

// check reports why an endpoint should be dialled afresh, nil while it is
// fine or may still recover by itself.
func (l *link) check(e *mesh.Endpoint) error {
	nc := e.Conn()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case nc.IsClosed():
		if err := nc.LastError(); err != nil {
			return fmt.Errorf("the connection to the mesh closed: %w", err)
		}
		return errors.New("the connection to the mesh closed")
	case !nc.IsConnected():
		if l.downSince.IsZero() {
			l.downSince = time.Now()
		}
		if time.Since(l.downSince) > redialAfter {
			return fmt.Errorf("lost the connection to the mesh %s ago", time.Since(l.downSince).Round(time.Second))
		}
	default:
		l.downSince = time.Time{}
	}
	return nil
}

// drop closes an endpoint whose connection is gone; the next turn of run
// dials afresh.
func (l *link) drop(e *mesh.Endpoint, why error) {
	l.mu.Lock()
	if l.e == e {
		l.e, l.conn, l.mgr = nil, nil, nil
	}
	l.mu.Unlock()
	l.fail(why)
	_ = e.Close()
}

// close stops dialling and closes the endpoint: its presence goes offline.
func (l *link) close() error {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return nil
	}
	l.stopped = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.mu.Lock()
	e := l.e
	l.e, l.conn, l.mgr = nil, nil, nil
	l.mu.Unlock()
	if e != nil {
		return e.Close()
	}
	return nil
}

// session is what one tool call acts through.
type session struct {
	e   *mesh.Endpoint // publishes; reads the roster and registry
	c   connector      // holds channels, modes, presence and the inbox
	mgr *client.Client // calls the managers as e's identity
}

// firstDialWait is how long a tool call made while the server is still
// making its first connection waits for it.
const firstDialWait = 5 * time.Second

// session returns the live endpoint, or a refusal saying why there is
// none. While the first dial is under way it waits for it a little.
func (l *link) session(ctx context.Context) (*session, error) {
	until := time.Now().Add(firstDialWait)
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.e == nil && l.lastErr == nil && !l.everUp && !l.stopped && ctx.Err() == nil {
		left := time.Until(until)
		if left <= 0 {
			break
		}
		ch := l.changed
		l.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		l.mu.Lock()
	}
	switch {
	case l.stopped:
		return nil, refusef("Not connected to the mesh: this server is shutting down.")
	case l.e == nil && l.lastErr != nil:
		return nil, refusef("Not connected to the mesh: %v. It keeps trying; call cotal_connection_status to follow it.", l.lastErr)
	case l.e == nil:
		return nil, refusef("Not connected to the mesh yet: still connecting. Try again in a moment.")
	}
	if !l.e.Conn().IsConnected() {
		since := "just now"
		if !l.downSince.IsZero() {
			since = time.Since(l.downSince).Round(time.Second).String() + " ago"
		}
		return nil, refusef("Not connected to the mesh: the connection was lost (%s) and is being restored; nothing was done. Try again in a moment.", since)
	}
	return &session{e: l.e, c: l.conn, mgr: l.mgr}, nil
}

// linkFacts are the raw facts behind a state.
type linkFacts struct {
	e         *mesh.Endpoint
	c         connector
	stopped   bool
	everUp    bool
	upSince   time.Time
	downSince time.Time
	lastErr   error
	lastErrAt time.Time
	dials     int
}

func (l *link) facts() linkFacts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return linkFacts{e: l.e, c: l.conn, stopped: l.stopped, everUp: l.everUp, upSince: l.upSince, downSince: l.downSince,
		lastErr: l.lastErr, lastErrAt: l.lastErrAt, dials: l.dials}
}
