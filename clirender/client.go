package clirender

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cotal-go/cotal/clirun"
	"github.com/cotal-go/cotal/mcp"
	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Sent prints what a send did: its receipt under the head its kind gives
// it and, when followed, each recipient's rung, or the same as JSON; a
// wait that gave up says so on errw.
func Sent(w, errw io.Writer, s clirun.Sent, asJSON bool) {
	switch {
	case asJSON && s.Wait == "":
		JSON(w, s.Receipt)
	case asJSON:
		JSON(w, Followed{Receipt: s.Receipt, Wait: s.Wait, Reached: s.Reached, Progress: s.Progress})
	default:
		Receipt(w, sentHead(s.Receipt), s.Receipt, s.Progress, s.At)
		if !s.Reached {
			fmt.Fprintf(errw, "gave up after %s: not every recipient reached %s\n", s.Timeout, s.Wait)
		}
	}
}

// sentHead is what a receipt is headed with: where the message went.
func sentHead(r mesh.Receipt) string {
	switch r.Kind {
	case wire.KindChannel:
		return "sent to #" + r.Channel
	case wire.KindDM:
		return "DM to " + r.ToName
	}
	return "asked @" + r.ToService
}

// UnheardLine warns, when u is not nil, that nobody heard a send.
func UnheardLine(errw io.Writer, u *mesh.Unheard) {
	if u != nil {
		fmt.Fprintln(errw, Unheard(u))
	}
}

// SendWaiting says, for a wait long enough to notice and not under
// --json, that the message was sent and what the send waits for.
func SendWaiting(errw io.Writer, asJSON bool, timeout time.Duration, rung string) {
	if !asJSON && timeout > 2*time.Second {
		fmt.Fprintf(errw, "sent; waiting up to %s for %s...\n", timeout, rung)
	}
}

// InboxWaiting says, for a wait long enough to notice and not under
// --json, that an inbox read waits for arrivals.
func InboxWaiting(errw io.Writer, asJSON bool, wait time.Duration) {
	if !asJSON && wait > 2*time.Second {
		fmt.Fprintf(errw, "waiting up to %s for messages...\n", wait)
	}
}

// HistoryRead prints a channel's history as History does, or as JSON.
func HistoryRead(w io.Writer, h clirun.HistoryRead, limit int, asJSON bool) {
	if asJSON {
		JSON(w, h)
		return
	}
	History(w, h.Channel, h.Items, h.Complete, limit, h.Me)
}

// Cleared says what `history clear --force` deleted.
func Cleared(w io.Writer, d clirun.Deletion, asJSON bool) {
	if asJSON {
		JSON(w, d)
		return
	}
	fmt.Fprintf(w, "deleted %s\n", d)
}

// InboxSettled says on errw what an inbox read could not note against a
// crash and what its endpoint dropped.
func InboxSettled(errw io.Writer, s clirun.Settled) {
	if s.NoteErr != nil {
		fmt.Fprintf(errw, "cotal: could not note what was read (%v); after a mesh crash some of it may come again\n", s.NoteErr)
	}
	if len(s.Rejected) > 0 {
		fmt.Fprintf(errw, "dropped %s\n", Rejected(s.Rejected))
	}
}

// SeatInbox prints a seat's inbox window as a model's cotal_inbox reads
// it, or as JSON.
func SeatInbox(w io.Writer, win mesh.Window, asJSON bool) {
	if asJSON {
		JSON(w, win)
		return
	}
	fmt.Fprintln(w, mcp.WindowText(win, "run `cotal inbox` again"))
}

// DeliveryList prints what waits per identity and seat, or as JSON; a
// census some manager did not answer says so on errw.
func DeliveryList(w, errw io.Writer, l clirun.DeliveryList, pending, asJSON bool) {
	if asJSON {
		JSON(w, l)
	} else {
		Deliveries(w, l.Rows, pending)
	}
	if l.Incomplete {
		fmt.Fprintln(errw, "not every manager answered: seats of the silent ones show no taken count (see cotal ps)")
	}
}

// ChannelList prints every channel with its effective settings, or as
// JSON.
func ChannelList(w io.Writer, rows []mesh.ChannelRow, def *mesh.ChannelConfig, asJSON bool) error {
	if asJSON {
		JSON(w, map[string]any{"defaults": def, "channels": rows})
		return nil
	}
	return Channels(w, rows, def)
}

// ChannelConfig prints a channel's settings ("" for the space defaults),
// or as JSON.
func ChannelConfig(w io.Writer, channel string, c *mesh.ChannelConfig, asJSON bool) {
	switch {
	case asJSON:
		JSON(w, c)
	case channel == "":
		fmt.Fprintf(w, "defaults: %s\n", c)
	default:
		fmt.Fprintf(w, "#%s: %s\n", channel, c)
	}
}

// MintNotes warns of what a mint did not use and of a creds file a seat
// can read.
func MintNotes(errw io.Writer, name string, m clirun.Minted) {
	if m.Ignored != "" {
		fmt.Fprintf(errw, "cotal: ignoring %s\n", m.Ignored)
	}
	if m.Readable {
		fmt.Fprintf(errw, "cotal: warning: %s is where a seat can read it: a seat runs as you, sees every folder but the store's protected ones, and could act as %s with it. Leave out --out to keep it under the store, or keep the file where no seat runs.\n", m.Path, name)
	}
}

// Version prints cotal's version and its broker's, or as JSON.
func Version(w io.Writer, v clirun.VersionInfo, asJSON bool) {
	if asJSON {
		JSON(w, v)
		return
	}
	fmt.Fprintf(w, "cotal %s (nats-server %s, %s %s/%s)\n", v.Version, v.NATSServer, v.Go, v.OS, v.Arch)
}

// QuitRefused says why a quit did not stop the mesh: the seats still
// running, and how to stop them too.
func QuitRefused(errw io.Writer, live []string, window time.Duration) {
	fmt.Fprintf(errw, "\n%d seat(s) still running: %s\nstopping now stops them; press Ctrl-C again within %d s to stop them and quit\n",
		len(live), strings.Join(live, ", "), int(window.Seconds()))
}
