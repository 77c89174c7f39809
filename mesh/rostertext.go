package mesh

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

// Age says how old a fact is, for a person.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
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

// FormatRoster renders peers one per line with the age of every fact:
// how long since the status began and since the peer was last heard.
func FormatRoster(peers []presence.Peer, v presence.View, now time.Time) string {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s ago\n", Glyph(p), name, status, Age(now, p.StatusSince), activity, Age(now, p.LastHeard))
	}
	tw.Flush()
	return b.String()
}
