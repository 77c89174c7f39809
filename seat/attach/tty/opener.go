package tty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
	"github.com/cotal-go/cotal/seat/client"
)

// SeatOpener opens sessions on one seat through its manager, held by the
// caller of the clients conn returns (conn is asked each time, so it can
// dial again once a connection has closed). Before each grant it checks
// the seat still runs as lifecycle uid ("" skips that check); a seat that
// was stopped, exited or became another lifecycle is ErrGone.
func SeatOpener(conn func() (*client.Client, error), s client.Seat, uid string) Open {
	return func(ctx context.Context) (*nats.Conn, json.RawMessage, error) {
		c, err := conn()
		if err != nil {
			return nil, nil, err
		}
		row, err := c.Inspect(ctx, s)
		if err == nil {
			switch {
			case uid != "" && row.LifecycleUID != uid:
				return nil, nil, fmt.Errorf("%w: %s is now another seat (lifecycle %s, not %s)", ErrGone, s.Name, row.LifecycleUID, uid)
			case !row.Running():
				return nil, nil, fmt.Errorf("%w: %s is not running (%s)", ErrGone, s.Name, row.Process)
			}
			var raw json.RawMessage
			if raw, err = c.Attach(ctx, s); err == nil {
				return c.EP().Conn(), raw, nil
			}
		}
		return nil, nil, seatError(ctx, c, s, err)
	}
}

// seatError says which manager refusals mean the seat is gone. A bind to
// an epoch the manager has left means it restarted: its description is
// fetched again so the next try reaches the new epoch.
func seatError(ctx context.Context, c *client.Client, s client.Seat, err error) error {
	e := proto.AsError(err)
	switch {
	case e == nil:
	case e.HasDetail(proto.BindRefusedKind):
		_, _ = c.EP().Describe(ctx, wire.ManagerEndpoint, s.Manager)
	case e.Code == proto.CodeNotFound && !errors.Is(err, ep.ErrNoCommand),
		e.Code == proto.CodeFailedPrecondition, // attach: the seat is not running
		e.Code == proto.CodeExpired:            // owner mode: the seat is another lifecycle now
		return fmt.Errorf("%w: %w", ErrGone, err)
	}
	return err
}

// RunSeat attaches to the seat of a census row, reaching its manager
// through conn (see Run); a seat whose process does not run has no
// terminal to attach to, and is refused.
func RunSeat(ctx context.Context, o Options, conn func() (*client.Client, error), row client.CensusRow) (Ending, error) {
	if !row.Running() {
		return Failed, fmt.Errorf("seat %s is not running (%s); there is no terminal to attach to", o.Name, row.Process)
	}
	return Run(ctx, o, SeatOpener(conn, row.Seat(), row.LifecycleUID))
}
