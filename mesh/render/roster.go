package render

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Glyph is a status at a glance.
func Glyph(p presence.Peer) string {
	if p.Offline {
		return "·"
	}
	switch p.Status {
	case presence.Working:
		return "●"
	case presence.Waiting:
		return "◐"
	case presence.Idle:
		return "○"
	}
	return "?"
}

// ViewHeader is one line saying whether the roster can be trusted.
func ViewHeader(v presence.View, now time.Time) string {
	switch v.State {
	case presence.Stale:
		return fmt.Sprintf("VIEW STALE: the presence watch has been silent since %s ago; statuses below are the last known, not now", Age(now, v.LastDelivery))
	case presence.Unpopulated:
		return "VIEW UNPOPULATED: the presence snapshot has not arrived yet; the list may be incomplete"
	}
	return ""
}

// Roster renders peers one per line with the age of every fact:
// how long since the status began and since the peer was last heard.
func Roster(peers []presence.Peer, v presence.View, now time.Time) string {
	var b strings.Builder
	if h := ViewHeader(v, now); h != "" {
		b.WriteString(h + "\n")
	}
	if len(peers) == 0 {
		b.WriteString("nobody is on the roster\n")
		return b.String()
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, " \tPEER\tSTATUS\tFOR\tACTIVITY\tHEARD")
	for _, p := range peers {
		name := wire.CleanLabel(p.Name)
		if p.Role != "" {
			name += "/" + wire.CleanLabel(p.Role)
		}
		status := string(p.Status)
		if p.Offline && p.OfflineReason != "" {
			status = "offline (" + p.OfflineReason + ")"
		}
		activity := wire.CleanLabel(p.Record.Activity)
		if p.Status == presence.Working && activity == "" {
			activity = "progress unknown"
		}
		if activity == "" {
			activity = "-"
		} else if p.Record.ActivitySince > 0 && !p.Offline {
			activity += " (" + Age(now, time.UnixMilli(p.Record.ActivitySince)) + ")"
		}
		if att := p.Record.Attention; att != "" && att != presence.Open && !p.Offline {
			status += " [" + string(att) + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s ago\n", Glyph(p), name, status, Age(now, p.StatusSince), activity, Age(now, p.Heard()))
	}
	tw.Flush()
	return b.String()
}
