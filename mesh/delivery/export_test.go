package delivery

// HoldControl makes the service's control operations wait until release
// is called, as a slow catch-up would: tests use it to see how long a
// member waits for an answer.
func HoldControl(s *Service) (release func()) {
	s.ctlMu.Lock()
	return s.ctlMu.Unlock
}
