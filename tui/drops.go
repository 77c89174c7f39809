package tui

import (
	"context"
	"strings"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A message of the person's that its recipient will never read (its
// lifecycle ended with it unread, a muted channel) is said where the
// person looks: the status bar and the message log, whichever dashboard
// or command sent it.

// watchDrops reports every drop the receipts of the operator's messages
// tell of, until ctx ends.
func (c *collector) watchDrops(ctx context.Context, e *mesh.Endpoint) {
	stop, err := e.WatchNotes(func(n wire.DeliveryNote) {
		why, dropped := strings.CutPrefix(n.Why, "dropped: ")
		if !dropped {
			return
		}
		to := n.To
		if p, err := wire.ParsePrincipal(to); err == nil {
			to = p.Actor
		}
		c.addError("your message " + n.ID + " to " + wire.CleanLabel(to) + " was dropped: " + wire.CleanLabel(why))
	})
	if err != nil {
		c.addError("drops of your messages will not show: " + err.Error())
		return
	}
	<-ctx.Done()
	stop()
}
