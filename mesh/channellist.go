package mesh

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// ChannelRow is one channel of the space with its effective settings, as
// `cotal channels list` shows it.
type ChannelRow struct {
	Channel      string `json:"channel"`
	Registered   bool   `json:"registered"`
	Used         bool   `json:"used"` // has posts in the retained history
	Class        string `json:"class"`
	Replay       bool   `json:"replay"`
	ReplayWindow string `json:"replayWindow,omitempty"`
	Description  string `json:"description,omitempty"`
	Instructions string `json:"instructions,omitempty"`
}

// ListChannels is every registered or used channel of the space (used
// ones only when this identity reads storage), sorted, each with its
// effective settings, and the space defaults they fall back to.
func (e *Endpoint) ListChannels(ctx context.Context) ([]ChannelRow, *ChannelConfig, error) {
	reg, err := e.Registry(ctx)
	if err != nil {
		return nil, nil, err
	}
	names, entries, err := reg.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	def, err := reg.Defaults(ctx)
	if err != nil {
		return nil, nil, err
	}
	used := e.UsedChannels(ctx)
	all := map[string]bool{}
	for _, n := range names {
		all[n] = true
	}
	for n := range used {
		all[n] = true
	}
	rows := make([]ChannelRow, 0, len(all))
	for n := range all {
		var ch *ChannelConfig
		if c, ok := entries[n]; ok {
			ch = &c
		}
		eff := Resolve(ch, def)
		r := ChannelRow{Channel: n, Registered: ch != nil, Used: used[n], Class: eff.Class, Replay: eff.Replay}
		switch {
		case ch != nil && ch.ReplayWindow != "":
			r.ReplayWindow = ch.ReplayWindow
		case def != nil:
			r.ReplayWindow = def.ReplayWindow
		}
		if ch != nil {
			r.Description, r.Instructions = ch.Description, ch.Instructions
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Channel < rows[j].Channel })
	return rows, def, nil
}

// ParseReplay reads a replay setting as a person types it: on or off (or
// true, yes, false, no); "" leaves it unset.
func ParseReplay(s string) (*bool, error) {
	switch s {
	case "":
		return nil, nil
	case "on", "true", "yes":
		on := true
		return &on, nil
	case "off", "false", "no":
		off := false
		return &off, nil
	}
	return nil, fmt.Errorf("replay %q: use on or off", s)
}

// String is a registry entry in one line: only what is set.
func (c *ChannelConfig) String() string {
	if c == nil {
		return "(none set: replay on, whole retention, durable)"
	}
	var parts []string
	if c.DeliveryClass != "" {
		parts = append(parts, "class "+c.DeliveryClass)
	}
	if c.Replay != nil {
		parts = append(parts, map[bool]string{true: "replay on", false: "replay off"}[*c.Replay])
	}
	if c.ReplayWindow != "" {
		parts = append(parts, "window "+c.ReplayWindow)
	}
	if c.Description != "" {
		parts = append(parts, fmt.Sprintf("description %q", c.Description))
	}
	if c.Instructions != "" {
		parts = append(parts, fmt.Sprintf("instructions %q", c.Instructions))
	}
	if len(parts) == 0 {
		return "(nothing set)"
	}
	return strings.Join(parts, ", ")
}
