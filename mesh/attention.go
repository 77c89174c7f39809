package mesh

import (
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ChannelMode is a per-channel override of the attention mode (spec §12):
// runtime state of the connector, reset when it restarts.
type ChannelMode string

// Channel modes.
const (
	ModeNormal ChannelMode = "normal" // the global attention mode applies
	ModeQuiet  ChannelMode = "quiet"  // pull-only: never wakes; @mentions of me still do
	ModeMuted  ChannelMode = "muted"  // dropped on receive, @mentions included
)

// ErrBadChannelMode is returned by SetChannelMode for a mode it does not
// know, or a channel that is a pattern or outside the read ACL.
var ErrBadChannelMode = errors.New("bad channel mode")

// ParseChannelMode reads normal, quiet or muted.
func ParseChannelMode(s string) (ChannelMode, error) {
	switch m := ChannelMode(s); m {
	case ModeNormal, ModeQuiet, ModeMuted:
		return m, nil
	}
	return "", refuse(ErrBadChannelMode, "mode %q: use normal, quiet or muted", s)
}

// channelModes holds the overrides; mu is a leaf lock.
type channelModes struct {
	mu sync.Mutex
	m  map[string]ChannelMode
}

// SetChannelMode sets a runtime override for one concrete channel within
// the read ACL; normal removes it. An endpoint writing its own presence
// mirrors the overrides there.
func (e *Endpoint) SetChannelMode(channel string, mode ChannelMode) error {
	if _, err := ParseChannelMode(string(mode)); err != nil {
		return err
	}
	if err := wire.ValidateConcreteChannel(channel); err != nil {
		return refuse(ErrBadChannelMode, "#%s is not one concrete channel: %v", channel, err)
	}
	if !e.allowSubscribe.Covers(channel) {
		return refuse(ErrBadChannelMode, "#%s is outside your read ACL (allowSubscribe: %s)", channel, describeACL(e.allowSubscribe))
	}
	e.modes.mu.Lock()
	if e.modes.m == nil {
		e.modes.m = map[string]ChannelMode{}
	}
	if mode == ModeNormal {
		delete(e.modes.m, channel)
	} else {
		e.modes.m[channel] = mode
	}
	mirror := make(map[string]string, len(e.modes.m))
	for ch, m := range e.modes.m {
		mirror[ch] = string(m)
	}
	e.modes.mu.Unlock()
	if w := e.presenceWriter(); w != nil {
		return w.SetChannelModes(mirror)
	}
	return nil
}

// ChannelMode is the override of one channel, normal when it has none.
func (e *Endpoint) ChannelMode(channel string) ChannelMode {
	e.modes.mu.Lock()
	defer e.modes.mu.Unlock()
	if m, ok := e.modes.m[channel]; ok {
		return m
	}
	return ModeNormal
}

// ChannelModes are the overrides in force (quiet and muted channels).
func (e *Endpoint) ChannelModes() map[string]ChannelMode {
	e.modes.mu.Lock()
	defer e.modes.mu.Unlock()
	return maps.Clone(e.modes.m)
}

// JoinedChannel is one joined channel as its member sees it.
type JoinedChannel struct {
	Channel    string `json:"channel"`
	Durable    bool   `json:"durable"`              // a durable hold was granted at join
	Generation uint64 `json:"generation,omitempty"` // of the hold; 0 when live only
	SinceMs    int64  `json:"sinceMs"`
}

// Joined lists the joined channels in join order, with their holds.
func (e *Endpoint) Joined() []JoinedChannel {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]JoinedChannel, len(e.joined))
	for i, j := range e.joined {
		out[i] = JoinedChannel{Channel: j.channel, Durable: j.generation > 0, Generation: j.generation, SinceMs: j.since.UnixMilli()}
	}
	return out
}

// PresenceState is the presence this endpoint last wrote.
type PresenceState struct {
	Status        string `json:"status"`
	Activity      string `json:"activity,omitempty"`
	Attention     string `json:"attention"`
	StatusSinceMs int64  `json:"statusSinceMs,omitempty"`
}

// ConnectorState is what a connector holds for its identity, the same for
// a seat's connector in the manager and an agent's own endpoint: who it
// is, its lists, channels and modes, presence and what waits in its inbox.
type ConnectorState struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Role         string       `json:"role,omitempty"`
	Space        string       `json:"space"`
	LifecycleUID string       `json:"lifecycleUid"`
	Profile      wire.Profile `json:"profile"`
	// AllowSubscribe and AllowPublish are never null: [">"] covers
	// every channel, [] none.
	AllowSubscribe wire.ACL               `json:"allowSubscribe"`
	AllowPublish   wire.ACL               `json:"allowPublish"`
	Channels       []JoinedChannel        `json:"channels"`
	Modes          map[string]ChannelMode `json:"modes,omitempty"`
	Presence       *PresenceState         `json:"presence,omitempty"` // nil when it writes none
	Pending        int                    `json:"pending"`            // items waiting to be read
	Rejected       map[wire.Reject]int    `json:"rejected,omitempty"` // deliveries refused as forged or malformed
	NowMs          int64                  `json:"nowMs"`
}

// State is the endpoint's connector state now.
func (e *Endpoint) State() ConnectorState {
	s := ConnectorState{
		ID: e.me.ID(), Name: e.card.Name, Role: e.role, Space: e.space, LifecycleUID: e.uid, Profile: e.profile,
		AllowSubscribe: e.allowSubscribe, AllowPublish: e.allowPublish,
		Channels: e.Joined(), Modes: e.ChannelModes(), Pending: e.Pending() + e.window.carried(),
		NowMs: time.Now().UnixMilli(),
	}
	if rej := e.Rejected(); len(rej) > 0 {
		s.Rejected = rej
	}
	if rec, ok := e.PresenceRecord(); ok {
		att := rec.Attention
		if att == "" {
			att = presence.Open
		}
		s.Presence = &PresenceState{Status: string(rec.Status), Activity: rec.Activity, Attention: string(att), StatusSinceMs: rec.StatusSince}
	}
	return s
}
