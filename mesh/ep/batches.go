package ep

import (
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
)

// batches routes the answers of direct multi-key gets (lastEntries) on one
// connection: one subscription on a wildcard inbox, made at the first get
// and kept with the connection, and each get's own last token looked up
// in memory, so a registry read costs the broker no subscribe and
// unsubscribe. The subscription goes out on the connection before any
// get's request, so the server has it when the first entry is sent.
type batches struct {
	mu      sync.Mutex
	nc      *nats.Conn
	prefix  string // the inbox, with the dot its tokens follow
	sub     *nats.Subscription
	next    uint64
	waiting map[string]batch // token -> its get
}

// batch is where one get's entries go. The router waits for room rather
// than drop an entry (a read missing one would wait for its end in vain),
// until the get is forgotten.
type batch struct {
	ch   chan *nats.Msg
	done chan struct{}
}

// batchRouters holds each connection's router; those of closed connections
// are dropped when a new one is made.
var batchRouters sync.Map // *nats.Conn -> *batches

func batchesFor(nc *nats.Conn) *batches {
	if b, ok := batchRouters.Load(nc); ok {
		return b.(*batches)
	}
	batchRouters.Range(func(k, _ any) bool {
		if k.(*nats.Conn).IsClosed() {
			batchRouters.Delete(k)
		}
		return true
	})
	b, _ := batchRouters.LoadOrStore(nc, &batches{nc: nc})
	return b.(*batches)
}

// open gives a get its reply subject and the channel its entries come on,
// and the function that forgets it again.
func (b *batches) open(buffer int) (inbox string, entries <-chan *nats.Msg, forget func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sub == nil || !b.sub.IsValid() {
		prefix := b.nc.NewInbox() + "."
		sub, err := b.nc.Subscribe(prefix+"*", b.route)
		if err != nil {
			return "", nil, nil, err
		}
		b.prefix, b.sub, b.waiting = prefix, sub, map[string]batch{}
	}
	b.next++
	token := strconv.FormatUint(b.next, 36)
	g := batch{ch: make(chan *nats.Msg, buffer), done: make(chan struct{})}
	b.waiting[token] = g
	return b.prefix + token, g.ch, func() {
		b.mu.Lock()
		delete(b.waiting, token)
		b.mu.Unlock()
		close(g.done)
	}, nil
}

// route hands m to the get its token names; an entry for none (a get
// already given up) is dropped.
func (b *batches) route(m *nats.Msg) {
	b.mu.Lock()
	g, ok := b.waiting[m.Subject[len(b.prefix):]]
	b.mu.Unlock()
	if !ok {
		return
	}
	select {
	case g.ch <- m:
	case <-g.done:
	}
}
