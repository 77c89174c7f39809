package clirun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/broker"
	"github.com/cotal-go/cotal/internal/cliargs"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// HistoryRead is a channel's newest retained posts as the caller may read
// them, oldest first.
type HistoryRead struct {
	Channel  string             `json:"channel"`
	Complete bool               `json:"complete"`
	Items    []mesh.HistoryItem `json:"items"`
	Me       wire.Principal     `json:"-"`
}

// History reads the newest limit posts of one channel within the read
// ACL. A pattern, a bad name or a limit below 1 is bad input; an empty
// read of a channel nobody used says which names are close.
func History(c Caller, channel string, limit int) (HistoryRead, error) {
	h := HistoryRead{Channel: channel}
	if err := wire.ValidateChannel(channel); err != nil {
		return h, bad(err)
	}
	if !wire.IsConcrete(channel) {
		return h, usagef("history reads one channel at a time: %q is a pattern; name one channel it covers", channel)
	}
	if limit <= 0 {
		return h, usagef("--limit %d: give a positive number", limit)
	}
	err := c.OneShot(mesh.Options{Subscribe: []string{}}, func(ctx context.Context, e *mesh.Endpoint) (err error) {
		h.Me = e.Me()
		if h.Items, h.Complete, err = e.ReadHistory(ctx, channel, limit); err != nil || len(h.Items) > 0 {
			return err
		}
		var unknown *mesh.UnknownChannelError
		if err := e.CheckKnown(ctx, channel); errors.As(err, &unknown) {
			return fmt.Errorf("%w%s", err, cliargs.DidYouMean("#", unknown.Close, " (`cotal channels list` lists the channels)"))
		}
		return nil
	})
	return h, err
}

// ChatLimit reads the space's channel retention or, with either limit
// set, changes it; a limit out of range is bad input.
func ChatLimit(c Caller, maxAge time.Duration, ageSet bool, maxPerSender int64, perSet bool) (broker.Retention, error) {
	switch {
	case maxAge < 0:
		return broker.Retention{}, usagef("--max-age %s: give a positive duration, or 0 for no age limit", maxAge)
	case perSet && maxPerSender < 1:
		return broker.Retention{}, usagef("--max-per-sender %d: give at least 1", maxPerSender)
	case (ageSet || perSet) && maxAge > 0 && maxAge < time.Second:
		return broker.Retention{}, usagef("--max-age %s: the smallest age is 1s", maxAge)
	}
	var r broker.Retention
	err := chatOperator(c, func(ctx context.Context, nc *nats.Conn, space string) (err error) {
		if !ageSet && !perSet {
			r, err = broker.ChatRetention(ctx, nc, space)
			return err
		}
		var age *time.Duration
		if ageSet {
			age = &maxAge
		}
		r, err = broker.SetChatRetention(ctx, nc, space, age, maxPerSender)
		return err
	})
	return r, err
}

// Deletion is what a clear deleted, or would delete, per stream.
type Deletion struct {
	Deleted []broker.StreamCount `json:"deleted"`
}

// String says how many messages of which streams: "3 from CHAT_x and 1
// from DM_x".
func (d Deletion) String() string {
	said := make([]string, len(d.Deleted))
	for i, c := range d.Deleted {
		said[i] = fmt.Sprintf("%d from %s", c.Messages, c.Stream)
	}
	return strings.Join(said, " and ")
}

// ClearHistory deletes every retained channel post and, with dms, every
// stored DM; without force it deletes nothing and refuses, saying what it
// would delete.
func ClearHistory(c Caller, dms, force bool) (Deletion, error) {
	var d Deletion
	err := chatOperator(c, func(ctx context.Context, nc *nats.Conn, space string) (err error) {
		d.Deleted, err = broker.ClearHistory(ctx, nc, space, dms, force)
		return err
	})
	if err == nil && !force {
		return d, usagef("this would delete %s; run again with --force to do it", d)
	}
	return d, err
}

// chatOperator is Operator for retention, which is the operator's to
// read and change; a space with no chat stream asks whether it is
// provisioned.
func chatOperator(c Caller, fn func(ctx context.Context, nc *nats.Conn, space string) error) error {
	err := c.Operator("cotal history", fn)
	if errors.Is(err, broker.ErrNoChatStream) {
		return fmt.Errorf("%w (is it provisioned?)", err)
	}
	return err
}
