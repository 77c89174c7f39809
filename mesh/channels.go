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

// durableJoinTimeout bounds the wait for the delivery service (spec §8:
// 30 s, room for a catch-up of a long window): past it the join stands
// live only, and says so.
const durableJoinTimeout = 30 * time.Second

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

	generation uint64 // of the durable hold; 0 when live only
	cursor     uint64 // the hold's join cursor (CHAT sequence)
	existing   bool   // the hold predates this join (a reconnect)
}

// JoinResult says what a join did.
type JoinResult struct {
	Channel    string
	Joined     bool   // false when it was already joined
	Durable    bool   // a durable backstop is active for it
	Reason     string // why it is live only, when it is
	Backfilled int    // history items handed to the inbox, marked historical
}

// Join subscribes to a channel (or a channel family pattern) within the
// read ACL. A channel the broker refuses leaves nothing joined.
func (e *Endpoint) Join(ctx context.Context, channel string) (JoinResult, error) {
	res := JoinResult{Channel: channel}
	if err := wire.ValidateChannel(channel); err != nil {
		return res, err
	}
	if !e.allowSubscribe.Covers(channel) {
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
	eff := e.effective(ctx, channel, &res)
	durable := e.profile != wire.ProfileOpen && eff.Class == ClassDurable
	j := &joinedChannel{channel: channel, subject: wire.ChatFilter(e.space, channel), since: time.Now()}

	// A one-shot reader (a CLI command) takes a held channel from its
	// backstop alone: a live copy seen by one command would come again,
	// stored, to the next. It asks for the hold first and subscribes live
	// only when there is none.
	if durable && e.opts.OneShot {
		if res.Durable, res.Reason = e.durableJoin(ctx, j); !res.Durable {
			if err := e.subscribeLive(ctx, j); err != nil {
				return res, err
			}
		}
	} else {
		if err := e.subscribeLive(ctx, j); err != nil {
			return res, err
		}
		switch {
		case e.profile == wire.ProfileOpen:
			res.Reason = "live only: an open mesh has no durable delivery"
		case res.Reason != "":
		case !durable:
			res.Reason = "live channel: only those subscribed when a post is sent get it"
		default:
			res.Durable, res.Reason = e.durableJoin(ctx, j)
		}
	}
	e.mu.Lock()
	e.joined = append(e.joined, j)
	e.mu.Unlock()
	res.Joined = true
	// Replay is for a joiner, not a returning reader (a seat taken back or
	// resumed reads on where it stood): a one-shot command
	// backfills only when it takes a new hold (the next one reconnects to
	// it), and never for a live channel it will read again next time.
	replay := eff.Replay && wire.IsConcrete(channel) && !e.opts.Returning && (!e.opts.OneShot || (res.Durable && !j.existing))
	if replay {
		// Under a durable hold, posts after its join cursor come as
		// stored copies: history only covers what came before.
		res.Backfilled = e.backfill(ctx, channel, eff.ReplayWindow, j.generation > 0, j.cursor)
	}
	return res, nil
}

// subscribeLive opens the live subscription of a join and confirms the
// broker accepted it; a refusal leaves nothing subscribed.
func (e *Endpoint) subscribeLive(ctx context.Context, j *joinedChannel) error {
	sub, refused, err := e.subscribeConfirmed(ctx, j.subject, e.onLive)
	if err != nil {
		return fmt.Errorf("cannot join %q: %w", j.channel, err)
	}
	if refused != nil {
		return refuse(ErrNotInReadACL, "cannot join %q: not within this agent's read ACL (allowSubscribe): %v", j.channel, refused)
	}
	j.sub = sub
	return nil
}

// subscribeConfirmed subscribes and waits until the broker has taken the
// subscription (a flush) or refused it (refused, with nothing left
// subscribed); err is any other failure.
func (e *Endpoint) subscribeConfirmed(ctx context.Context, subject string, cb nats.MsgHandler) (sub *nats.Subscription, refused, err error) {
	start := time.Now()
	if sub, err = e.nc.Subscribe(subject, cb); err != nil {
		return nil, nil, err
	}
	if err = e.nc.FlushWithContext(ctx); err != nil {
		_ = sub.Unsubscribe()
		return nil, nil, err
	}
	if refused = e.awaitRefusal(ctx, subject, "subscription", start); refused != nil {
		_ = sub.Unsubscribe()
		return nil, refused, nil
	}
	return sub, nil, nil
}

// effective resolves a channel's class and replay; a family takes the
// space defaults. An unreadable registry is treated as live and noted.
func (e *Endpoint) effective(ctx context.Context, channel string, res *JoinResult) Effective {
	eff := Effective{Replay: true, Class: ClassLive}
	reg, err := e.Registry(ctx)
	if err == nil {
		if wire.IsConcrete(channel) {
			eff, err = reg.Effective(ctx, channel)
		} else {
			var def *ChannelConfig
			if def, err = reg.Defaults(ctx); err == nil {
				eff = Resolve(nil, def)
			}
		}
	}
	switch {
	case errors.Is(err, ErrNoDeliveryService):
		// An agent reads the registry through the delivery service: with
		// none, no durable hold is possible either.
		eff = Effective{Replay: true, Class: ClassLive}
		res.Reason = "live only: durable backstop unavailable (" + err.Error() + ")"
	case err != nil:
		eff = Effective{Replay: true, Class: ClassLive}
		res.Reason = "registry unreadable, treated as live: " + err.Error()
	}
	return eff
}

// durableJoin asks the delivery service for a durable hold on a joined
// channel. Durable only when both the live subscription and the
// membership stand; otherwise the reason says why it is live only.
func (e *Endpoint) durableJoin(ctx context.Context, j *joinedChannel) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, durableJoinTimeout)
	defer cancel()
	var rep JoinReply
	if err := e.call(ctx, wire.DeliveryJoin, JoinArgs{Channel: j.channel}, &rep); err != nil {
		return false, "live only: durable backstop unavailable (" + err.Error() + ")"
	}
	if !rep.Durable {
		return false, "live only: " + rep.Reason
	}
	e.mu.Lock()
	j.generation, j.cursor, j.existing = rep.Generation, rep.Frontier, rep.Existing
	e.mu.Unlock()
	return true, ""
}

