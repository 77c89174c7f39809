package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// A send that succeeded can still have gone nowhere anyone looks: a post to
// a channel nobody registered or used before (a typo of one that is), a
// task for a role nobody ever held. The send stands (exit 0); a warning
// line says so, with the close names.

// warnWithin bounds the look-ups behind a warning: it is advice, and never
// holds up the command for long.
const warnWithin = 3 * time.Second

// sendWarning is the warning for a sent message, "" when there is none.
func sendWarning(ctx context.Context, e *mesh.Endpoint, r mesh.Receipt, readsStorage bool) string {
	ctx, cancel := context.WithTimeout(ctx, warnWithin)
	defer cancel()
	switch r.Kind {
	case wire.KindChannel:
		return channelWarning(ctx, e, r, readsStorage)
	case wire.KindAnycast:
		return roleWarning(ctx, e, r.ToService, readsStorage)
	}
	return ""
}

// channelWarning warns of a post to a channel that was neither registered
// nor posted to before it.
func channelWarning(ctx context.Context, e *mesh.Endpoint, r mesh.Receipt, readsStorage bool) string {
	ch := r.Channel
	reg, err := e.Registry(ctx)
	if err != nil {
		return ""
	}
	names, entries, err := reg.List(ctx)
	if err != nil {
		return ""
	}
	if _, ok := entries[ch]; ok || slices.Contains(e.Channels(), ch) {
		return ""
	}
	if items, _, err := e.History(ctx, ch, 2); err != nil {
		return "" // it cannot be told
	} else {
		for _, it := range items {
			if it.Seq != r.Seq {
				return ""
			}
		}
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	if readsStorage {
		for n := range usedChannels(ctx, e) {
			known[n] = true
		}
	}
	delete(known, ch)
	msg := fmt.Sprintf("warning: #%s was never registered or posted to before: nobody may be reading it", ch)
	if close := closeMatches(ch, slices.Sorted(maps.Keys(known))); len(close) > 0 {
		for i := range close {
			close[i] = "#" + close[i]
		}
		return msg + "; did you mean " + orList(close) + "?"
	}
	return msg + " (`cotal channels list` lists the channels)"
}

// roleWarning warns of a task for a role no peer holds or held.
func roleWarning(ctx context.Context, e *mesh.Endpoint, role string, readsStorage bool) string {
	peers, _, err := e.Roster(ctx)
	if err != nil {
		return ""
	}
	known := map[string]bool{}
	for _, p := range peers {
		if p.Role != "" {
			known[strings.ToLower(p.Role)] = true
		}
	}
	if readsStorage {
		// A role's queue is made when a credential holding it is minted.
		if js, err := jetstream.New(e.Conn()); err == nil {
			if st, err := js.Stream(ctx, wire.TaskStream(e.Space())); err == nil {
				names := st.ConsumerNames(ctx)
				for n := range names.Name() {
					if r, ok := strings.CutPrefix(n, "svc_"); ok {
						known[r] = true
					}
				}
			}
		}
	}
	if known[strings.ToLower(role)] {
		return ""
	}
	msg := fmt.Sprintf("warning: no peer holds or ever held role @%s: the task waits until one does", role)
	if close := closeMatches(role, slices.Sorted(maps.Keys(known))); len(close) > 0 {
		for i := range close {
			close[i] = "@" + close[i]
		}
		return msg + "; did you mean " + orList(close) + "?"
	}
	if len(known) > 0 {
		return msg + " (roles here: " + strings.Join(slices.Sorted(maps.Keys(known)), ", ") + ")"
	}
	return msg
}
