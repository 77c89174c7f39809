package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/seat/client"
)

// DownOptions say how Down treats the seats of a running mesh.
type DownOptions struct {
	WithAgents bool // stop every manager's seats first, those of supervise processes too
	KeepSeats  bool // leave them running in their keepers for the next up
	Timeout    time.Duration
	// Managers reaches the space's managers; closing the connection ends
	// the client.
	Managers func() (*client.Client, *nats.Conn, error)
	// Note says what a person should know while Down waits; Seats says
	// which seats it stopped (WithAgents), before it stops the mesh.
	Note  func(format string, a ...any)
	Seats func(stopped []string)
}

// Downed is what Down did: Stopped is false when the mesh was not
// running (or stopped meanwhile).
type Downed struct {
	Stopped      bool
	PID          int
	SeatsStopped []string
	SeatsKept    []string
}

// LiveSeatsError refuses a bare down while seats are live: stopping the
// mesh would stop them by surprise.
type LiveSeatsError struct{ Live []string }

func (e *LiveSeatsError) Error() string { return fmt.Sprintf("%d seat(s) still running", len(e.Live)) }

// Down stops p's mesh and waits until it is gone. Seats run in the mesh's
// ptys, so stopping the mesh stops them: never by surprise. A bare down
// is refused while any seat is live (*LiveSeatsError); WithAgents stops
// every manager's seats first; KeepSeats leaves them in their keepers. A
// mesh already on its way out is only waited for.
func Down(ctx context.Context, p config.Paths, o DownOptions) (Downed, error) {
	var d Downed
	// The store lock says whether the mesh runs, never broker.json.
	s, err := Probe(p)
	if err != nil || !s.Running {
		return d, err
	}
	_, serr := s.Serving()
	var stopping *RecordError
	switch {
	case errors.As(serr, &stopping) && stopping.Stopping:
		o.Note("mesh %s (pid %d) is already stopping; waiting for it to end\n", p.Space, s.PID)
	case o.WithAgents:
		stopped, err := stopEverySeat(o.Managers)
		var re *RecordError
		switch {
		case errors.As(err, &re) && !re.Starting:
			// Its managers cannot be reached; the mesh still stops its
			// own seats as it stops.
			o.Note("cotal: %v\ncannot ask its managers for their seats: stopping the mesh stops its own; seats of supervise processes keep running\n", re)
		case err != nil:
			return d, fmt.Errorf("stopping the seats: %w; the mesh is still running", err)
		case len(stopped) > 0:
			d.SeatsStopped = stopped
			o.Seats(stopped)
		}
	case !o.KeepSeats:
		live, err := RunningSeats(o.Managers)
		if err != nil {
			return d, fmt.Errorf("cannot tell whether seats are live (%v); `cotal down --with-agents` stops the mesh and any seats", err)
		}
		if len(live) > 0 {
			return d, &LiveSeatsError{Live: live}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	stop := Stop
	if o.KeepSeats {
		if kept, err := RunningSeats(o.Managers); err == nil {
			d.SeatsKept = kept
		}
		stop = StopKeepingSeats
	}
	pid, err := stop(ctx, p, func(pid int) { o.Note("waiting for mesh %s (pid %d) to stop...\n", p.Space, pid) })
	switch {
	case errors.Is(err, ErrNotRunning):
		return d, nil // it stopped meanwhile
	case errors.Is(err, context.DeadlineExceeded):
		return d, fmt.Errorf("mesh %s (pid %d) still running after %s; see %s", p.Space, pid, o.Timeout, p.LogFile())
	case err != nil:
		return d, err
	}
	d.Stopped, d.PID = true, pid
	return d, nil
}

// stopEverySeat stops every running seat of every manager of the space,
// gracefully, in parallel, and names them.
func stopEverySeat(managers func() (*client.Client, *nats.Conn, error)) ([]string, error) {
	cl, nc, err := managers()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cl.StopEverySeat(ctx)
}

// RunningSeats asks every manager which seats still run (nil when none
// answers: a mesh without managers).
func RunningSeats(managers func() (*client.Client, *nats.Conn, error)) ([]string, error) {
	cl, nc, err := managers()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := cl.Running(ctx)
	if err != nil {
		return nil, err
	}
	var live []string
	for _, r := range rows {
		live = append(live, r.Name)
	}
	return live, nil
}
