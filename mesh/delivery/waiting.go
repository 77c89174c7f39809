package delivery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Waiting is what the broker holds for one identity lifecycle and has not
// seen settled: its DMs and tasks (the DM durable) and its stored channel
// copies (the backstop durable).
type Waiting struct {
	Principal    wire.Principal
	LifecycleUID string
	Stored       int       // stored, not yet handed to its connector
	Taken        int       // handed to its connector, not yet acked
	Oldest       time.Time // when the oldest of them was stored; zero when none
}

// ListWaiting reads every DM inbox durable of the space, with the backstop
// durable of the same lifecycle, on a trusted (operator) connection.
func ListWaiting(ctx context.Context, js jetstream.JetStream, space string) ([]Waiting, error) {
	dm, err := js.Stream(ctx, wire.DMStream(space))
	if err != nil {
		return nil, fmt.Errorf("reading the DM stream: %w", err)
	}
	dlv, err := js.Stream(ctx, wire.DlvStream(space))
	if err != nil {
		dlv = nil // a space without a backstop
	}
	var out []Waiting
	lister := dm.ListConsumers(ctx)
	for ci := range lister.Info() {
		p, uid, ok := dmOwner(space, ci)
		if !ok {
			continue
		}
		w := Waiting{Principal: p, LifecycleUID: uid}
		w.add(ctx, dm, ci)
		if dlv != nil {
			if c, err := dlv.Consumer(ctx, wire.DlvConsumer(p, uid)); err == nil {
				if info, err := c.Info(ctx); err == nil {
					w.add(ctx, dlv, info)
				}
			}
		}
		out = append(out, w)
	}
	if err := lister.Err(); err != nil {
		return nil, fmt.Errorf("listing DM inboxes: %w", err)
	}
	return out, nil
}

// dmOwner reads whose inbox a DM durable is, from its filter and name.
func dmOwner(space string, ci *jetstream.ConsumerInfo) (wire.Principal, string, bool) {
	rest, ok := strings.CutPrefix(ci.Config.FilterSubject, wire.Root(space)+".inst.")
	if !ok {
		return wire.Principal{}, "", false
	}
	tok := strings.Split(rest, ".")
	if len(tok) != 3 || tok[2] != ">" {
		return wire.Principal{}, "", false
	}
	p := wire.Principal{Owner: tok[0], Actor: tok[1]}
	uid, ok := strings.CutPrefix(ci.Name, wire.DMConsumer(p, ""))
	if !ok || !wire.ValidLifecycleUID(uid) {
		return wire.Principal{}, "", false
	}
	return p, uid, true
}

// add counts a durable's unsettled messages: not yet delivered is stored,
// delivered but not acked is taken; the oldest is the first message past
// its ack floor.
func (w *Waiting) add(ctx context.Context, st jetstream.Stream, ci *jetstream.ConsumerInfo) {
	w.Stored += int(ci.NumPending)
	w.Taken += ci.NumAckPending
	if ci.NumPending == 0 && ci.NumAckPending == 0 {
		return
	}
	m, err := st.GetMsg(ctx, ci.AckFloor.Stream+1, jetstream.WithGetMsgSubject(ci.Config.FilterSubject))
	if err != nil {
		return
	}
	if w.Oldest.IsZero() || m.Time.Before(w.Oldest) {
		w.Oldest = m.Time
	}
}
