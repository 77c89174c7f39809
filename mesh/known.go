package mesh

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/internal/typo"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A channel or role exists once it is used: a post to a channel nobody
// registered, used or joined, or a task for a role nobody ever held, was
// most likely meant for another name. What the space knows of is read
// here; saying so is the caller's.

// ReadsStorage reports whether this endpoint's identity reads the space's
// streams itself (the operator, an open mesh). An agent's or observer's
// JetStream request is dropped by the broker and waits out its deadline,
// so what only storage can say is not asked for them.
func (e *Endpoint) ReadsStorage() bool { return e.profile.ReadsStorage() }

// UsedChannels are the channels with retained posts, read from the CHAT
// stream's subjects; nil when this identity does not read storage or the
// stream cannot be read.
func (e *Endpoint) UsedChannels(ctx context.Context) map[string]bool {
	if !e.ReadsStorage() {
		return nil
	}
	st, err := e.js.Stream(ctx, wire.ChatStream(e.space))
	if err != nil {
		return nil
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(wire.ChatSubjects(e.space)))
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for subj := range info.State.Subjects {
		if s, err := wire.ParseSubject(subj); err == nil && s.Kind == wire.KindChannel {
			out[s.Channel] = true
		}
	}
	return out
}

// Unheard is a name a message went to that nobody may be listening on:
// a channel never registered or posted to before, or a role no peer holds
// or held. Close are the known names it is near (typos of), Known every
// known name of its kind.
type Unheard struct {
	Kind  wire.Kind // KindChannel or KindAnycast
	Name  string
	Close []string
	Known []string
}

// unheardWithin bounds the look-ups behind Unheard: it is advice, and
// never holds a command up for long.
const unheardWithin = 3 * time.Second

// Unheard says whether the message of a receipt went where nobody may be
// listening: nil when it did not, or when that cannot be told.
func (e *Endpoint) Unheard(ctx context.Context, r Receipt) *Unheard {
	ctx, cancel := context.WithTimeout(ctx, unheardWithin)
	defer cancel()
	switch r.Kind {
	case wire.KindChannel:
		return e.unheardChannel(ctx, r)
	case wire.KindAnycast:
		return e.unheardRole(ctx, r.ToService)
	}
	return nil
}

func (e *Endpoint) unheardChannel(ctx context.Context, r Receipt) *Unheard {
	known, registered, ok := e.knownChannels(ctx)
	if !ok || registered[r.Channel] || slices.Contains(e.Channels(), r.Channel) {
		return nil
	}
	items, _, err := e.History(ctx, r.Channel, 2)
	if err != nil {
		return nil // it cannot be told
	}
	for _, it := range items {
		if it.Seq != r.Seq {
			return nil // posted to before
		}
	}
	delete(known, r.Channel)
	names := slices.Sorted(maps.Keys(known))
	return &Unheard{Kind: wire.KindChannel, Name: r.Channel, Close: typo.Close(r.Channel, names, 2, true), Known: names}
}

func (e *Endpoint) unheardRole(ctx context.Context, role string) *Unheard {
	peers, _, err := e.Roster(ctx)
	if err != nil {
		return nil
	}
	known := map[string]bool{}
	for _, p := range peers {
		if p.Role != "" {
			known[strings.ToLower(p.Role)] = true
		}
	}
	if e.ReadsStorage() {
		// A role's queue is made when a credential holding it is minted.
		if st, err := e.js.Stream(ctx, wire.TaskStream(e.space)); err == nil {
			names := st.ConsumerNames(ctx)
			for n := range names.Name() {
				if r, ok := wire.SvcConsumerRole(n); ok {
					known[r] = true
				}
			}
		}
	}
	if known[strings.ToLower(role)] {
		return nil
	}
	names := slices.Sorted(maps.Keys(known))
	return &Unheard{Kind: wire.KindAnycast, Name: role, Close: typo.Close(role, names, 2, true), Known: names}
}

// knownChannels are the channels registered and, when this identity
// reads storage, used; ok is false when the registry cannot be read.
func (e *Endpoint) knownChannels(ctx context.Context) (known, registered map[string]bool, ok bool) {
	reg, err := e.Registry(ctx)
	if err != nil {
		return nil, nil, false
	}
	names, _, err := reg.List(ctx)
	if err != nil {
		return nil, nil, false
	}
	known, registered = map[string]bool{}, map[string]bool{}
	for _, n := range names {
		known[n], registered[n] = true, true
	}
	for n := range e.UsedChannels(ctx) {
		known[n] = true
	}
	return known, registered, true
}

// UnknownChannelError says a channel with no retained posts was never
// registered either; Close are the known channels it is near.
type UnknownChannelError struct {
	Channel string
	Close   []string
}

func (e *UnknownChannelError) Error() string {
	return "unknown channel #" + e.Channel + ": it was never registered and has no retained posts"
}

// CheckKnown says whether a channel with no retained posts exists at all,
// that is, is registered; an unknown one is an *UnknownChannelError naming
// the registered, used and joined channels it is near. When the registry
// cannot be read the channel is taken as known: its emptiness is then all
// that is sure.
func (e *Endpoint) CheckKnown(ctx context.Context, channel string) error {
	known, registered, ok := e.knownChannels(ctx)
	if !ok || registered[channel] {
		return nil
	}
	for _, n := range e.Channels() {
		known[n] = true
	}
	delete(known, channel)
	return &UnknownChannelError{Channel: channel, Close: typo.Close(channel, slices.Sorted(maps.Keys(known)), 2, true)}
}
