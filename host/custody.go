package host

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/issue"
	"github.com/cotal-go/cotal/seat/keeper"
)

// keepFile is where `down --keep-seats` names the mesh process that is to
// let its seats' keepers run on when it stops.
func keepFile(p config.Paths) string { return filepath.Join(PreserveDir(p), "keep-seats") }

// StopKeepingSeats stops the space's mesh as Stop does, but the mesh lets
// go of the seats their keepers hold instead of stopping them: they run
// on, and the next `up` takes them back. It returns the mesh's pid.
func StopKeepingSeats(ctx context.Context, p config.Paths, slow func(pid int)) (int, error) {
	s, err := Probe(p)
	if err != nil {
		return 0, err
	}
	if !s.Running {
		return 0, ErrNotRunning
	}
	if err := config.EnsureDir(issue.RunDir(p), 0o700); err != nil {
		return 0, err
	}
	if err := config.EnsureDir(PreserveDir(p), 0o700); err != nil {
		return 0, err
	}
	if err := config.WriteFileAtomic(keepFile(p), []byte(strconv.Itoa(s.PID)+"\n"), 0o600); err != nil {
		return 0, fmt.Errorf("asking the mesh to keep its seats: %w", err)
	}
	_ = os.Remove(preserveFile(p))
	pid, err := stop(ctx, p, slow)
	_ = os.Remove(keepFile(p))
	return pid, err
}

// keepsSeats reports whether this process was asked to let its seats run
// on as it stops.
func (h *Host) keepsSeats() bool {
	if h.cfg.Supervise != nil {
		return false
	}
	b, err := os.ReadFile(keepFile(h.cfg.Paths))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && pid == os.Getpid()
}

// KeepSeatsOnClose makes Close let go of the seats their keepers hold
// rather than stop them (what `down --keep-seats` asks of a mesh by
// file); for a host run in this process.
func (h *Host) KeepSeatsOnClose() { h.keep.Store(true) }

// port is the port the broker listens on: the configured one, or else the
// one the space's last mesh listened on while seats it spawned may still
// run in their keepers (their processes reach the mesh at that address),
// when it is free; else a free one.
func (h *Host) port() int {
	if h.cfg.Port != 0 {
		return h.cfg.Port
	}
	if !h.seatsKept() {
		return 0
	}
	rec, err := config.ReadBrokerRecord(h.cfg.Paths)
	if err != nil {
		return 0
	}
	u, err := url.Parse(rec.URL)
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port <= 0 {
		return 0
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", u.Port()))
	if err != nil {
		h.logf("the port seats in custody reach the mesh at (%d) is taken (%v): they cannot reach this one", port, err)
		return 0
	}
	_ = l.Close()
	return port
}

// seatsKept reports whether any keeper directory is left under the run
// directory: a seat in custody, or one to account for.
func (h *Host) seatsKept() bool {
	dirs, err := keeper.List(issue.RunDir(h.cfg.Paths))
	return err == nil && len(dirs) > 0
}

// reportCustody says in the log what the manager's start made of the seats
// in custody.
func (h *Host) reportCustody() {
	m := h.Manager()
	if m == nil {
		return
	}
	for _, l := range m.CustodyReport().Lines() {
		h.logf("%s", l)
	}
}
