package delivery

import "github.com/cotal-go/cotal/mesh/wire"

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
