package render

import (
	"encoding/json"
	"fmt"
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
	b.WriteString(otherParts(m))
	return b.String()
}

// otherParts names the parts of m that are not text (data, artifacts,
// extension kinds and kinds the schema does not define), so a message made
// only of them still says what came; their contents are not shown.
func otherParts(m wire.Message) string {
	var names []string
	for _, p := range m.Parts {
		if p.Kind == wire.PartText {
			continue
		}
		n := wire.CleanLabel(p.Kind) + " part"
		name := p.Name
		if raw, ok := p.Extra["name"]; ok && name == "" {
			_ = json.Unmarshal(raw, &name)
		}
		if name = wire.CleanLabel(name); name != "" {
			n += ` "` + name + `"`
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	return " (also: " + strings.Join(names, ", ") + ")"
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

// Block frames rendered items for injection into an agent's terminal (spec
// §12): a header with their count, one line each (peer text indented off
// column 0 by Item), and a tail telling the model to do the work with its
// own tools, check it, then reply, and never to claim what it did not do.
// A line marked repeat was written before without confirmation.
func Block(lines []string, repeat []bool) string {
	var b strings.Builder
	n := len(lines)
	if n == 1 {
		b.WriteString("[cotal] 1 new peer message:\n")
	} else {
		fmt.Fprintf(&b, "[cotal] %d new peer messages:\n", n)
	}
	for i, l := range lines {
		if i < len(repeat) && repeat[i] {
			b.WriteString("(possible repeat) ")
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("[cotal] Do what these ask with your own tools and check the result, then reply with cotal_dm, cotal_send or cotal_anycast (cotal_roster shows who is here). Never report an action you did not perform.")
	return b.String()
}
