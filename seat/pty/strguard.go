package pty

import "github.com/charmbracelet/x/ansi"

// stringGuard keeps the emulator from reading the bytes of a UTF-8
// character inside an OSC, DCS, SOS, PM or APC string as 8-bit controls.
// charmbracelet/x/vt's parser ends such a string at a 0x9c byte (8-bit
// ST) and acts on the other C1 bytes, yet a UTF-8 character's continuation
// bytes run from 0x80 to 0xbf: Claude Code's title "✳ Claude Code" (e2 9c
// b3) ended early and its rest was drawn over the first line. A terminal
// reading UTF-8 (tmux, xterm) takes no 8-bit controls, so the guard
// replaces those bytes in a string with '?' before the emulator sees them;
// only the string's own text (a title) changes, never the screen. It
// carries an open string across writes; the mirror goroutine owns it.
type stringGuard struct {
	in  bool // inside a string
	bel bool // the string is an OSC: BEL ends it too
	esc bool // the last byte was ESC
}

// filter returns p, or a copy with the guarded bytes replaced.
func (g *stringGuard) filter(p []byte) []byte {
	out := p
	for i, c := range p {
		if g.esc {
			g.esc = false
			switch {
			case g.in:
				g.in = false // ESC \ ends it; any other ESC ends it and starts a sequence
				if c != '\\' {
					g.start(c)
				}
				continue
			default:
				g.start(c)
				continue
			}
		}
		switch {
		case c == ansi.ESC:
			g.esc = true
		case !g.in:
		case c == 0x07 && g.bel, c == 0x18, c == 0x1a:
			g.in = false
		case c >= 0x80 && c <= 0x9f:
			if &out[0] == &p[0] {
				out = append([]byte(nil), p...)
			}
			out[i] = '?'
		}
	}
	return out
}

// start notes the byte after an ESC outside a string: ] P X ^ _ open one.
func (g *stringGuard) start(c byte) {
	switch c {
	case ']':
		g.in, g.bel = true, true
	case 'P', 'X', '^', '_':
		g.in, g.bel = true, false
	case ansi.ESC:
		g.esc = true
	}
}

// reset forgets an open string (the emulator was reset).
func (g *stringGuard) reset() { *g = stringGuard{} }
