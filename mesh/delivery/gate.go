package delivery

import (
	"context"
	"sync"

	"github.com/cotal-go/cotal/mesh/wire"
)

// endGate orders the copies stored for a lifecycle against its end, one
// lifecycle at a time: a write for a lifecycle is begun (refused once the
// lifecycle is ended) and finished, and ending a lifecycle marks it and
// then waits for the writes begun before the mark. No lock is held across
// I/O: begin, finish and end take mu for a map update only, and end waits
// on a channel, so a slow transfer holds up only the end of its own
// lifecycle, never another's end or the fan-out.
type endGate struct {
	life *lifecycles // where the ended marks are kept (its mu is taken under gate.mu)

	mu   sync.Mutex
	open map[string]int           // wire.ACLKey -> writes begun and not finished
	idle map[string]chan struct{} // closed when that key's writes are all finished
}

func newEndGate(life *lifecycles) *endGate {
	return &endGate{life: life, open: map[string]int{}, idle: map[string]chan struct{}{}}
}

// begin starts a write for the lifecycle, or reports false if it ended:
// then nothing may be stored for it. Every begin that returns true is
// followed by one finish.
func (g *endGate) begin(p wire.Principal, uid string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.life.isEnded(p, uid) {
		return false
	}
	g.open[wire.ACLKey(p, uid)]++
	return true
}

// finish ends a write begun for the lifecycle.
func (g *endGate) finish(p wire.Principal, uid string) {
	key := wire.ACLKey(p, uid)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[key]--; g.open[key] > 0 {
		return
	}
	delete(g.open, key)
	if ch, ok := g.idle[key]; ok {
		close(ch)
		delete(g.idle, key)
	}
}

// end marks the lifecycle ended and waits until every write begun for it
// before the mark has finished, or ctx ends.
func (g *endGate) end(ctx context.Context, p wire.Principal, uid string) error {
	key := wire.ACLKey(p, uid)
	g.mu.Lock()
	g.life.markEnded(p, uid)
	if g.open[key] == 0 {
		g.mu.Unlock()
		return nil
	}
	ch, ok := g.idle[key]
	if !ok {
		ch = make(chan struct{})
		g.idle[key] = ch
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
