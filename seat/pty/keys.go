package pty

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Key is one parsed key: what a terminal sends when it is pressed.
type Key struct {
	name  string
	plain string // the bytes in normal cursor-key mode
	app   string // the bytes in application cursor-key mode; "" means plain
	meta  bool   // prefixed with ESC (M-)
}

// String is the key's name as it was given.
func (k Key) String() string { return k.name }

// bytes is what the terminal writes for k; appCursor is DEC mode 1, which
// switches the cursor keys, Home and End to their SS3 forms.
func (k Key) bytes(appCursor bool) string {
	b := k.plain
	if appCursor && k.app != "" {
		b = k.app
	}
	if k.meta {
		b = "\x1b" + b
	}
	return b
}

// namedKeys are the keys by tmux send-keys name, as xterm sends them.
var namedKeys = map[string]Key{
	"Escape": {plain: "\x1b"},
	"Enter":  {plain: "\r"},
	"Tab":    {plain: "\t"},
	"BTab":   {plain: "\x1b[Z"},
	"BSpace": {plain: "\x7f"},
	"Space":  {plain: " "},
	"Up":     {plain: "\x1b[A", app: "\x1bOA"},
	"Down":   {plain: "\x1b[B", app: "\x1bOB"},
	"Right":  {plain: "\x1b[C", app: "\x1bOC"},
	"Left":   {plain: "\x1b[D", app: "\x1bOD"},
	"Home":   {plain: "\x1b[H", app: "\x1bOH"},
	"End":    {plain: "\x1b[F", app: "\x1bOF"},
	"Insert": {plain: "\x1b[2~"}, "IC": {plain: "\x1b[2~"},
	"Delete": {plain: "\x1b[3~"}, "DC": {plain: "\x1b[3~"},
	"PageUp": {plain: "\x1b[5~"}, "PPage": {plain: "\x1b[5~"}, "PgUp": {plain: "\x1b[5~"},
	"PageDown": {plain: "\x1b[6~"}, "NPage": {plain: "\x1b[6~"}, "PgDn": {plain: "\x1b[6~"},
	"F1": {plain: "\x1bOP"}, "F2": {plain: "\x1bOQ"}, "F3": {plain: "\x1bOR"}, "F4": {plain: "\x1bOS"},
	"F5": {plain: "\x1b[15~"}, "F6": {plain: "\x1b[17~"}, "F7": {plain: "\x1b[18~"}, "F8": {plain: "\x1b[19~"},
	"F9": {plain: "\x1b[20~"}, "F10": {plain: "\x1b[21~"}, "F11": {plain: "\x1b[23~"}, "F12": {plain: "\x1b[24~"},
}

// ctrlSymbols are the C- keys that are not letters.
var ctrlSymbols = map[string]byte{
	"Space": 0x00, "@": 0x00, "[": 0x1b, "\\": 0x1c, "]": 0x1d, "^": 0x1e, "_": 0x1f, "?": 0x7f,
}

// ParseKey reads one key in tmux send-keys notation: a name (Escape, Enter,
// Up, F5, PageUp or PPage, ...), a single character typed as itself, or
// either one after C- (control: a letter or one of @ [ \ ] ^ _ ? Space) and
// M- (meta: ESC first), in any order. Anything else is refused by name, so
// a misspelt key is never typed into a seat as text.
func ParseKey(name string) (Key, error) {
	rest := name
	var ctrl, meta bool
	for len(rest) > 2 && rest[1] == '-' {
		switch rest[0] {
		case 'C', 'c':
			if ctrl {
				return Key{}, fmt.Errorf("key %q: C- given twice", name)
			}
			ctrl = true
		case 'M', 'm':
			if meta {
				return Key{}, fmt.Errorf("key %q: M- given twice", name)
			}
			meta = true
		default:
			return Key{}, unknownKey(name)
		}
		rest = rest[2:]
	}
	var k Key
	switch {
	case ctrl:
		b, ok := ctrlByte(rest)
		if !ok {
			return Key{}, fmt.Errorf("key %q: C- takes a letter or one of @ [ \\ ] ^ _ ? Space, not %q", name, rest)
		}
		k = Key{plain: string([]byte{b})}
	case utf8.RuneCountInString(rest) == 1 && rest != "\x00" && utf8.ValidString(rest):
		k = Key{plain: rest}
	default:
		nk, ok := namedKeys[rest]
		if !ok {
			return Key{}, unknownKey(name)
		}
		k = nk
	}
	k.name, k.meta = name, meta
	return k, nil
}

func ctrlByte(s string) (byte, bool) {
	if b, ok := ctrlSymbols[s]; ok {
		return b, true
	}
	if len(s) == 1 {
		c := s[0] | 0x20 // lower case
		if 'a' <= c && c <= 'z' {
			return c - 'a' + 1, true
		}
	}
	return 0, false
}

func unknownKey(name string) error {
	return fmt.Errorf("unknown key %q: use a tmux key name (Escape, Enter, Tab, BSpace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12), one character, or C-/M- before either", name)
}

// ParseKeys parses every name, refusing the first unknown one by name.
func ParseKeys(names ...string) ([]Key, error) {
	keys := make([]Key, 0, len(names))
	for _, n := range names {
		k, err := ParseKey(n)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// KeyBytes is what a terminal sends for keys, in application cursor-key
// mode (DEC mode 1) or not.
func KeyBytes(keys []Key, appCursor bool) []byte {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.bytes(appCursor))
	}
	return []byte(b.String())
}

// Keys writes the keys named in tmux send-keys notation (see ParseKey) as
// typed, in one write, never framed as a paste: the cursor keys follow the
// cursor-key mode the program set. Nothing is written if a name is unknown
// or the process has exited. It returns how many bytes the pty accepted.
func (s *Seat) Keys(names ...string) (int, error) {
	keys, err := ParseKeys(names...)
	if err != nil {
		return 0, err
	}
	if len(keys) == 0 {
		return 0, nil
	}
	return s.Write(KeyBytes(keys, s.appCursor()))
}

// appCursor reports whether the program asked for application cursor
// keys, as of the output read so far (not as drawn).
func (s *Seat) appCursor() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term.on(ansi.ModeCursorKeys)
}
