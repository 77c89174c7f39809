package mesh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/wire"
)

// ErrNotInReadACL is returned by Join for a channel outside the
// credential's allowSubscribe list.
var ErrNotInReadACL = errors.New("not within this agent's read ACL (allowSubscribe)")

// joinConfirmWait is how long Join waits after a flush for the broker to
// refuse the subscription. The refusal is sent before the flush's PONG,
// so this only covers the error callback being dispatched.
const joinConfirmWait = 50 * time.Millisecond

// joinedChannel is one live channel subscription.
type joinedChannel struct {
	channel string
	subject string
	sub     *nats.Subscription
	since   time.Time
}

// JoinResult says what a join did.
type JoinResult struct {
	Channel string
	Joined  bool   // false when it was already joined
	Durable bool   // a durable backstop is active for it
	Reason  string // why it is live only, when it is
}

// Join subscribes to a channel (or a channel family pattern) within the
// read ACL. A channel the broker refuses leaves nothing joined.
func (e *Endpoint) Join(ctx context.Context, channel string) (JoinResult, error) {
	res := JoinResult{Channel: channel}
	if err := wire.ValidateChannel(channel); err != nil {
		return res, err
	}
	if e.allowSubscribe != nil && !wire.Covered(e.allowSubscribe, channel) {
		return res, refuse(ErrNotInReadACL, "cannot join %q: not within this agent's read ACL (allowSubscribe)", channel)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return res, ErrClosed
	}
	for _, j := range e.joined {
		if j.channel == channel {
			e.mu.Unlock()
			return res, nil
		}
	}
	e.mu.Unlock()

	ctx, cancel := withDeadline(ctx)
	defer cancel()
	subject := wire.ChatFilter(e.space, channel)
	start := time.Now()
	sub, err := e.nc.Subscribe(subject, e.onLive)
	if err != nil {
		return res, fmt.Errorf("cannot join %q: %w", channel, err)
	}
	if err := e.nc.FlushWithContext(ctx); err != nil {
		_ = sub.Unsubscribe()
		return res, fmt.Errorf("cannot join %q: %w", channel, err)
	}
	if err := e.awaitRefusal(ctx, subject, "subscription", start); err != nil {
		_ = sub.Unsubscribe()
		return res, refuse(ErrNotInReadACL, "cannot join %q: not within this agent's read ACL (allowSubscribe): %v", channel, err)
	}
	e.mu.Lock()
	e.joined = append(e.joined, &joinedChannel{channel: channel, subject: subject, sub: sub, since: start})
	e.mu.Unlock()
	res.Joined = true
	res.Reason = "live only: no durable backstop for this channel on this endpoint"
	return res, nil
}

// awaitRefusal gives the connection's error callback a moment to report a
// refusal of op on subject, and returns it.
func (e *Endpoint) awaitRefusal(ctx context.Context, subject, op string, since time.Time) error {
	if !e.ownNC {
		return nil // an in-process operator connection is never refused
	}
	t := time.NewTimer(joinConfirmWait)
	defer t.Stop()
	for {
		if err := e.perms.since(subject, op, since); err != nil {
			return err
		}
		select {
		case <-t.C:
			return e.perms.since(subject, op, since)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Leave unsubscribes from a channel; it reports whether it was joined.
func (e *Endpoint) Leave(_ context.Context, channel string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, j := range e.joined {
		if j.channel == channel {
			e.joined = append(e.joined[:i], e.joined[i+1:]...)
			return true, j.sub.Unsubscribe()
		}
	}
	return false, nil
}

// dropRefusedChannel forgets a joined channel the broker refused late.
func (e *Endpoint) dropRefusedChannel(subject string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, j := range e.joined {
		if j.subject == subject {
			e.joined = append(e.joined[:i], e.joined[i+1:]...)
			_ = j.sub.Unsubscribe()
			e.logf("the broker refused channel #%s: left it", j.channel)
			return
		}
	}
}

// Channels lists the joined channels in join order.
func (e *Endpoint) Channels() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.joined))
	for i, j := range e.joined {
		out[i] = j.channel
	}
	return out
}

// DefaultChannel is the first concrete joined channel, where a send with
// no channel goes.
func (e *Endpoint) DefaultChannel() (string, error) {
	for _, ch := range e.Channels() {
		if wire.IsConcrete(ch) {
			return ch, nil
		}
	}
	return "", refuse(ErrNoDefaultChannel, "no default channel: name a channel explicitly, or join one first")
}

// AllowSubscribe is the read ACL, nil when unrestricted.
func (e *Endpoint) AllowSubscribe() []string { return e.allowSubscribe }

// AllowPublish is the post ACL, nil when unrestricted.
func (e *Endpoint) AllowPublish() []string { return e.allowPublish }

// describeACL renders an ACL list for an error message.
func describeACL(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return "#" + strings.Join(l, ", #")
}

// withDeadline gives ctx the default deadline of a broker round trip when
// the caller set none (nats.go refuses to flush without one).
func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, 10*time.Second)
}
