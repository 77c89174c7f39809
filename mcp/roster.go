package mcp

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// rosterText is one line per peer: glyph, name/role, status and for how
// long, activity, non-open attention, muted channels, and when last heard.
// A peer's id is added only where names collide.
func rosterText(peers []presence.Peer, v presence.View, me, space string) string {
	now := time.Now()
	var b strings.Builder
	if h := render.ViewHeader(v, now); h != "" {
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
	parts := []string{status + " for " + render.Age(now, p.StatusSince)}
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
	parts = append(parts, "heard "+render.Age(now, p.Heard())+" ago")
	return render.Glyph(p) + " " + name + " — " + strings.Join(parts, " · ")
}

// rosterSummary is the roster in one line: who is online and how.
func rosterSummary(peers []presence.Peer, v presence.View, me string) string {
	var online, offline []string
	for _, p := range peers {
		name := wire.CleanLabel(p.Name)
		if p.ID == me {
			name += " (you)"
		}
		if p.Offline {
			offline = append(offline, name)
			continue
		}
		online = append(online, name+" "+string(p.Status))
	}
	s := fmt.Sprintf("Roster: %d online", len(online))
	if len(online) > 0 {
		s += ": " + strings.Join(online, ", ")
	}
	if len(offline) > 0 {
		s += fmt.Sprintf("; %d offline: %s", len(offline), strings.Join(offline, ", "))
	}
	if v.State != presence.Current {
		s += fmt.Sprintf(" (view %s: may be out of date)", v.State)
	}
	return s + ". cotal_roster has details."
}
