package delivery

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A service that does not hold the lease is a standby: each second it
// reads the lease, and when the holder is ready it probes the holder's
// delivery endpoint on its instance rail. NATS answers "no responders" at
// once when no subscription for the rail exists anywhere the cluster's
// routes reach, which is proof that the holder's process (or its
// connection) is gone; a reply, a timeout or any error proves nothing.
// After DeathProbes such answers in a row for one lease revision (a holder
// that renews writes a new one) the standby takes the lease by
// compare-and-set on that revision, waits LeaseFence and serves. The
// lease's TTL stays the spec's 30 s: a holder that never became ready, or
// that names no endpoint, still lapses by it.
const (
	// DeathProbes is how many no-responders answers in a row, a second
	// apart, take a silent holder's lease.
	DeathProbes = 3
	// LeaseFence is how long a service that took a silent holder's lease
	// waits before serving: a holder that is alive but unreachable from
	// the standby's server stops at its first renew tick (a second apart)
	// whose read, bounded by leaseIO, does not find its own revision.
	LeaseFence = time.Second + leaseIO
)

// silence is the standby's count of no-responders answers for one lease
// revision.
type silence struct {
	rev   uint64
	count int
	since time.Time // the first of the run
}

// takeSilentLease probes the holder of a valid lease and, once its
// endpoint has had no responder DeathProbes times in a row at this
// revision, takes the lease compare-and-set on it. Until then it answers
// ErrKeyExists, as a lease another service holds.
func (s *Service) takeSilentLease(ent jetstream.KeyValueEntry, l lease, b []byte) (uint64, error) {
	if !l.Ready || l.Endpoint == "" {
		s.silent = silence{}
		return 0, jetstream.ErrKeyExists
	}
	if s.silent.rev != ent.Revision() {
		s.silent = silence{rev: ent.Revision()}
	}
	v, err := s.probe(l.Endpoint)
	if err != nil || v != ep.Gone {
		s.silent.count = 0
		return 0, jetstream.ErrKeyExists
	}
	if s.silent.count == 0 {
		s.silent.since = time.Now()
	}
	s.silent.count++
	if s.silent.count < DeathProbes {
		return 0, jetstream.ErrKeyExists
	}
	run := s.silent
	s.silent = silence{}
	rev, err := s.leaseKV.Update(s.ctx, LeaseKey, b, ent.Revision())
	if err != nil {
		return 0, err
	}
	s.logf("delivery service took over the lease of %s: its delivery endpoint %s had no responder anywhere on the mesh in %d probes over %s",
		l.Holder, l.Endpoint, run.count, time.Since(run.since).Round(100*time.Millisecond))
	s.tookOver, s.fenceLease, s.silentFrom = true, true, run.since
	return rev, nil
}

// probe asks the broker whether anyone holds the delivery endpoint's
// instance rail of iid.
func (s *Service) probe(iid string) (ep.Liveness, error) {
	s.probes.Add(1)
	ctx, cancel := context.WithTimeout(s.ctx, leaseIO)
	defer cancel()
	return s.prober.Probe(ctx, wire.DeliveryEndpoint, iid)
}

// servedAfterSilence says, once a service that took a silent holder's
// lease serves, how long that took from the first probe that found no
// responder.
func (s *Service) servedAfterSilence() {
	if s.silentFrom.IsZero() {
		return
	}
	s.logf("delivery service serves, %s after the first probe that found the holder's endpoint without a responder", time.Since(s.silentFrom).Round(10*time.Millisecond))
	s.silentFrom = time.Time{}
}

// fenced waits LeaseFence after a lease taken from a silent holder; it
// reports false when the service is closing meanwhile.
func (s *Service) fenced() bool {
	if !s.fenceLease {
		return true
	}
	s.fenceLease = false
	t := time.NewTimer(LeaseFence)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return false
	case <-s.stopRun:
		return false
	case <-t.C:
		return true
	}
}
