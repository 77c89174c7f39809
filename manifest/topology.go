package manifest

import (
	"slices"
	"strings"
)

// Rights are who may read and post where: a credential's read and post
// lists.
type Rights struct {
	Read []string `json:"read"`
	Post []string `json:"post"`
}

func (r Rights) equal(o Rights) bool {
	s := func(l []string) []string { l = slices.Clone(l); slices.Sort(l); return l }
	return slices.Equal(s(r.Read), s(o.Read)) && slices.Equal(s(r.Post), s(o.Post))
}

// The states of a topology row.
const (
	TopoSame       = "same"
	TopoDiffers    = "differs"
	TopoMissing    = "not running" // the file declares it; the mesh holds no credential of it
	TopoUndeclared = "not in the file"
)

// TopoRow is one identity's rights in the file and on the mesh.
type TopoRow struct {
	Who   string  `json:"who"`             // the seat or endpoint
	Agent string  `json:"agent,omitempty"` // the file's agent it is of
	File  *Rights `json:"file,omitempty"`
	Mesh  *Rights `json:"mesh,omitempty"`
	State string  `json:"state"`
}

// Topology sets the rights the file gives each of its seats and
// endpoints beside those the mesh holds (by name), and names where they
// differ; what the mesh holds that the file does not name comes last.
func Topology(m *Manifest, held map[string]Rights) []TopoRow {
	var out []TopoRow
	seen := map[string]bool{}
	for _, a := range m.Agents {
		who := a.Seats()
		if len(who) == 0 {
			who = []string{a.Name}
		}
		want := Rights{Read: a.AllowSubscribe, Post: a.AllowPublish}
		for _, w := range who {
			seen[w] = true
			r := TopoRow{Who: w, Agent: a.Name, File: &want, State: TopoMissing}
			if h, ok := held[w]; ok {
				r.Mesh, r.State = &h, TopoDiffers
				if h.equal(want) {
					r.State = TopoSame
				}
			}
			out = append(out, r)
		}
	}
	var rest []string
	for w := range held {
		if !seen[w] {
			rest = append(rest, w)
		}
	}
	slices.Sort(rest)
	for _, w := range rest {
		h := held[w]
		out = append(out, TopoRow{Who: w, Mesh: &h, State: TopoUndeclared})
	}
	return out
}

// List is a channel list for a table: "-" when empty.
func List(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ",")
}
