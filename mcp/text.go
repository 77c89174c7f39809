package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// windowText is an inbox read as the model reads it.
func windowText(w mesh.Window) string {
	var b strings.Builder
	if len(w.Items) == 0 && len(w.Kept) == 0 {
		b.WriteString("Inbox empty, no new messages.")
	} else if len(w.Items) > 0 {
		if w.Peek {
			fmt.Fprintf(&b, "%d peer message(s) waiting (peek: nothing was cleared):\n", len(w.Items))
		} else {
			fmt.Fprintf(&b, "%d new peer message(s):\n", len(w.Items))
		}
		for _, it := range w.Items {
			b.WriteString(it.Line + "\n")
		}
	}
	var notes []string
	if len(w.Kept) > 0 {
		kept := make([]string, 0, len(w.Kept))
		for i, k := range w.Kept {
			if i == 10 {
				kept = append(kept, fmt.Sprintf("and %d more", len(w.Kept)-i))
				break
			}
			kept = append(kept, fmt.Sprintf("%s (%d characters)", k.What, k.Chars))
		}
		notes = append(notes, fmt.Sprintf("Too large for one reply of %d characters, so kept in your inbox: %s.", w.Budget, strings.Join(kept, "; ")))
	}
	if w.More > 0 {
		notes = append(notes, fmt.Sprintf("%d more message(s) waiting: call cotal_inbox again.", w.More))
	}
	if w.Muted > 0 {
		if w.Peek {
			notes = append(notes, fmt.Sprintf("%d post(s) on muted channels not shown.", w.Muted))
		} else {
			notes = append(notes, fmt.Sprintf("%d post(s) on muted channels dropped.", w.Muted))
		}
	}
	if w.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d live channel post(s) no longer fit your inbox and were dropped.", w.Dropped))
	}
	if w.Unsettled != "" {
		notes = append(notes, "Some of these were "+w.Unsettled+".")
	}
	if len(notes) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString(strings.Join(notes, "\n"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// rosterText is one line per peer: glyph, name/role, status and for how
// long, activity, non-open attention, muted channels, and when last heard.
// A peer's id is added only where names collide.
func rosterText(peers []presence.Peer, v presence.View, me, space string) string {
	now := time.Now()
	var b strings.Builder
	if h := mesh.ViewHeader(v, now); h != "" {
		b.WriteString(h + "\n")
	}
	if len(peers) == 0 {
		fmt.Fprintf(&b, "Nobody is on the roster of space %q.", space)
		return b.String()
	}
	names := map[string]int{}
	for _, p := range peers {
		names[strings.ToLower(p.Name)]++
	}
	sorted := append([]presence.Peer(nil), peers...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Offline != sorted[j].Offline {
			return !sorted[i].Offline
		}
		return strings.ToLower(sorted[i].Name) < strings.ToLower(sorted[j].Name)
	})
	fmt.Fprintf(&b, "%d peer(s) in space %q:\n", len(peers), space)
	for _, p := range sorted {
		b.WriteString(peerLine(p, me, names[strings.ToLower(p.Name)] > 1, now) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func peerLine(p presence.Peer, me string, collides bool, now time.Time) string {
	name := wire.CleanLabel(p.Name)
	if p.Role != "" {
		name += "/" + wire.CleanLabel(p.Role)
	}
	if collides {
		name += " [" + p.ID + "]"
	}
	if p.ID == me {
		name += " (you)"
	}
	status := string(p.Status)
	if p.Offline && p.OfflineReason != "" {
		status = "offline (" + p.OfflineReason + ")"
	}
	parts := []string{status + " for " + mesh.Age(now, p.StatusSince)}
	if !p.Offline {
		act := wire.CleanLabel(p.Record.Activity)
		if act == "" && p.Status == presence.Working {
			act = "progress unknown"
		}
		if act != "" {
			parts = append(parts, act)
		}
		if att := p.Record.Attention; att != "" && att != presence.Open {
			parts = append(parts, "attention "+string(att))
		}
		var muted []string
		for ch, m := range p.Record.ChannelModes {
			if m == string(mesh.ModeMuted) {
				muted = append(muted, "#"+wire.CleanLabel(ch))
			}
		}
		if len(muted) > 0 {
			sort.Strings(muted)
			parts = append(parts, "muted "+strings.Join(muted, ", "))
		}
	}
	parts = append(parts, "heard "+mesh.Age(now, p.LastHeard)+" ago")
	return mesh.Glyph(p) + " " + name + " — " + strings.Join(parts, " · ")
}

// attentionMeaning says what an attention mode does, for the model.
func attentionMeaning(a string) string {
	switch presence.Attention(a) {
	case presence.DND:
		return "DMs, tasks and @mentions of you still reach you; channel posts wait for your next turn"
	case presence.Focus:
		return "only DMs and tasks reach you; @mentions and channel posts wait in cotal_inbox"
	}
	return "DMs, tasks, @mentions and channel posts all reach you"
}

func statusText(p mesh.PresenceState) string {
	att := p.Attention
	if att == "" {
		att = string(presence.Open)
	}
	act := "none"
	if p.Activity != "" {
		act = fmt.Sprintf("%q", p.Activity)
	}
	return fmt.Sprintf("Status %s, attention %s (%s), activity %s.", p.Status, att, attentionMeaning(att), act)
}

// defaultChannel is where a send without a channel goes: the first
// concrete joined channel.
func defaultChannel(st mesh.ConnectorState) string {
	for _, j := range st.Channels {
		if wire.IsConcrete(j.Channel) {
			return j.Channel
		}
	}
	return ""
}

func joinedList(st mesh.ConnectorState) []string {
	out := make([]string, len(st.Channels))
	for i, j := range st.Channels {
		out[i] = j.Channel
	}
	return out
}

// joinedOn reports whether a joined channel or family covers ch.
func joinedOn(st mesh.ConnectorState, ch string) bool {
	return wire.Covered(joinedList(st), ch)
}

func describeACL(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return "#" + strings.Join(l, ", #")
}

// sendNotes are what a sender should know about where a post went: that
// it went to a channel it is not on (replies there pass it by), and, when
// that channel is not registered and was not in use before (as far as its
// history can be read), the names it may have meant.
func sendNotes(ctx context.Context, ss *session, st mesh.ConnectorState, stErr error, ch string, seq uint64) []string {
	if stErr != nil || joinedOn(st, ch) {
		return nil
	}
	notOn := "you are not on #" + ch + ": replies posted there reach you only if they @mention you (cotal_join to follow it)."
	reg, err := ss.e.Registry(ctx)
	if err != nil {
		return []string{notOn}
	}
	names, _, err := reg.List(ctx)
	if err != nil || contains(names, ch) {
		return []string{notOn}
	}
	n := "#" + ch + " is not in the channel registry"
	switch used, known := usedBefore(ctx, ss.e, ch, seq); {
	case known && used:
		return []string{notOn}
	case known:
		n += " and nobody had posted there before"
	}
	if near := closeMatches(ch, append(names, joinedList(st)...)); len(near) > 0 {
		n += " (did you mean #" + strings.Join(near, " or #") + "?)"
	}
	return []string{n + ".", notOn}
}

// usedBefore reports whether a channel's retained history holds a post
// other than the one just sent (at seq); known is false when the history
// cannot be read (a channel outside the read ACL).
func usedBefore(ctx context.Context, e *mesh.Endpoint, ch string, seq uint64) (used, known bool) {
	items, _, err := e.History(ctx, ch, 2)
	if err != nil {
		return false, false
	}
	for _, it := range items {
		if it.Seq != seq {
			return true, true
		}
	}
	return false, true
}

// closeMatches are the names within two edits of ch (or differing only in
// case), sorted.
func closeMatches(ch string, names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if n == ch || seen[n] || !wire.IsConcrete(n) {
			continue
		}
		if strings.EqualFold(n, ch) || editDistance(strings.ToLower(n), strings.ToLower(ch)) <= 2 {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

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
		case st.AllowSubscribe != nil && !wire.Covered(st.AllowSubscribe, ch):
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
func channelsText(st mesh.ConnectorState, names []string, cfgs map[string]mesh.ChannelConfig, def *mesh.ChannelConfig, regErr error) string {
	joined := map[string]mesh.JoinedChannel{}
	var order []string
	for _, j := range st.Channels {
		joined[j.Channel] = j
		order = append(order, j.Channel)
	}
	var others []string
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := joined[n]; !ok && (st.AllowSubscribe == nil || wire.Covered(st.AllowSubscribe, n)) {
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
			parts = append(parts, "a family of channels, live")
		case st.Profile == "open":
			parts = append(parts, "live (an open mesh keeps nothing)")
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
