package mesh

import (
	"errors"
	"fmt"
	"sync"
)

// A publish is stored by the broker before it is acknowledged: when the
// connection drops (or the ack does not come) in between, the message may
// or may not be stored, and only the sender's retry with the same id,
// which the broker's duplicate window stores once, settles it. A send
// says so, at once, instead of waiting out its deadline and calling it
// failed.

// ErrConnectionLost is the connection dropping under a call in flight.
var ErrConnectionLost = errors.New("the connection to the mesh dropped")

// NotConfirmedError is a publish the broker may have stored but did not
// acknowledge. Sending again with the same id (WithID) stores it once.
type NotConfirmedError struct {
	ID   string // the message's id
	What string // what was sent: "post to #team", "DM bob"
	Why  string // why no ack came
	Err  error
}

func (e *NotConfirmedError) Error() string {
	return fmt.Sprintf("%s not confirmed: %s; it may be stored, id %s", e.What, e.Why, e.ID)
}

func (e *NotConfirmedError) Unwrap() error { return e.Err }

// Connected reports whether the endpoint's connection to the broker is up
// now (it reconnects on its own when it drops).
func (e *Endpoint) Connected() bool { return e.nc != nil && e.nc.IsConnected() }

// connWatch tells a call in flight that the endpoint's own connection
// dropped. The zero value is a live connection.
type connWatch struct {
	mu   sync.Mutex
	down chan struct{} // closed once the connection drops; made on first use
	up   bool          // down is open: the connection is up
}

// lost is closed once the connection drops; a call selects on it.
func (w *connWatch) lost() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down == nil {
		w.down = make(chan struct{})
		w.up = true
	}
	return w.down
}

func (w *connWatch) dropped() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down == nil {
		w.down = make(chan struct{})
		w.up = true
	}
	if w.up {
		close(w.down)
		w.up = false
	}
}

func (w *connWatch) restored() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.up {
		w.down, w.up = make(chan struct{}), true
	}
}
