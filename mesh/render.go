package mesh

import (
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Render is one item as a block line for a person or a model: a bracketed
// attribution the connector writes, then the peer's text indented so it
// can never start a line of its own or forge an attribution.
func Render(it *Item, me wire.Principal) string {
	var b strings.Builder
	if it.Historical {
		b.WriteString("(history) ")
	}
	who := wire.SenderLabel(it.Subject.Sender, it.Msg.From)
	switch it.Kind {
	case wire.KindDM:
		b.WriteString("[DM from " + who + "] ")
	case wire.KindAnycast:
		b.WriteString("[@" + wire.CleanLabel(it.Subject.Role) + " from " + who + "] ")
	default:
		b.WriteString("[#" + wire.CleanLabel(it.Subject.Channel))
		if mentions(it.Msg, me) {
			b.WriteString(" @you")
		}
		b.WriteString(" " + who + "] ")
	}
	b.WriteString(wire.IndentBody(it.Msg.Text()))
	return b.String()
}

// mentions reports whether m @mentions this principal's name.
func mentions(m wire.Message, me wire.Principal) bool {
	for _, n := range m.Mentions {
		if strings.EqualFold(n, me.Actor) {
			return true
		}
	}
	return false
}
