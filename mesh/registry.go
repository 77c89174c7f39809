package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Delivery classes of a channel.
const (
	ClassLive    = "live"    // subscribers at publish time only
	ClassDurable = "durable" // plus a stored copy for every current member
)

// DefaultsKey is the registry key holding the space's channel defaults.
const DefaultsKey = "=defaults"

// Registry limits (spec §6.1): longer texts are refused, never truncated.
const (
	MaxDescription  = 200
	MaxInstructions = 2000
)

// ErrBadChannelConfig is returned when a registry write breaks a rule.
var ErrBadChannelConfig = errors.New("bad channel config")

// ChannelConfig is one registry entry (or the space defaults). Unset fields
// fall back: channel, then defaults, then the built-in value.
type ChannelConfig struct {
	Replay        *bool  `json:"replay,omitempty"`
	ReplayWindow  string `json:"replayWindow,omitempty"`
	DeliveryClass string `json:"deliveryClass,omitempty"`
	Description   string `json:"description,omitempty"`
	Instructions  string `json:"instructions,omitempty"`
}

var windowRule = regexp.MustCompile(`^([0-9]+)(s|m|h|d)$`)

// ParseWindow reads a replay window like 30m or 24h; "" means the whole
// retention.
func ParseWindow(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	m := windowRule.FindStringSubmatch(s)
	if m == nil {
		return 0, refuse(ErrBadChannelConfig, "replay window %q: use a whole number and one unit of s, m, h or d (e.g. 30m, 24h)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > 1<<40 {
		return 0, refuse(ErrBadChannelConfig, "replay window %q is too large", s)
	}
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, nil
}

// Validate checks every rule of the registry; the first broken one is
// named in the error.
func (c ChannelConfig) Validate() error {
	if _, err := ParseWindow(c.ReplayWindow); err != nil {
		return err
	}
	if c.DeliveryClass != "" && c.DeliveryClass != ClassLive && c.DeliveryClass != ClassDurable {
		return refuse(ErrBadChannelConfig, "delivery class %q: use live or durable", c.DeliveryClass)
	}
	if n := utf8.RuneCountInString(c.Description); n > MaxDescription {
		return refuse(ErrBadChannelConfig, "description is %d characters; the limit is %d", n, MaxDescription)
	}
	if n := utf8.RuneCountInString(c.Instructions); n > MaxInstructions {
		return refuse(ErrBadChannelConfig, "instructions are %d characters; the limit is %d", n, MaxInstructions)
	}
	return nil
}

// merge overlays the set fields of patch onto c.
func (c ChannelConfig) merge(patch ChannelConfig) ChannelConfig {
	if patch.Replay != nil {
		c.Replay = patch.Replay
	}
	if patch.ReplayWindow != "" {
		c.ReplayWindow = patch.ReplayWindow
	}
	if patch.DeliveryClass != "" {
		c.DeliveryClass = patch.DeliveryClass
	}
	if patch.Description != "" {
		c.Description = patch.Description
	}
	if patch.Instructions != "" {
		c.Instructions = patch.Instructions
	}
	return c
}

// Effective is a channel's resolved behaviour: the one resolution used by
// live join, fan-out, history and membership alike.
type Effective struct {
	Replay       bool
	ReplayWindow time.Duration // 0: the whole retention
	Class        string
	Registered   bool // the channel has its own registry entry
}

// Resolve applies the fallback order channel ?? defaults ?? built-in.
func Resolve(ch, defaults *ChannelConfig) Effective {
	e := Effective{Replay: true, Class: ClassDurable, Registered: ch != nil}
	for _, c := range []*ChannelConfig{defaults, ch} {
		if c == nil {
			continue
		}
		if c.Replay != nil {
			e.Replay = *c.Replay
		}
		if w, err := ParseWindow(c.ReplayWindow); err == nil && c.ReplayWindow != "" {
			e.ReplayWindow = w
		}
		if c.DeliveryClass != "" {
			e.Class = c.DeliveryClass
		}
	}
	return e
}

// Registry reads and writes the space's channel registry. Reads are open
// to every identity; writes need the operator's credential.
type Registry struct {
	kv     jetstream.KeyValue // nil when read through the delivery service
	bucket string
	// fetch reads the registry through the delivery service, for a
	// credential with no right to read the bucket.
	fetch func(ctx context.Context, channel string) (ChannelsReply, error)
	// watch, when set, reports the broker refusing a publish, so a write
	// without the right fails at once instead of waiting for its ack.
	watch func(subject string) (<-chan error, func())
}

// OpenRegistry opens the registry bucket of a space.
func OpenRegistry(ctx context.Context, js jetstream.JetStream, space string) (*Registry, error) {
	kv, err := js.KeyValue(ctx, wire.ChannelsBucket(space))
	if err != nil {
		return nil, fmt.Errorf("opening the channel registry of %s: %w", space, err)
	}
	return &Registry{kv: kv, bucket: wire.ChannelsBucket(space)}, nil
}

// Registry returns the endpoint's view of the space's channel registry.
func (e *Endpoint) Registry(ctx context.Context) (*Registry, error) {
	if e.mediated {
		return &Registry{bucket: wire.ChannelsBucket(e.space), fetch: func(ctx context.Context, channel string) (ChannelsReply, error) {
			var r ChannelsReply
			err := e.call(ctx, wire.DeliveryChannels, ChannelsArgs{Channel: channel}, &r)
			return r, err
		}}, nil
	}
	r, err := OpenRegistry(ctx, e.js, e.space)
	if err != nil {
		return nil, err
	}
	if e.ownNC {
		r.watch = e.perms.Watch
	}
	return r, nil
}

// write runs one KV write, failing at once if the broker refuses it.
func (r *Registry) write(ctx context.Context, key string, fn func(context.Context) error) error {
	if r.watch == nil {
		return fn(ctx)
	}
	refused, stop := r.watch("$KV." + r.bucket + "." + key)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	select {
	case err := <-done:
		return err
	case err := <-refused:
		return refuse(ErrNotAllowed, "not allowed to write the channel registry (%v); it takes the operator's credential", err)
	}
}

// get reads one entry; nil with no error when it does not exist.
func (r *Registry) get(ctx context.Context, key string) (*ChannelConfig, uint64, error) {
	if r.fetch != nil {
		ch := key
		if key == DefaultsKey {
			ch = ""
		}
		rep, err := r.fetch(ctx, ch)
		if err != nil {
			return nil, 0, err
		}
		if key == DefaultsKey {
			return rep.Defaults, 0, nil
		}
		if c, ok := rep.Channels[key]; ok {
			return &c, 0, nil
		}
		return nil, 0, nil
	}
	ent, err := r.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var c ChannelConfig
	if err := json.Unmarshal(ent.Value(), &c); err != nil {
		return nil, ent.Revision(), fmt.Errorf("registry entry %s is not valid: %w", key, err)
	}
	return &c, ent.Revision(), nil
}

// Get reads a channel's own entry (nil when it has none).
func (r *Registry) Get(ctx context.Context, channel string) (*ChannelConfig, error) {
	if err := wire.ValidateConcreteChannel(channel); err != nil {
		return nil, err
	}
	c, _, err := r.get(ctx, channel)
	return c, err
}

// Defaults reads the space defaults (nil when unset).
func (r *Registry) Defaults(ctx context.Context) (*ChannelConfig, error) {
	c, _, err := r.get(ctx, DefaultsKey)
	return c, err
}

// Effective resolves a channel's behaviour, read fresh.
func (r *Registry) Effective(ctx context.Context, channel string) (Effective, error) {
	if r.fetch != nil {
		if err := wire.ValidateConcreteChannel(channel); err != nil {
			return Effective{}, err
		}
		rep, err := r.fetch(ctx, channel)
		if err != nil {
			return Effective{}, err
		}
		var ch *ChannelConfig
		if c, ok := rep.Channels[channel]; ok {
			ch = &c
		}
		return Resolve(ch, rep.Defaults), nil
	}
	ch, err := r.Get(ctx, channel)
	if err != nil {
		return Effective{}, err
	}
	def, err := r.Defaults(ctx)
	if err != nil {
		return Effective{}, err
	}
	return Resolve(ch, def), nil
}

// Set merges patch into a channel's entry (or, with channel "", into the
// space defaults) with a compare-and-set, retrying a lost race.
func (r *Registry) Set(ctx context.Context, channel string, patch ChannelConfig) (ChannelConfig, error) {
	key := DefaultsKey
	if channel != "" {
		if err := wire.ValidateConcreteChannel(channel); err != nil {
			return ChannelConfig{}, err
		}
		key = channel
	}
	if err := patch.Validate(); err != nil {
		return ChannelConfig{}, err
	}
	if r.kv == nil {
		return ChannelConfig{}, refuse(ErrNotAllowed, "not allowed to write the channel registry; it takes the operator's credential")
	}
	for range 5 {
		cur, rev, err := r.get(ctx, key)
		if err != nil {
			return ChannelConfig{}, err
		}
		var next ChannelConfig
		if cur != nil {
			next = *cur
		}
		next = next.merge(patch)
		b, _ := json.Marshal(next)
		err = r.write(ctx, key, func(ctx context.Context) error {
			var err error
			if rev == 0 {
				_, err = r.kv.Create(ctx, key, b)
			} else {
				_, err = r.kv.Update(ctx, key, b, rev)
			}
			return err
		})
		if err == nil {
			return next, nil
		}
		if errors.Is(err, ErrNotAllowed) {
			return ChannelConfig{}, err
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !strings.Contains(err.Error(), "wrong last sequence") {
			return ChannelConfig{}, fmt.Errorf("writing registry entry %s: %w", key, err)
		}
	}
	return ChannelConfig{}, fmt.Errorf("writing registry entry %s: lost the race five times; retry", key)
}

// List returns every registered channel with its entry, sorted, without
// the defaults.
func (r *Registry) List(ctx context.Context) ([]string, map[string]ChannelConfig, error) {
	if r.fetch != nil {
		rep, err := r.fetch(ctx, "")
		if err != nil {
			return nil, nil, err
		}
		names := slices.Sorted(maps.Keys(rep.Channels))
		return names, rep.Channels, nil
	}
	keys, err := r.kv.ListKeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]ChannelConfig{}
	var names []string
	for k := range keys.Keys() {
		if k == DefaultsKey {
			continue
		}
		c, _, err := r.get(ctx, k)
		if err != nil || c == nil {
			continue
		}
		out[k] = *c
		names = append(names, k)
	}
	sort.Strings(names)
	return names, out, nil
}
