package host

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Run blocks until ctx ends, then closes the host. A hosting mesh watches
// meanwhile that JetStream stays on (a full disk switches it off) and logs
// when it does not.
func (h *Host) Run(ctx context.Context) error {
	if h.broker == nil {
		<-ctx.Done()
		return h.Close()
	}
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	warned := false
	for {
		select {
		case <-ctx.Done():
			return h.Close()
		case <-t.C:
			if !h.broker.JetStreamEnabled() && !warned {
				warned = true
				if h.cfg.Log != nil {
					fmt.Fprintf(h.cfg.Log, "%s mesh error: JetStream switched itself off (disk full under %s?); durable delivery is down until restart\n",
						time.Now().Format(time.RFC3339), h.cfg.Paths.StoreDir)
				}
			}
		}
	}
}

// QuitWindow is how long after a quit that named live seats a second quit
// goes on and stops them.
const QuitWindow = 10 * time.Second

// Live names the seats of this host's manager whose process runs: what
// closing the host would stop.
func (h *Host) Live() []string {
	if m := h.Manager(); m != nil {
		return m.Live()
	}
	return nil
}

// AskQuit is one request to stop the host (a Ctrl-C); ok says the host may
// stop now. Seats are never stopped by surprise: with live seats the first
// request stops nothing and names them, and only a second within
// QuitWindow goes on. force (a SIGTERM, which `cotal down` sends only once
// no seat is live or it was told to stop them) goes on at once.
func (h *Host) AskQuit(force bool) (live []string, ok bool) {
	live = h.Live()
	return live, h.quit.ask(time.Now(), force, len(live) > 0)
}

// quitRule is the second-Ctrl-C rule; armed is when it last refused.
type quitRule struct {
	mu    sync.Mutex
	armed time.Time
}

func (q *quitRule) ask(now time.Time, force, live bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if force || !live || (!q.armed.IsZero() && now.Sub(q.armed) < QuitWindow) {
		return true
	}
	q.armed = now
	return false
}
