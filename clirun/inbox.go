package clirun

import (
	"context"
	"errors"
	"time"

	"github.com/cotal-go/cotal/host"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Inbox is one read of what waits for the caller, held open until it is
// settled: an item is acknowledged only once it has been printed.
type Inbox struct {
	Items  []*mesh.Item
	Me     wire.Principal
	read   *host.InboxRead
	e      *mesh.Endpoint
	cancel context.CancelFunc
}

// Settled is how an inbox read ended: AckErr is the first failed ack
// (that item comes again), NoteErr says what was read could not be noted
// against a mesh crash, Rejected counts what the endpoint dropped.
type Settled struct {
	AckErr, NoteErr error
	Rejected        map[wire.Reject]int
}

// ReadInbox collects what waits for the caller, waiting up to wait for
// the first arrival (told to waiting first), leaving out what an earlier
// read handled before a mesh crash (host.ReadInbox).
func ReadInbox(c Caller, wait time.Duration, waiting func()) (*Inbox, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait+Timeout)
	e, err := c.Endpoint(ctx, mesh.Options{OneShot: true})
	if err != nil {
		cancel()
		return nil, err
	}
	waiting()
	_, p, _, err := c.Paths()
	read, err := host.ReadInbox(ctx, e, p, err == nil, wait)
	if err != nil {
		e.Close()
		cancel()
		return nil, err
	}
	return &Inbox{Items: read.Items, Me: e.Me(), read: read, e: e, cancel: cancel}, nil
}

// Settle acknowledges the items (peek: releases them, to come again),
// notes them against a crash, and closes the read.
func (in *Inbox) Settle(peek bool) Settled {
	defer in.cancel()
	defer in.e.Close()
	var s Settled
	s.AckErr, s.NoteErr = in.read.Settle(peek)
	s.Rejected = in.e.Rejected()
	return s
}

// Roster is the peers of the space, with the view it was read in.
func Roster(c Caller) (peers []presence.Peer, view presence.View, err error) {
	err = c.OneShot(mesh.Options{}, func(ctx context.Context, e *mesh.Endpoint) error {
		peers, view, err = e.Roster(ctx)
		return err
	})
	return peers, view, err
}

// DeliveryList is what waits for each identity and seat.
type DeliveryList struct {
	Incomplete bool            `json:"incomplete"` // a manager did not answer: its seats show no taken count
	Rows       []host.Delivery `json:"rows"`
}

// Deliveries lists, per identity and per seat, what has not been settled
// (host.Deliveries); pending leaves out those with nothing waiting. Only
// the local operator may list them.
func Deliveries(c Caller, pending bool) (DeliveryList, error) {
	var l DeliveryList
	if c.Creds != "" {
		return l, bad(errors.New("deliveries lists every identity's waiting messages: only the local operator may (drop --creds)"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	e, err := c.Endpoint(ctx, mesh.Options{OneShot: true})
	if err != nil {
		return l, err
	}
	defer e.Close()
	cl, nc, err := c.Managers()
	if err != nil {
		return l, err
	}
	defer nc.Close()
	cs, err := cl.Census(ctx, "")
	if err != nil {
		return l, Refused(err)
	}
	l.Incomplete = cs.Incomplete()
	if l.Rows, err = host.Deliveries(ctx, e, cs); err != nil || !pending {
		return l, err
	}
	kept := l.Rows[:0]
	for _, r := range l.Rows {
		if r.Stored+r.Taken > 0 {
			kept = append(kept, r)
		}
	}
	l.Rows = kept
	return l, nil
}
