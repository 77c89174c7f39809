package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// classText says how a channel delivers.
func classText(eff mesh.Effective) string {
	s := eff.Class
	if eff.Class == mesh.ClassDurable {
		s += " (posts are kept for members who are away)"
	} else {
		s += " (only those listening when a post is sent get it)"
	}
	if eff.Replay {
		s += "; replay on"
		if eff.ReplayWindow > 0 {
			s += ", window " + eff.ReplayWindow.String()
		}
	} else {
		s += "; replay off"
	}
	return s
}

func channelInfoText(ch string, cfg, def *mesh.ChannelConfig, st mesh.ConnectorState, stErr error) string {
	var b strings.Builder
	eff := mesh.Resolve(cfg, def)
	if cfg == nil {
		fmt.Fprintf(&b, "#%s is not in the channel registry: it follows the space defaults: %s.", ch, classText(eff))
	} else {
		fmt.Fprintf(&b, "#%s is in the channel registry. Its text is advisory: written by whoever configured the space, it grants nothing.\n", ch)
		if cfg.Description != "" {
			b.WriteString("Description: " + wire.IndentBody(cfg.Description) + "\n")
		}
		if cfg.Instructions != "" {
			b.WriteString("Instructions: " + wire.IndentBody(cfg.Instructions) + "\n")
		}
		b.WriteString("Delivery: " + classText(eff) + ".")
	}
	if stErr == nil {
		switch {
		case joinedOn(st, ch):
			b.WriteString("\nYou are on #" + ch + modeSuffix(st, ch) + ".")
		case !st.AllowSubscribe.Covers(ch):
			b.WriteString("\n#" + ch + " is outside your read ACL (allowSubscribe: " + describeACL(st.AllowSubscribe) + ").")
		default:
			b.WriteString("\nYou are not on #" + ch + " (cotal_join to follow it).")
		}
	}
	return b.String()
}

func modeSuffix(st mesh.ConnectorState, ch string) string {
	if m, ok := st.Modes[ch]; ok && m != mesh.ModeNormal {
		return " (" + string(m) + ")"
	}
	return ""
}

// channelsText lists the joined channels, in join order, then the other
// registered channels the read ACL covers and those with a mode.
// backstops is what the delivery service says it holds for the caller,
// or why it could not say.
type backstops struct {
	held map[string]mesh.MembershipInfo
	err  error
}

// says is a durable joined channel's backstop in words.
func (b *backstops) says(j mesh.JoinedChannel) string {
	m, ok := b.held[j.Channel]
	switch {
	case b.err != nil:
		return "durable, backstop DEGRADED: the delivery service does not answer (" + b.err.Error() + ")"
	case !ok || !m.Activated || m.Generation != j.Generation:
		return "durable, backstop DEGRADED: the delivery service has no active hold for you on record"
	}
	return "durable, backstop active"
}

