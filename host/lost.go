package host

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
)

// lostPoll is how often WatchLost looks at its connection.
const lostPoll = 250 * time.Millisecond

// ServerGrace is how long a mesh reached by --server may stay silent
// before a client gives it up.
const ServerGrace = 5 * time.Second

// WatchLost watches a long-lived client connection to the mesh of space p
// and says, once, that the mesh is gone: its process ended or another
// took its place (the store lock says), or, for a mesh reached by server,
// that nothing answered for ServerGrace. A connection merely reconnecting
// is not lost.
func WatchLost(ctx context.Context, p config.Paths, server string, nc *nats.Conn) <-chan error {
	lost := make(chan error, 1)
	local := server == ""
	pid := 0
	if local {
		if s, err := Probe(p); err == nil && s.Running {
			pid = s.PID
		}
	}
	go func() {
		tick := time.NewTicker(lostPoll)
		defer tick.Stop()
		var down time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if nc.Status() == nats.CONNECTED {
				down = time.Time{}
				continue
			}
			if down.IsZero() {
				down = time.Now()
			}
			if local {
				s, err := Probe(p)
				switch {
				case err != nil:
				case !s.Running:
					lost <- fmt.Errorf("mesh %s stopped; you have left it (`cotal up --detach` starts it again, then join again)", p.Space)
					return
				case pid != 0 && s.PID != pid:
					lost <- fmt.Errorf("mesh %s was restarted (pid %d, was %d); you have left it: join again", p.Space, s.PID, pid)
					return
				}
				continue
			}
			if time.Since(down) > ServerGrace {
				lost <- fmt.Errorf("lost the mesh at %s: nothing has answered for %s, so it stopped or cannot be reached; you have left it", server, ServerGrace)
				return
			}
		}
	}()
	return lost
}