// backfill hands the channel's retained history to the inbox, marked
// historical. A post that also arrives live surfaces once: the inbox
// dedups by id.
func (e *Endpoint) backfill(ctx context.Context, channel string, window time.Duration, bounded bool, upTo uint64) int {
	ctx, cancel := context.WithTimeout(ctx, backfillTimeout)
	defer cancel()
	var since time.Time
	if window > 0 {
		since = time.Now().Add(-window)
	}
	items, _, err := e.history(ctx, channel, DefaultHistoryLimit, since)
	if err != nil {
		e.logf("no backfill for #%s: %v", channel, err)
		return 0
	}
	n := 0
	for _, h := range items {
		if h.Msg.From.ID == e.me.ID() || (bounded && h.Seq > upTo) {
			continue
		}
		sender, err := wire.ParsePrincipal(h.Msg.From.ID)
		if err != nil {
			continue
		}
		it := &Item{
			Kind: wire.KindChannel, Msg: h.Msg, Historical: true, Seq: h.Seq, Received: time.Now(),
			Subject: wire.Subject{Space: e.space, Kind: wire.KindChannel, Sender: sender, Channel: channel},
		}
		if e.inbox.add(it) {
			n++
		}
	}
	return n
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
		if err := e.perms.Since(subject, op, since); err != nil {
			return err
		}
		select {
		case <-t.C:
			return e.perms.Since(subject, op, since)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Leave unsubscribes from a channel; it reports whether it was joined.
// A durable hold is ended first; if that cannot be confirmed the leave
// fails and nothing changes, so a member never believes it left while
// copies still pile up for it.
func (e *Endpoint) Leave(ctx context.Context, channel string) (bool, error) {
	e.mu.Lock()
	var j *joinedChannel
	for _, c := range e.joined {
		if c.channel == channel {
			j = c
		}
	}
	e.mu.Unlock()
	if j == nil {
		return false, nil
	}
	if j.generation > 0 {
		if err := e.call(ctx, wire.DeliveryLeave, LeaveArgs{Channel: channel, Generation: j.generation}, nil); err != nil {
			return false, fmt.Errorf("cannot leave #%s: the durable hold could not be ended (%w); still joined", channel, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, c := range e.joined {
		if c == j {
			e.joined = append(e.joined[:i], e.joined[i+1:]...)
		}
	}
	if j.sub == nil {
		return true, nil
	}
	return true, j.sub.Unsubscribe()
}

// dropRefusedChannel forgets a joined channel the broker refused late.
func (e *Endpoint) dropRefusedChannel(subject string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, j := range e.joined {
		if j.subject == subject {
			e.joined = append(e.joined[:i], e.joined[i+1:]...)
			if j.sub != nil {
				_ = j.sub.Unsubscribe()
			}
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

// DefaultChannel is where a send with no channel goes: the first concrete
// joined channel the post ACL permits (DefaultSendChannel). None is
// ErrNoDefaultChannel, saying whether nothing is joined or nothing joined
// may be posted to.
func (e *Endpoint) DefaultChannel() (string, error) {
	joined := e.Channels()
	if ch := DefaultSendChannel(joined, e.allowPublish); ch != "" {
		return ch, nil
	}
	if len(joined) == 0 {
		return "", refuse(ErrNoDefaultChannel, "no default channel: name a channel explicitly, or join one first")
	}
	return "", refuse(ErrNoDefaultChannel, "no default channel: you may post to none of the channels you joined (#%s; allowPublish: %s); name a channel explicitly",
		strings.Join(joined, ", #"), describeACL(e.allowPublish))
}

// DefaultSendChannel is the default send channel of an identity that
// joined the channels joined, in join order, and may post where
// allowPublish covers (wire.Every on an open mesh): the first
// concrete one it may post to, "" when none qualifies. A family it follows
// or a channel it may only read is never the default.
func DefaultSendChannel(joined []string, allowPublish wire.ACL) string {
	for _, ch := range joined {
		if wire.IsConcrete(ch) && allowPublish.Covers(ch) {
			return ch
		}
	}
	return ""
}

// AllowSubscribe is the read ACL: wire.Every when unrestricted, never nil.
func (e *Endpoint) AllowSubscribe() wire.ACL { return e.allowSubscribe }

// AllowPublish is the post ACL: wire.Every when unrestricted, empty for
// an observer, never nil.
func (e *Endpoint) AllowPublish() wire.ACL { return e.allowPublish }

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

// JoinSummary is a join result in one honest line: durable only when the
// backstop really holds the channel, and why not otherwise.
func JoinSummary(r JoinResult) string {
	var b strings.Builder
	b.WriteString("Joined #" + r.Channel)
	if r.Durable {
		b.WriteString(" (durable backstop active)")
	} else if r.Reason != "" {
		b.WriteString(" (LIVE only — " + strings.TrimPrefix(r.Reason, "live only: ") + ")")
	} else {
		b.WriteString(" (live)")
	}
	if r.Backfilled > 0 {
		fmt.Fprintf(&b, "; %d earlier post(s) in your inbox as history", r.Backfilled)
	}
	return b.String() + "."
}
