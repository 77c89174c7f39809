package clirender

import (
	"fmt"
	"io"
	"strings"

	"github.com/cotal-go/cotal/config"
	"github.com/cotal-go/cotal/host"
)

// LeafLine says which leaf link a mesh started with.
func LeafLine(w io.Writer, l config.LeafRecord) {
	peers := "no leaf yet (`cotal leaf-creds NAME` mints one's link credential)"
	if len(l.Peers) > 0 {
		peers = "leaves " + strings.Join(l.Peers, ", ")
	}
	if l.Listen != "" {
		fmt.Fprintf(w, "leaf hub: domain %s, leafnode listener %s, %s\n", l.Domain, l.Listen, peers)
		return
	}
	fmt.Fprintf(w, "leaf of hub %s (domain %s): this side's domain %s\n", l.Remote, strings.Join(l.Peers, ", "), l.Domain)
}

// LinkMinted says what `cotal leaf-creds` minted and what the leaf's
// person runs with it (as host.LinkMinted's JSON with asJSON).
func LinkMinted(w io.Writer, asJSON bool, m host.LinkMinted) {
	if asJSON {
		JSON(w, m)
		return
	}
	fmt.Fprintf(w, "link credential for leaf %s of space %s (hub domain %s): %s\n", m.Leaf, m.Space, m.Hub, m.Path)
	fmt.Fprintln(w, "it lets its holder link a leaf to this hub and nothing else; every post and DM of the space crosses that link both ways, so hand it only to a machine you trust with the space")
	hub := "HUB:7422"
	if m.Listen != "" {
		hub = m.Listen
	}
	switch {
	case m.Linked:
		fmt.Fprintf(w, "the running hub's streams source leaf %s now\n", m.Leaf)
	case m.Running:
		fmt.Fprintf(w, "mesh %s runs without a leafnode listener: restart it with `cotal up --leaf-listen ADDR`\n", m.Space)
	default:
		fmt.Fprintf(w, "start the hub with `cotal up --leaf-listen ADDR`; its streams source leaf %s from then on\n", m.Leaf)
	}
	fmt.Fprintf(w, "on the leaf's machine: cotal up --space %s --leaf nats://%s --leaf-creds %s.creds\n", m.Space, hub, m.Leaf)
}

// leafStatus says the leaf link status found, nothing without one.
func leafStatus(say func(string, ...any), l *host.LeafStatus) {
	if l == nil {
		return
	}
	if l.Listen != "" {
		say("  leaf       hub, domain %s, leafnode listener %s, %d of %d leaves linked", l.Domain, l.Listen, l.LinksUp, len(l.Peers))
	} else {
		say("  leaf       leaf of %s, domain %s, %d of %d linked", l.Remote, l.Domain, l.LinksUp, len(l.Peers))
	}
	for _, p := range l.Peers {
		state := "DOWN (what each side sends meanwhile crosses when it is back)"
		if p.Up {
			state = "up"
		}
		if p.Error != "" {
			state += ": " + p.Error
		}
		say("             %s: %s, %d behind", p.Domain, state, p.Lag)
	}
}
