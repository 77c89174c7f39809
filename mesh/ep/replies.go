package ep

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep/proto"
)

// replies routes the replies on one connection's reply rail of one caller
// (CallerReplyFilter) to the requests waiting on them: one subscription,
// made at the first request and kept with the connection, and the nonce
// (the rail's last token) looked up in memory, so a call costs the broker
// no subscribe and unsubscribe. A request registers its nonce before it
// publishes, and the subscription went out on the same connection before
// any request, so no reply comes before its listener.
//
// Every client of that caller on that connection shares it (repliesFor):
// the broker hands a no-responders answer to only one subscription of a
// connection that matches it, so two subscriptions on the rail would
// each lose some.
type replies struct {
	mu      sync.Mutex
	nc      *nats.Conn
	filter  string
	sub     *nats.Subscription
	waiting map[string]listener // nonce -> its request
}

// listener is where one request's replies go.
type listener struct {
	ch chan *nats.Msg
	// absent: the request listens on its own exact subscription too and
	// takes only what the broker hands this one alone, its no-responders
	// answer.
	absent bool
}

type repliesKey struct {
	nc     *nats.Conn
	filter string
}

// routers holds each connection's routers; those of closed connections
// are dropped when a new one is made.
var routers sync.Map // repliesKey -> *replies

// repliesFor is the router of nc's reply rail of caller in space.
func repliesFor(nc *nats.Conn, space string, caller proto.Caller) *replies {
	key := repliesKey{nc, proto.CallerReplyFilter(space, caller)}
	if r, ok := routers.Load(key); ok {
		return r.(*replies)
	}
	routers.Range(func(k, _ any) bool {
		if k.(repliesKey).nc.IsClosed() {
			routers.Delete(k)
		}
		return true
	})
	r, _ := routers.LoadOrStore(key, &replies{nc: nc, filter: key.filter})
	return r.(*replies)
}

// listen registers nonce and returns the channel its replies come on
// (buffered: a frame that finds it full is dropped, as a bad frame is)
// and the function that forgets it again.
func (r *replies) listen(nonce string, buffer int) (<-chan *nats.Msg, func(), error) {
	ch := make(chan *nats.Msg, buffer)
	forget, err := r.register(nonce, listener{ch: ch})
	return ch, forget, err
}

// absent has the no-responders answer for nonce, should the broker hand
// it to the shared subscription, put on ch, which the request's own
// subscription fills (a probe's answer is then delivered as the
// connection reads it, with no hop between).
func (r *replies) absent(nonce string, ch chan *nats.Msg) (func(), error) {
	return r.register(nonce, listener{ch: ch, absent: true})
}

func (r *replies) register(nonce string, l listener) (func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sub == nil || !r.sub.IsValid() {
		sub, err := r.nc.Subscribe(r.filter, r.route)
		if err != nil {
			return nil, err
		}
		r.sub, r.waiting = sub, map[string]listener{}
	}
	r.waiting[nonce] = l
	return func() {
		r.mu.Lock()
		delete(r.waiting, nonce)
		r.mu.Unlock()
	}, nil
}

// route hands m to the request its nonce names; a reply for none (late,
// or made up) is dropped.
func (r *replies) route(m *nats.Msg) {
	nonce := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	r.mu.Lock()
	l, ok := r.waiting[nonce]
	r.mu.Unlock()
	if !ok || (l.absent && !isNoResponders(m)) {
		return
	}
	select {
	case l.ch <- m:
	default:
	}
}

// caughtUp waits until every reply the connection has read so far has
// been routed: after a flush, what the broker sent before its pong is
// then in its listener's channel. The subscription counts a message as
// pending until its callback has returned.
func (r *replies) caughtUp(ctx context.Context) {
	r.mu.Lock()
	sub := r.sub
	r.mu.Unlock()
	for sub != nil && ctx.Err() == nil {
		if n, _, err := sub.Pending(); err != nil || n == 0 {
			return
		}
		time.Sleep(50 * time.Microsecond) // the routing is a map look-up away
	}
}
