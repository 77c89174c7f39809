package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Receipt is what a send can honestly claim: the message was stored at a
// stream sequence. It never says delivered; it says how the recipient
// looked at send time.
type Receipt struct {
	ID        string    `json:"id"`
	Kind      wire.Kind `json:"kind"`
	Subject   string    `json:"subject"`
	Stream    string    `json:"stream"`
	Seq       uint64    `json:"seq"`
	Duplicate bool      `json:"duplicate,omitempty"` // the mesh had stored this id already

	Channel   string   `json:"channel,omitempty"`
	To        string   `json:"to,omitempty"`
	ToName    string   `json:"toName,omitempty"`
	ToService string   `json:"toService,omitempty"`
	Mentions  []string `json:"mentions,omitempty"`

	// RecipientStatus is the DM recipient's roster status at send
	// (idle, waiting, working, offline, or unknown).
	RecipientStatus string `json:"recipientStatus,omitempty"`
	// Holders is how many online peers held the role at send.
	Holders int `json:"holders"`
	// MentionCopies says, for a post to a live channel, which mentions get
	// a stored copy (the rest see it only if listening when it is sent).
	MentionCopies []MentionCopy `json:"mentionCopies,omitempty"`
	// Delivered is always false: a send proves storage, not delivery.
	Delivered bool `json:"delivered"`
}

// String is the receipt as the CLI prints it.
func (r Receipt) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stored seq %d", r.Seq)
	if r.Duplicate {
		b.WriteString(" (already stored: same id)")
	}
	switch r.Kind {
	case wire.KindDM:
		fmt.Fprintf(&b, "; recipient %s at send", r.RecipientStatus)
	case wire.KindAnycast:
		if r.Holders == 0 {
			fmt.Fprintf(&b, "; no @%s holder online at send, it waits in the queue", r.ToService)
		} else {
			fmt.Fprintf(&b, "; %d @%s holder(s) online at send", r.Holders, r.ToService)
		}
	}
	for _, m := range r.MentionCopies {
		if m.Stored {
			fmt.Fprintf(&b, "; @%s gets a stored copy", m.Name)
		} else {
			fmt.Fprintf(&b, "; @%s gets no stored copy (only if listening now)", m.Name)
		}
	}
	b.WriteString("; delivery not confirmed")
	return b.String()
}

// SendOption adjusts an outgoing message.
type SendOption func(*wire.Message)

// WithMentions @mentions peers by name.
func WithMentions(names ...string) SendOption {
	return func(m *wire.Message) { m.Mentions = wire.NormalizeMentions(append(m.Mentions, names...)) }
}

// WithID sets the message id (tests and retries; normally a fresh UUID).
func WithID(id string) SendOption { return func(m *wire.Message) { m.ID = id } }

// newMessage builds an outgoing message; resend says its id was the
// caller's (WithID), so it may be one the mesh stored already.
func (e *Endpoint) newMessage(text string, opts []SendOption) (m wire.Message, resend bool) {
	fresh := wire.NewID()
	m = wire.Message{
		ID: fresh, TS: time.Now().UnixMilli(), Space: e.space,
		From:  wire.Sender{ID: e.me.ID(), Name: e.card.Name, Role: e.role},
		Parts: wire.TextParts(text),
	}
	for _, o := range opts {
		o(&m)
	}
	return m, m.ID != fresh
}

// Send posts text to a channel (multicast). An empty channel means the
// default send channel: the first concrete joined one the post ACL permits.
func (e *Endpoint) Send(ctx context.Context, channel, text string, opts ...SendOption) (Receipt, error) {
	if channel == "" {
		ch, err := e.DefaultChannel()
		if err != nil {
			return Receipt{}, err
		}
		channel = ch
	}
	if err := wire.ValidateConcreteChannel(channel); err != nil {
		return Receipt{}, err
	}
	if !e.allowPublish.Covers(channel) {
		return Receipt{}, refuse(ErrNotAllowed, "not allowed to post to #%s (allowPublish: %s)", channel, describeACL(e.allowPublish))
	}
	m, resend := e.newMessage(text, opts)
	m.Channel = channel
	if len(m.Mentions) > 0 {
		if err := e.checkMentions(ctx, m.Mentions); err != nil {
			return Receipt{}, err
		}
	}
	subject, err := wire.ChatSubject(e.space, e.me, channel)
	if err != nil {
		return Receipt{}, err
	}
	r, err := e.publish(ctx, subject, m, resend, "post to #"+channel)
	if err != nil {
		return r, err
	}
	r.Channel, r.Mentions = channel, m.Mentions
	r.MentionCopies = e.mentionCopies(ctx, channel, m.Mentions)
	return r, nil
}

