package render

import (
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Item is one message (a mesh.Item's kind, subject, message and
// history mark) as a block line for a person or a model, read by me: a
// bracketed attribution the connector writes, then the peer's text
// indented so it can never start a line of its own or forge an attribution.
func Item(kind wire.Kind, sub wire.Subject, m wire.Message, historical bool, me wire.Principal) string {
	var b strings.Builder
	if historical {
		b.WriteString("(history) ")
	}
	who := wire.SenderLabel(sub.Sender, m.From)
	switch kind {
	case wire.KindDM:
		b.WriteString("[DM from " + who + "] ")
	case wire.KindAnycast:
		b.WriteString("[@" + wire.CleanLabel(sub.Role) + " from " + who + "] ")
	default:
		b.WriteString("[#" + wire.CleanLabel(sub.Channel))
		if Mentions(m, me) {
			b.WriteString(" @you")
		}
		b.WriteString(" " + who + "] ")
	}
	b.WriteString(wire.IndentBody(m.Text()))
	return b.String()
}

// Mentions reports whether m @mentions this principal's name.
func Mentions(m wire.Message, me wire.Principal) bool {
	for _, n := range m.Mentions {
		if strings.EqualFold(n, me.Actor) {
			return true
		}
	}
	return false
}
