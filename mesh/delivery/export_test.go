package delivery

import (
	"sync"
	"sync/atomic"

	"github.com/cotal-go/cotal/mesh/wire"
)

// HoldControl makes the service's control operations wait until release
// is called, as a slow catch-up would: tests use it to see how long a
// member waits for an answer.
func HoldControl(s *Service) (release func()) {
	s.ctlMu.Lock()
	return s.ctlMu.Unlock
}

// HoldTransfer begins a write for the lifecycle on the service's end gate,
// as a transfer waiting on its ack does; release finishes it. ok is false
// if the lifecycle has ended.
func HoldTransfer(s *Service, p wire.Principal, uid string) (release func(), ok bool) {
	if !s.gate.begin(p, uid) {
		return nil, false
	}
	return func() { s.gate.finish(p, uid) }, true
}

// HoldHostConnect makes every first call of p's lifecycles wait, before
// the host endpoint for it connects, until release is called; started is
// closed when the first one waits, and connects counts them.
func HoldHostConnect(s *Service, p wire.Principal) (started <-chan struct{}, connects func() int, release func()) {
	st, rel := make(chan struct{}), make(chan struct{})
	var once, relOnce sync.Once
	var n atomic.Int32
	s.hostsMu.Lock()
	s.beforeConnect = func(q wire.Principal) {
		if q != p {
			return
		}
		n.Add(1)
		once.Do(func() { close(st) })
		<-rel
	}
	s.hostsMu.Unlock()
	return st, func() int { return int(n.Load()) }, func() { relOnce.Do(func() { close(rel) }) }
}

// OpenHosts is how many callers' hosts the service holds.
func OpenHosts(s *Service) int {
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	return len(s.hosts)
}

// Probes is how many times the service, as a standby, has probed the
// lease holder's endpoint.
func Probes(s *Service) uint64 { return s.probes.Load() }