// mentionCopies asks the delivery service which mentions of a post to a
// live channel get a stored copy; nil when there are none to ask about, the
// channel is durable, or no service answers (an open mesh has none).
func (e *Endpoint) mentionCopies(ctx context.Context, channel string, mentions []string) []MentionCopy {
	if len(mentions) == 0 || e.profile == wire.ProfileOpen {
		return nil
	}
	if reg, err := e.Registry(ctx); err == nil {
		if eff, err := reg.Effective(ctx, channel); err == nil && eff.Class == ClassDurable {
			return nil
		}
	}
	var r MentionsReply
	if err := e.call(ctx, wire.DeliveryMentions, MentionsArgs{Channel: channel, Names: mentions}, &r); err != nil {
		e.logf("cannot tell which mentions get a stored copy: %v", err)
		return nil
	}
	return r.Mentions
}

// DM sends text to one peer, named by id (owner.actor) or by display name
// (case-insensitive). A known identity of the space that is not online is
// a valid target: the DM waits in its durable inbox.
func (e *Endpoint) DM(ctx context.Context, to, text string, opts ...SendOption) (Receipt, error) {
	target, err := e.ResolvePeer(ctx, to)
	if err != nil {
		return Receipt{}, err
	}
	m, resend := e.newMessage(text, opts)
	m.To = target.ID.ID()
	r, err := e.publish(ctx, wire.DMSubject(e.space, target.ID, e.me), m, resend, "DM "+target.Name)
	if err != nil {
		return r, err
	}
	r.To, r.ToName, r.RecipientStatus = target.ID.ID(), target.Name, target.Status
	return r, nil
}

// Ask sends text to one holder of a role (anycast). With no holder online
// the task waits in the role's queue.
func (e *Endpoint) Ask(ctx context.Context, role, text string, opts ...SendOption) (Receipt, error) {
	role = strings.ToLower(strings.TrimSpace(role))
	if !wire.ValidToken(role) {
		return Receipt{}, fmt.Errorf("role %q must be one token of a-z 0-9 _", role)
	}
	m, resend := e.newMessage(text, opts)
	m.ToService = role
	r, err := e.publish(ctx, wire.SvcSubject(e.space, role, e.me), m, resend, "ask @"+role)
	if err != nil {
		return r, err
	}
	r.ToService = role
	if w, err := e.roster(ctx); err == nil {
		for _, p := range w.Roster() {
			if !p.Offline && strings.EqualFold(p.Role, role) {
				r.Holders++
			}
		}
	}
	return r, nil
}

// publish stores m with Nats-Msg-Id = id and waits for the stream's
// stored notice (stored.go).
func (e *Endpoint) publish(ctx context.Context, subject string, m wire.Message, resend bool, what string) (Receipt, error) {
	if err := m.Validate(); err != nil {
		return Receipt{}, err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return Receipt{}, err
	}
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	n, err := e.publishStored(ctx, subject, m.ID, data, what, resend)
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{ID: m.ID, Kind: subjectKind(subject), Subject: subject, Stream: n.stream, Seq: n.seq, Duplicate: n.duplicate}, nil
}

func subjectKind(subject string) wire.Kind {
	if s, err := wire.ParseSubject(subject); err == nil {
		return s.Kind
	}
	return ""
}

// Target is a resolved DM recipient.
type Target struct {
	ID     wire.Principal
	Name   string
	Status string // roster status at resolution: idle, waiting, working, offline
	Known  bool   // found in the space's identity records rather than the roster
}

// RosterView is a live picture of the space's presence: the bucket's
// watcher for an identity that may watch it, the delivery service's
// roster for one that may not.
type RosterView interface {
	Roster() []presence.Peer
	View() presence.View
	Changes() <-chan struct{}
}

// roster starts the presence watcher on first use and waits briefly for
// its initial snapshot.
func (e *Endpoint) roster(ctx context.Context) (RosterView, error) {
	if e.mediated {
		return e.rosterRemote(ctx)
	}
	e.watchOnce.Do(func() { e.watchErr = e.startWatcher(ctx) })
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return nil, ErrClosed
	case e.watchErr != nil:
		return nil, e.watchErr
	}
	return e.watcher, nil
}

