package delivery

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Why an @mention on a live channel gets no stored copy.
const (
	MentionUnknown   = "unknown"    // no identity of the space has the name
	MentionAmbiguous = "ambiguous"  // several identities, or several live lifecycles, have it
	MentionNotReader = "not-reader" // the read ACL of its lifecycle excludes the channel
	MentionEnded     = "ended"      // the identity has no lifecycle that is still live
	MentionSelf      = "self"       // the sender mentioned itself
)

// Mention says what one @mention on a live channel gets: a stored copy
// for one member lifecycle, or the reason there is none.
type Mention struct {
	Name         string `json:"name"`
	Stored       bool   `json:"stored"`
	Principal    string `json:"principal,omitempty"`
	LifecycleUID string `json:"lifecycleUid,omitempty"`
	Reason       string `json:"reason,omitempty"` // a Mention* constant, when not stored
	Detail       string `json:"detail,omitempty"` // the reason in words

	p wire.Principal
}

// ResolveMentions says, for each @mention of a post by sender to a live
// channel, whether the service stores a copy for the mentioned identity
// and why not: the fan-out stores exactly what this answers. A name is
// resolved through the space's identity records and the presence roster
// (so a known identity that is offline, or never joined anything, is
// found), then to the one live lifecycle of that identity, whose read ACL
// must cover the channel. A post to a durable channel reaches its members
// through their memberships instead.
func (s *Service) ResolveMentions(ctx context.Context, sender wire.Principal, channel string, names []string) ([]Mention, error) {
	if err := wire.ValidateConcreteChannel(channel); err != nil {
		return nil, err
	}
	return s.resolveMentions(ctx, sender, channel, wire.NormalizeMentions(names))
}

func (s *Service) resolveMentions(ctx context.Context, sender wire.Principal, channel string, names []string) ([]Mention, error) {
	out := make([]Mention, 0, len(names))
	for _, name := range names {
		m, err := s.resolveMention(ctx, sender, channel, name)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *Service) resolveMention(ctx context.Context, sender wire.Principal, channel, name string) (Mention, error) {
	m := Mention{Name: name}
	// name -> principals, each with the lifecycle its source last saw.
	cands := s.life.named(name)
	seenUID := map[string]string{}
	for _, p := range s.roster.Roster() {
		if strings.EqualFold(p.Name, name) {
			if _, ok := cands[p.ID]; !ok {
				cands[p.ID] = ""
			}
			seenUID[p.ID] = p.Record.LifecycleUID
		}
	}
	if len(cands) == 0 {
		return refuseMention(m, MentionUnknown, "no identity named %q in space %s", name, s.space), nil
	}
	if len(cands) > 1 {
		ids := make([]string, 0, len(cands))
		for id := range cands {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return refuseMention(m, MentionAmbiguous, "%q names %d identities: %s", name, len(ids), strings.Join(ids, ", ")), nil
	}
	var pid, recUID string
	for id, u := range cands {
		pid, recUID = id, u
	}
	p, err := wire.ParsePrincipal(pid)
	if err != nil {
		return refuseMention(m, MentionUnknown, "%q is recorded as %q, which is not a principal", name, pid), nil
	}
	m.p, m.Principal = p, pid
	if pid == sender.ID() {
		return refuseMention(m, MentionSelf, "a post is never stored for its own sender"), nil
	}
	uid, reason, detail := s.pickLifecycle(p, seenUID[pid], recUID)
	if reason != "" {
		return refuseMention(m, reason, "%s", detail), nil
	}
	m.LifecycleUID = uid
	// The chosen lifecycle's ACL is read fresh: it decides.
	row, found, err := s.aclRow(ctx, p, uid)
	if err != nil {
		return m, err
	}
	switch {
	case !found || row.Ended() || s.life.isEnded(p, uid):
		return refuseMention(m, MentionEnded, "%s has no live lifecycle", pid), nil
	case !wire.Covered(row.AllowSubscribe, channel):
		return refuseMention(m, MentionNotReader, "the read ACL of %s does not cover #%s", pid, channel), nil
	}
	m.Stored = true
	return m, nil
}

// pickLifecycle chooses which live lifecycle of p a mention is stored for:
// the one presence last saw, else the one its identity record names, else
// its only live one.
func (s *Service) pickLifecycle(p wire.Principal, presenceUID, recordUID string) (uid, reason, detail string) {
	live := s.life.liveUIDs(p)
	for _, u := range []string{presenceUID, recordUID} {
		if u != "" && slices.Contains(live, u) {
			return u, "", ""
		}
	}
	switch len(live) {
	case 0:
		// The view may not have the row yet: the fresh read decides.
		for _, u := range []string{presenceUID, recordUID} {
			if u != "" {
				return u, "", ""
			}
		}
		return "", MentionEnded, p.ID() + " has no live lifecycle"
	case 1:
		return live[0], "", ""
	}
	sort.Strings(live)
	return "", MentionAmbiguous, fmt.Sprintf("%s has %d live lifecycles (%s)", p, len(live), strings.Join(live, ", "))
}

func refuseMention(m Mention, reason, format string, args ...any) Mention {
	m.Stored, m.Reason, m.Detail = false, reason, fmt.Sprintf(format, args...)
	return m
}
