package tui

import (
	"hash/fnv"

	"github.com/charmbracelet/lipgloss"
)

// Styles is every style the dashboard draws with, built once from one
// renderer so a colourless terminal (NO_COLOR, a dumb TERM, a pipe) gets
// the same screen without colour. Status is always shape and colour, never
// colour alone.
type Styles struct {
	Header  lipgloss.Style
	Hosting lipgloss.Style
	Client  lipgloss.Style
	Stale   lipgloss.Style
	Title   lipgloss.Style
	Dim     lipgloss.Style
	Cursor  lipgloss.Style
	Error   lipgloss.Style
	Receipt lipgloss.Style
	Key     lipgloss.Style
	Tab     lipgloss.Style
	TabOn   lipgloss.Style
	Rule    lipgloss.Style
	Open    lipgloss.Style // open mode in the status bar

	Working  lipgloss.Style
	Waiting  lipgloss.Style
	Idle     lipgloss.Style
	Offline  lipgloss.Style
	Endpoint lipgloss.Style
	Stalled  lipgloss.Style
	Crashed  lipgloss.Style

	names []lipgloss.Style // stable per-name colours, none of them a status hue
}

// namePalette avoids green, yellow and grey, which mean status.
var namePalette = []string{"39", "45", "75", "81", "111", "117", "141", "147", "171", "177", "183", "207", "213", "219"}

// NewStyles builds the styles for r's colour profile.
func NewStyles(r *lipgloss.Renderer) Styles {
	s := Styles{
		Header:   r.NewStyle().Bold(true),
		Hosting:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("2")),
		Client:   r.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("6")),
		Stale:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("3")),
		Title:    r.NewStyle().Bold(true).Underline(true),
		Dim:      r.NewStyle().Faint(true),
		Cursor:   r.NewStyle().Reverse(true),
		Error:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
		Receipt:  r.NewStyle().Foreground(lipgloss.Color("6")),
		Key:      r.NewStyle().Bold(true),
		Tab:      r.NewStyle().Faint(true),
		TabOn:    r.NewStyle().Bold(true).Underline(true),
		Rule:     r.NewStyle().Faint(true),
		Open:     r.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
		Working:  r.NewStyle().Foreground(lipgloss.Color("2")),
		Waiting:  r.NewStyle().Foreground(lipgloss.Color("3")),
		Idle:     r.NewStyle().Foreground(lipgloss.Color("8")),
		Offline:  r.NewStyle().Foreground(lipgloss.Color("8")).Faint(true),
		Endpoint: r.NewStyle().Foreground(lipgloss.Color("5")),
		Stalled:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
		Crashed:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
	}
	for _, c := range namePalette {
		s.names = append(s.names, r.NewStyle().Foreground(lipgloss.Color(c)))
	}
	return s
}

// Name is the stable colour of a peer's name.
func (s *Styles) Name(name string) lipgloss.Style {
	h := fnv.New32a()
	h.Write([]byte(name))
	return s.names[h.Sum32()%uint32(len(s.names))]
}