// firstReplayWait bounds how long the first roster read waits for the
// presence bucket's replay; past it, a lookup is refused as unverifiable
// (retry). A replicated bucket on a loaded cluster can take over a second.
const firstReplayWait = 3 * time.Second

// startWatcher starts the presence watcher and waits briefly for its
// initial snapshot. The watcher is handed to the endpoint under mu, so
// Close either finds it or, having run first, makes it stop here.
func (e *Endpoint) startWatcher(ctx context.Context) error {
	w := presence.NewWatcher(e.presenceKV, presence.OnWarning(func(s string) { e.logf("presence: %s", s) }))
	if err := w.Start(e.ctx); err != nil {
		return err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		w.Close()
		return ErrClosed
	}
	e.watcher = w
	e.mu.Unlock()
	// Wait for the initial replay to be consumed; an empty bucket
	// never yields a snapshot, but its view turns current at once.
	deadline := time.NewTimer(firstReplayWait)
	defer deadline.Stop()
	for w.View().State == presence.Unpopulated {
		select {
		case <-w.Changes():
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// Roster returns the peers of the space as this endpoint sees them, and
// the state of that view.
func (e *Endpoint) Roster(ctx context.Context) ([]presence.Peer, presence.View, error) {
	w, err := e.roster(ctx)
	if err != nil {
		return nil, presence.View{}, err
	}
	return w.Roster(), w.View(), nil
}

// Watcher is the endpoint's live roster, started on first use.
func (e *Endpoint) Watcher(ctx context.Context) (RosterView, error) { return e.roster(ctx) }

// ResolvePeer finds a DM target by id or by case-insensitive name: on the
// roster first, then among the identities the space has minted. Several
// matches are refused with the candidates; none is refused naming the
// space.
func (e *Endpoint) ResolvePeer(ctx context.Context, to string) (Target, error) {
	to = strings.TrimSpace(to)
	if to == "" {
		return Target{}, errors.New("no recipient given")
	}
	w, err := e.roster(ctx)
	if err != nil {
		return Target{}, err
	}
	return e.resolveOn(ctx, w, to)
}

// resolveOn resolves to on the roster w. The view is read before the
// roster: a refusal that says nobody has the name rests on a view that
// was current when the roster was read, not on one that turned current
// while the identity records were asked (a replay ending meanwhile).
func (e *Endpoint) resolveOn(ctx context.Context, w RosterView, to string) (Target, error) {
	v := w.View()
	peers := w.Roster()
	if strings.Contains(to, ".") {
		p, err := wire.ParsePrincipal(to)
		if err != nil {
			return Target{}, fmt.Errorf("recipient %q: %w", to, err)
		}
		for _, peer := range peers {
			if peer.ID == p.ID() {
				return Target{ID: p, Name: peer.Name, Status: string(peer.Status)}, nil
			}
		}
		if rec, ok := e.lookupIdentity(ctx, p); ok {
			return Target{ID: p, Name: rec, Status: "offline", Known: true}, nil
		}
		if e.linked(ctx) {
			// Minted on another side of a leaf link: its roster and
			// records are that side's, and the DM crosses as stored.
			return Target{ID: p, Name: p.Actor, Status: "beyond the leaf link"}, nil
		}
		if v.State != presence.Current {
			return Target{}, refuse(ErrUnverifiable, "cannot verify %q: the presence view is %s; retry, or use the peer's id", to, v.State)
		}
		return Target{}, refuse(ErrNoPeer, "no peer %q in space %q", to, e.space)
	}
	var matches []presence.Peer
	for _, peer := range peers {
		if strings.EqualFold(peer.Name, to) {
			matches = append(matches, peer)
		}
	}
	switch len(matches) {
	case 1:
		p, err := wire.ParsePrincipal(matches[0].ID)
		if err != nil {
			return Target{}, fmt.Errorf("peer %q has id %q, which is not a principal", to, matches[0].ID)
		}
		return Target{ID: p, Name: matches[0].Name, Status: string(matches[0].Status)}, nil
	case 0:
	default:
		ids := make([]string, len(matches))
		for i, m := range matches {
			ids[i] = m.ID
		}
		sort.Strings(ids)
		return Target{}, refuse(ErrAmbiguous, "%q fits %d peers in space %q: %s; use the id", to, len(matches), e.space, strings.Join(ids, ", "))
	}
	// Not on the roster: a known identity of the space (owner local on a
	// workstation) still has a durable inbox waiting for it.
	if wire.ValidToken(to) {
		for _, actor := range []string{to, strings.ToLower(to)} {
			p := wire.Principal{Owner: "local", Actor: actor}
			if name, ok := e.lookupIdentity(ctx, p); ok {
				return Target{ID: p, Name: name, Status: "offline", Known: true}, nil
			}
		}
	}
	if v.State != presence.Current {
		return Target{}, refuse(ErrUnverifiable, "cannot verify %q: the presence view is %s; retry, or use the peer's id", to, v.State)
	}
	return Target{}, refuse(ErrNoPeer, "no peer %q in space %q%s", to, e.space, candidates(peers))
}

// candidates lists the names a mistyped target might have meant.
func candidates(peers []presence.Peer) string {
	if len(peers) == 0 {
		return " (nobody is on the roster)"
	}
	names := make([]string, 0, len(peers))
	for _, p := range peers {
		names = append(names, p.Name)
	}
	if len(names) > 10 {
		names = append(names[:10], "...")
	}
	return " (peers: " + strings.Join(names, ", ") + ")"
}

// identityRecord is the part of the space's identity registry a client
// reads (written by the mesh when it mints an identity).
type identityRecord struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Retired bool   `json:"retired"`
}

// lookupIdentity reads a principal's registry row: its name when the space
// minted it and has not retired it.
// linked reports whether this side's DM stream sources another side's
// across a leaf link (broker.LinkStreams). A mediated endpoint cannot
// read stream configuration and says no.
func (e *Endpoint) linked(ctx context.Context) bool {
	if e.mediated || e.js == nil {
		return false
	}
	s, err := e.js.Stream(ctx, wire.DMStream(e.space))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(s.CachedInfo().Config.Sources, func(src *jetstream.StreamSource) bool { return src.External != nil })
}

func (e *Endpoint) lookupIdentity(ctx context.Context, p wire.Principal) (string, bool) {
	if e.mediated {
		ids, err := e.lookupRemote(ctx, p.ID())
		if err != nil || len(ids) != 1 || !ids[0].Found || ids[0].ID != p.ID() {
			return "", false
		}
		return ids[0].Name, true
	}
	kv, err := e.js.KeyValue(ctx, wire.RecordsBucket(e.space))
	if err != nil {
		return "", false
	}
	ent, err := kv.Get(ctx, wire.IdentityKey(p))
	if err != nil {
		return "", false
	}
	var rec identityRecord
	if json.Unmarshal(ent.Value(), &rec) != nil || rec.Retired || rec.ID != p.ID() {
		return "", false
	}
	if rec.Name == "" {
		rec.Name = p.Actor
	}
	return rec.Name, true
}

// checkMentions refuses a mention of a name nobody on the roster has: a
// mention that reaches no one must not look as if it did.
func (e *Endpoint) checkMentions(ctx context.Context, names []string) error {
	w, err := e.roster(ctx)
	if err != nil {
		return err
	}
	v := w.View() // before the roster, as in resolveOn
	known := map[string]bool{}
	for _, p := range w.Roster() {
		known[strings.ToLower(p.Name)] = true
	}
	var unknown []string
	for _, n := range names {
		if !known[n] {
			if _, ok := e.lookupIdentity(ctx, wire.Principal{Owner: "local", Actor: n}); ok {
				continue
			}
			unknown = append(unknown, "@"+n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	if v.State != presence.Current {
		return refuse(ErrUnverifiable, "cannot verify mention(s) %s: the presence view is %s", strings.Join(unknown, ", "), v.State)
	}
	return refuse(ErrNoPeer, "unknown mention(s): %s — no such peer observed in space %q", strings.Join(unknown, ", "), e.space)
}

// BadTarget reports whether a send failed on what its sender named: no
// such peer, an ambiguous name, no default channel, an invalid channel or
// a wildcard target.
func BadTarget(err error) bool {
	for _, target := range []error{ErrNoPeer, ErrAmbiguous, ErrNoDefaultChannel, wire.ErrInvalidChannel, wire.ErrWildcardTarget} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
