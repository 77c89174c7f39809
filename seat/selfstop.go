package seat

import (
	"context"
	"time"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/seat/attach"
	"github.com/cotal-go/cotal/seat/client"
)

// selfStopTimeout bounds a seat's stop of itself: the graceful stop's 3 s
// and the wait for its connector to write it offline.
const selfStopTimeout = 15 * time.Second

// selfStop stops the caller's own seat (the broker pins the caller in the
// subject; seatOf finds only the seat that caller is). It answers first
// and stops after: the stop ends the caller's process, which would never
// hear an answer sent later.
func (m *Manager) selfStop(_ context.Context, c *ep.Call) (any, *proto.Error) {
	var a client.StopArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s, e := m.seatOf(c.Caller())
	if e != nil {
		return nil, e
	}
	if !s.running() {
		return nil, proto.Refuse(proto.CodeFailedPrecondition, "seat %s is not running", s.name)
	}
	graceful := a.Graceful == nil || *a.Graceful
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), selfStopTimeout)
		defer cancel()
		m.endSessions(s.name, attach.ReasonTargetDespawn)
		if err := s.stop(ctx, graceful); err != nil {
			m.logf("seat %s stopping itself: %v", s.name, err)
		}
	}()
	return client.StopReply{Name: s.name, Stopping: true}, nil
}
