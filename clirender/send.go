package clirender

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Followed is `cotal send --wait --json`: the receipt and how far the
// message got.
type Followed struct {
	mesh.Receipt
	Wait     string          `json:"wait"`
	Reached  bool            `json:"reached"`
	Progress []mesh.Progress `json:"progress"`
}

// Receipt prints a send's receipt under its head and, when the message
// was followed, the rung each recipient reached (sent is when it went).
func Receipt(w io.Writer, head string, r mesh.Receipt, progress []mesh.Progress, sent time.Time) {
	// Names in a receipt come from peers (the roster, their connectors'
	// notes): shown inert like any peer text.
	fmt.Fprintf(w, "%s: %s\n", wire.Inert(head), wire.Inert(r.String()))
	for _, p := range progress {
		who := p.To
		if who == "" {
			who = "the recipient"
		} else if pr, err := wire.ParsePrincipal(who); err == nil {
			who = pr.Actor
		}
		line := who + ": reached " + p.Reached
		if p.Latest != "" && p.Latest != p.Reached {
			line += ", then back at " + p.Latest
		}
		if p.Why != "" {
			line += " (" + p.Why + ")"
		}
		if !p.At.IsZero() {
			line += fmt.Sprintf(", %s after send", p.At.Sub(sent).Round(time.Millisecond))
		}
		fmt.Fprintln(w, "  "+wire.Inert(line))
	}
}

// Unheard says a sent message went where nobody may be listening, with
// the names it was likely meant for.
func Unheard(u *mesh.Unheard) string {
	if u.Kind == wire.KindChannel {
		return fmt.Sprintf("warning: #%s was never registered or posted to before: nobody may be reading it", u.Name) +
			DidYouMean("#", u.Close, " (`cotal channels list` lists the channels)")
	}
	roles := ""
	if len(u.Known) > 0 {
		roles = " (roles here: " + strings.Join(u.Known, ", ") + ")"
	}
	return fmt.Sprintf("warning: no peer holds or ever held role @%s: the task waits until one does", u.Name) + DidYouMean("@", u.Close, roles)
}
