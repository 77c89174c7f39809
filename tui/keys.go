package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key the dashboard answers, built once.
type KeyMap struct {
	Up, Down, Top, Bottom, PageUp, PageDown key.Binding
	Panel, PrevTab, NextTab                 key.Binding
	Filter, Compose, Send, Cancel           key.Binding
	Spawn, Stop, Type, Attach, Remove       key.Binding
	Answer, Diff, Review                    key.Binding
	Open, Log, Read, Jump                   key.Binding
	Help, Quit, Yes, No                     key.Binding
}

// DefaultKeyMap is vim keys and arrows.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom, follow the feed")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup/^u", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn/^d", "page down")),
		Panel:    key.NewBinding(key.WithKeys("tab", "shift+tab", "left", "right", "h", "l"), key.WithHelp("tab/←→/h l", "roster ⇄ seats ⇄ feed")),
		PrevTab:  key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous channel")),
		NextTab:  key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next channel")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter roster, seats, feed")),
		Compose:  key.NewBinding(key.WithKeys("c", ":"), key.WithHelp("c", "send #chan/@name/!role")),
		Spawn:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "spawn a seat")),
		Stop:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "stop the seat")),
		Type:     key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "type into the seat")),
		Attach:   key.NewBinding(key.WithKeys("a", "enter"), key.WithHelp("a", "attach")),
		Remove:   key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "remove an exited seat")),
		Answer:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "answer a seat's prompt")),
		Diff:     key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "the seat's worktree diff")),
		Review:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "review it in $EDITOR")),
		Open:     key.NewBinding(key.WithKeys("enter", "o"), key.WithHelp("o/enter", "read a feed post in full")),
		Log:      key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "message log")),
		Read:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "read replies to you")),
		Jump:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "to the next that needs you")),
		Send:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send / apply")),
		Cancel:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel / clear")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "all keys")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Yes:      key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:       key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "no")),
	}
}

// ShortHelp is the hint line, most wanted first: a narrow line keeps the
// first of them and always ends with Help.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Compose, k.Spawn, k.Attach, k.Type, k.Stop, k.Log, k.Quit}
}

// FullHelp is the ? screen, by subject.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown, k.Panel, k.Filter},
		{k.Compose, k.Send, k.Cancel, k.PrevTab, k.NextTab, k.Open},
		{k.Spawn, k.Attach, k.Type, k.Stop, k.Remove, k.Answer, k.Diff, k.Review},
		{k.Jump, k.Read, k.Log, k.Help, k.Quit},
	}
}
