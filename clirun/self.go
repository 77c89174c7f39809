package clirun

import (
	"context"
	"os"
	"strings"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/seat/client"
)

// InSeat is the manager instance whose connector holds the caller's
// identity: set in a seat's environment, with the seat's creds; "" when
// not in a seat.
func (c Caller) InSeat() string {
	if c.Creds == "" {
		return ""
	}
	return os.Getenv("COTAL_MANAGER_INSTANCE")
}

// Self asks the seat's connector, through its manager, to act for the
// seat; the broker vouches for the caller through the subject.
func (c Caller) Self(call func(context.Context, client.Self) error) error {
	cl, nc, err := c.Managers()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	return Refused(call(ctx, cl.Self(c.InSeat())))
}

// SeatInbox is an inbox read inside a seat: the connector keeps the
// seat's inbox, so the read goes to it, bounded as a model's read is (an
// agent reads this output into its context, so a backlog comes in
// windows and only what was printed is cleared).
func SeatInbox(c Caller, peek bool) (w mesh.Window, err error) {
	err = c.Self(func(ctx context.Context, s client.Self) (err error) {
		w, err = s.InboxWindow(ctx, peek)
		return err
	})
	return w, err
}

// SetStatus sets the seat's status (idle, waiting or working) and
// activity on the roster; outside a seat, or another status, is bad input.
func SetStatus(c Caller, status string, activity []string) (r client.StatusSet, err error) {
	if c.InSeat() == "" {
		return r, usagef("set-status changes a seat's presence and works inside a seat; a person at a terminal uses `cotal join` and /status")
	}
	switch status {
	case "idle", "waiting", "working":
	default:
		return r, usagef("status %q: use idle, waiting or working", status)
	}
	act := strings.Join(activity, " ")
	err = c.Self(func(ctx context.Context, s client.Self) (err error) {
		r, err = s.SetStatus(ctx, client.StatusArgs{Status: status, Activity: &act})
		return err
	})
	return r, err
}

// Leave has the seat leave a channel (its durable hold ends first), and
// says whether it was on it; outside a seat is bad input.
func Leave(c Caller, channel string) (left bool, err error) {
	if c.InSeat() == "" {
		return false, usagef("leave works inside a seat; a person at a terminal uses `cotal join` and /leave")
	}
	err = c.Self(func(ctx context.Context, s client.Self) (err error) {
		left, err = s.Leave(ctx, channel)
		return err
	})
	return left, err
}

// SeatJoin has the seat join each channel in turn, telling joined each
// one's summary as it is joined; it needs at least one.
func SeatJoin(c Caller, channels []string, joined func(client.JoinedReply)) error {
	if len(channels) == 0 {
		return usagef("inside a seat, join takes --channel: the seat is already on the mesh")
	}
	for _, ch := range channels {
		var r client.JoinedReply
		if err := c.Self(func(ctx context.Context, s client.Self) (err error) {
			r, err = s.Join(ctx, ch)
			return err
		}); err != nil {
			return err
		}
		joined(r)
	}
	return nil
}
