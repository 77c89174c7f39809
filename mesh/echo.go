package mesh

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrEchoesOff is EchoDirect on an endpoint without Options.Echoes.
var ErrEchoesOff = errors.New("EchoDirect needs Options.Echoes")

// EchoDirect hands over, as live items marked Echo, every DM and task this
// endpoint's principal sends from anywhere: the operator's identity is
// shared by every CLI command and dashboard, so a dashboard shows the
// operator's DMs and asks made from another terminal as it shows its
// posts (Options.Echoes, which it needs). Only a principal that may read
// other inboxes' subjects (the operator) gets them: the broker refuses an
// agent, and so does this.
func (e *Endpoint) EchoDirect(ctx context.Context) error {
	if !e.opts.Echoes {
		return ErrEchoesOff
	}
	ctx, cancel := context.WithTimeout(ctx, joinConfirmWait+5*time.Second)
	defer cancel()
	var subs []*nats.Subscription
	for _, subject := range []string{wire.SentDMFilter(e.space, e.me), wire.SentTaskFilter(e.space, e.me)} {
		sub, refused, err := e.subscribeConfirmed(ctx, subject, e.onEcho)
		if err == nil {
			err = refused
		}
		if err != nil {
			for _, s := range subs {
				_ = s.Unsubscribe()
			}
			return fmt.Errorf("reading this identity's own DMs and tasks: %w", err)
		}
		subs = append(subs, sub)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
		return errors.New("the endpoint is closed")
	}
	e.echoSubs = append(e.echoSubs, subs...)
	return nil
}

// onEcho runs the receive pipeline on one of this principal's own DMs or
// tasks: the subject must name it as the sender, as the broker pins it.
func (e *Endpoint) onEcho(m *nats.Msg) {
	d, ok := e.received(m)
	if !ok || d.Subject.Sender != e.me || (d.Subject.Kind != wire.KindDM && d.Subject.Kind != wire.KindAnycast) {
		return
	}
	e.inbox.add(&Item{Kind: d.Subject.Kind, Msg: d.Msg, Subject: d.Subject, Echo: true, Received: time.Now()})
}