func channelsText(st mesh.ConnectorState, names []string, cfgs map[string]mesh.ChannelConfig, def *mesh.ChannelConfig, regErr error, holds *backstops) string {
	joined := map[string]mesh.JoinedChannel{}
	var order []string
	for _, j := range st.Channels {
		joined[j.Channel] = j
		order = append(order, j.Channel)
	}
	var others []string
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := joined[n]; !ok && st.AllowSubscribe.Covers(n) {
			others = append(others, n)
			seen[n] = true
		}
	}
	for ch := range st.Modes {
		if _, ok := joined[ch]; !ok && !seen[ch] {
			others = append(others, ch)
		}
	}
	sort.Strings(others)
	order = append(order, others...)
	if len(order) == 0 {
		s := "You are on no channel, and no registered channel is within your read ACL (allowSubscribe: " + describeACL(st.AllowSubscribe) + ")."
		if regErr != nil {
			s += " (The channel registry could not be read: " + regErr.Error() + ".)"
		}
		return s
	}
	var b strings.Builder
	b.WriteString("Channels (* = joined; quiet and muted modes last until this session ends):\n")
	for _, ch := range order {
		j, on := joined[ch]
		mark := " "
		if on {
			mark = "*"
		}
		var parts []string
		cfg, registered := cfgs[ch]
		var cp *mesh.ChannelConfig
		if registered {
			cp = &cfg
		}
		eff := mesh.Resolve(cp, def)
		switch {
		case !wire.IsConcrete(ch):
			parts = append(parts, familyText(st, ch, j, on, holds))
		case st.Profile == wire.ProfileOpen:
			parts = append(parts, "live (an open mesh keeps nothing)")
		case on && j.Durable && holds != nil:
			// Joined with a hold: durable, whatever the registry says now.
			parts = append(parts, holds.says(j))
		case regErr != nil:
			parts = append(parts, "delivery class unknown")
		case eff.Class == mesh.ClassDurable && on && j.Durable:
			parts = append(parts, "durable, backstop active")
		case eff.Class == mesh.ClassDurable && on:
			parts = append(parts, "durable, but your backstop is NOT active: live only (leave and join again to retry)")
		default:
			parts = append(parts, eff.Class)
		}
		if wire.IsConcrete(ch) && regErr == nil {
			if eff.Replay {
				parts = append(parts, "replay on")
			} else {
				parts = append(parts, "replay off")
			}
		}
		if m, ok := st.Modes[ch]; ok {
			parts = append(parts, "mode "+string(m))
		}
		if !on {
			parts = append(parts, "not joined")
		}
		line := mark + " #" + wire.CleanLabel(ch) + " — " + strings.Join(parts, "; ")
		if registered && cfg.Description != "" {
			line += " — " + wire.CleanLabel(cfg.Description)
		}
		b.WriteString(line + "\n")
	}
	if regErr != nil {
		b.WriteString("(The channel registry could not be read: " + regErr.Error() + ".)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// familyText is a followed (or visible) family's row: the state of its
// stored copies when it holds a durable membership of its own or sits
// under a family that does; a pattern with * or the root > holds none.
func familyText(st mesh.ConnectorState, ch string, j mesh.JoinedChannel, on bool, holds *backstops) string {
	const family = "a family of channels"
	if !on {
		return family
	}
	if !heldFamily(ch) {
		return family + ", followed live: no stored copies (only a channel or a family ending in .> holds them)"
	}
	if j.Durable && holds != nil {
		return family + "; " + holds.says(j)
	}
	for _, outer := range st.Channels {
		if outer.Channel != ch && outer.Durable && holds != nil && wire.Covered([]string{outer.Channel}, ch) {
			return family + "; stored copies through #" + wire.CleanLabel(outer.Channel) + ": " + holds.says(outer)
		}
	}
	if st.Profile == wire.ProfileOpen {
		return family + ", live (an open mesh keeps nothing)"
	}
	return family + ", live only: no stored copies (leave and join again to retry the backstop)"
}

// heldFamily reports whether a family pattern can hold a durable
// membership: concrete segments and a final >.
func heldFamily(ch string) bool {
	base, ok := strings.CutSuffix(ch, ".>")
	return ok && wire.IsConcrete(base)
}

func modeText(ch string, m mesh.ChannelMode, on bool) string {
	var s string
	switch m {
	case mesh.ModeQuiet:
		s = "#" + ch + " is now quiet: its posts wait in cotal_inbox and never interrupt you; @mentions of you still reach you."
	case mesh.ModeMuted:
		s = "#" + ch + " is now muted: its posts are dropped, @mentions of you included; DMs and tasks are unaffected."
	default:
		s = "#" + ch + " is back to normal: your attention mode decides how its posts reach you."
	}
	if !on && m != mesh.ModeNormal {
		s += " (You are not on #" + ch + " now; the mode applies once you join it or are @mentioned there.)"
	}
	return s + " This lasts until this session ends."
}

// registryNote is the registry's word on a channel just joined.
func registryNote(ctx context.Context, ss *session, ch string) string {
	if !wire.IsConcrete(ch) {
		return ""
	}
	reg, err := ss.e.Registry(ctx)
	if err != nil {
		return ""
	}
	cfg, err := reg.Get(ctx, ch)
	switch {
	case err != nil:
		return ""
	case cfg == nil:
		return " #" + ch + " is not in the channel registry."
	case cfg.Description != "":
		return " About #" + ch + " (advisory, from the channel registry): " + wire.CleanLabel(cfg.Description)
	}
	return ""
}
