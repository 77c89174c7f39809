package pty

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/charmbracelet/x/ansi"
)

// maxHold bounds the unfinished tail the pump keeps back from a read. An
// unfinished sequence longer than that (a large OSC or DCS string) is
// passed on as it comes, cut wherever the reads cut it.
const maxHold = 4 << 10

// modeScanner cuts the output into chunks that each end between whole
// escape sequences and whole UTF-8 characters, so a subscriber joining,
// output skipped for the emulator and a restarted emulator all start at a
// clean edge; and it follows in them what a fresh emulator would need
// after output is skipped: mode changes (CSI Pm h / l, with or without ?),
// full resets (ESC c), and the queries the emulator answers (device
// attributes, status and cursor position reports, mode reports, OSC 10/11/12
// colour queries), which must still be answered when the output that
// asked is never drawn. It walks only escape sequences, so it costs next
// to nothing beside the emulator. It belongs to the pump.
type modeScanner struct {
	held []byte // the unfinished tail of the output so far, kept back
}

// scan returns the output held back so far and p, up to its last clean
// edge, keeping the rest back; it appends to ev the mode changes in that
// chunk and to q its queries, in order. The chunk is empty when all of it
// is kept back.
func (m *modeScanner) scan(p []byte, ev []modeEvent, q []byte) ([]byte, []modeEvent, []byte) {
	chunk := make([]byte, len(m.held)+len(p))
	copy(chunk, m.held)
	copy(chunk[len(m.held):], p)
	m.held = m.held[:0]

	cut, off := len(chunk), 0
	for {
		i := bytes.IndexByte(chunk[off:], ansi.ESC)
		if i < 0 {
			cut -= partialRune(chunk[off:])
			break
		}
		off += i
		n, ok := m.parse(chunk[off:], &ev, &q)
		if !ok {
			cut = off
			break
		}
		off += n
	}
	if len(chunk)-cut > maxHold {
		cut = len(chunk)
	}
	m.held = append(m.held, chunk[cut:]...)
	return chunk[:cut:cut], ev, q
}

// rest returns what is held back and holds nothing more: the end of the
// output, passed on as it is.
func (m *modeScanner) rest() []byte {
	r := bytes.Clone(m.held)
	m.held = m.held[:0]
	return r
}

// partialRune is how many bytes at the end of text are the start of a
// UTF-8 character still to be completed.
func partialRune(text []byte) int {
	for k := 1; k <= min(3, len(text)); k++ {
		c := text[len(text)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte
			need := 2
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			}
			if k < need && c >= 0xc2 && c <= 0xf4 {
				return k
			}
			return 0
		}
	}
	return 0
}

// parse reads the escape sequence at the start of b (b[0] is ESC), files
// what it changes or asks, and returns how many bytes it spans; ok is
// false when b ends inside it.
func (m *modeScanner) parse(b []byte, ev *[]modeEvent, q *[]byte) (n int, ok bool) {
	n, ok = seqLen(b)
	if !ok || n < 2 {
		return n, ok
	}
	seq := b[:n]
	switch seq[1] {
	case 'c':
		if n == 2 {
			*ev = append(*ev, modeEvent{ris: true})
		}
	case '[':
		csi(seq, ev, q)
	case ']':
		if oscColourQuery(seq) {
			*q = append(*q, seq...)
		}
	}
	return n, true
}

// csi files the mode changes and queries of the CSI sequence seq.
func csi(seq []byte, ev *[]modeEvent, q *[]byte) {
	final := seq[len(seq)-1]
	switch final {
	case 'h', 'l', 'c', 'n', 'p':
	default:
		return // not one we follow, or cut short by CAN, SUB, ESC or a C1 byte
	}
	body := seq[2 : len(seq)-1]
	if bytes.ContainsFunc(body, func(r rune) bool { return r < 0x20 }) {
		// controls within a sequence are executed, not part of it
		body = bytes.Clone(body)
		body = slices.DeleteFunc(body, func(c byte) bool { return c < 0x20 })
	}
	var prefix, inter byte
	if len(body) > 0 && (body[0] == '?' || body[0] == '>' || body[0] == '=') {
		prefix, body = body[0], body[1:]
	}
	if len(body) > 0 && body[len(body)-1] == '$' {
		inter, body = '$', body[:len(body)-1]
	}
	for _, c := range body {
		if (c < '0' || c > '9') && c != ';' {
			return
		}
	}
	switch {
	case inter == 0 && (final == 'h' || final == 'l') && (prefix == 0 || prefix == '?'):
		for f := range bytes.SplitSeq(body, []byte{';'}) {
			v, err := strconv.Atoi(string(f))
			if err != nil || v <= 0 || v > 1<<16 {
				continue
			}
			if prefix == 0 {
				v = -v
			}
			*ev = append(*ev, modeEvent{mode: v, on: final == 'h'})
		}
	case inter == 0 && final == 'c' && (prefix == 0 || prefix == '>'),
		inter == 0 && final == 'n' && (prefix == 0 || prefix == '?'),
		inter == '$' && final == 'p' && (prefix == 0 || prefix == '?'):
		*q = append(*q, seq...)
	}
}

// oscColourQuery reports whether the OSC sequence seq asks for the
// foreground, background or cursor colour (OSC 10, 11 or 12 with "?").
func oscColourQuery(seq []byte) bool {
	body := seq[2:]
	switch {
	case bytes.HasSuffix(body, []byte{0x07}):
		body = body[:len(body)-1]
	case bytes.HasSuffix(body, []byte("\x1b\\")):
		body = body[:len(body)-2]
	default:
		return false
	}
	switch string(body) {
	case "10;?", "11;?", "12;?":
		return true
	}
	return false
}

// seqLen is how many bytes the escape sequence at the start of b (b[0] is
// ESC) spans as x/vt's parser reads it, including a string's terminator;
// ok is false when b ends inside it. A sequence cut short by CAN or SUB
// ends with that byte, and one cut short by ESC or a byte from 0x80 up
// ends before it. C1 (8-bit) introducers are not followed: a program
// writing UTF-8 does not send them.
func seqLen(b []byte) (n int, ok bool) {
	i := 1
	// C0 controls are executed within the escape and DEL is ignored.
	for ; i < len(b) && (b[i] < 0x20 || b[i] == 0x7f); i++ {
		switch b[i] {
		case 0x18, 0x1a:
			return i + 1, true
		case ansi.ESC:
			return i, true
		}
	}
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c >= 0x80:
		return i, true
	case c == '[':
		return csiLen(b, i+1)
	case c == ']':
		return stringLen(b, i+1, true)
	case c == 'P' || c == 'X' || c == '^' || c == '_':
		return stringLen(b, i+1, false)
	case c >= 0x20 && c <= 0x2f:
		return escLen(b, i+1)
	default:
		return i + 1, true
	}
}

// csiLen finds the end of a CSI sequence whose parameters start at b[i].
func csiLen(b []byte, i int) (int, bool) {
	inter := false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= 0x40 && c <= 0x7e:
			return i + 1, true
		case c >= 0x30 && c <= 0x3f:
			if inter { // a parameter after an intermediate ends it
				return i + 1, true
			}
		case c >= 0x20 && c <= 0x2f:
			inter = true
		case c == 0x18 || c == 0x1a:
			return i + 1, true
		case c == ansi.ESC || c >= 0x80:
			return i, true
		}
		// other C0 controls are executed within it; DEL is ignored
	}
	return 0, false
}

// escLen finds the end of an escape sequence with intermediates, the
// first after them at b[i].
func escLen(b []byte, i int) (int, bool) {
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= 0x30 && c <= 0x7e:
			return i + 1, true
		case c == 0x18 || c == 0x1a:
			return i + 1, true
		case c == ansi.ESC || c >= 0x80:
			return i, true
		}
	}
	return 0, false
}

// stringLen finds the end of an OSC (bel: BEL ends it too), DCS, SOS, PM
// or APC string whose content starts at b[i]: ST (ESC \), CAN or SUB; any
// other ESC ends it and starts a sequence of its own. A 0x9c byte is no
// ST: in UTF-8 it is part of a character ("✳" is e2 9c b3), as a terminal
// reading UTF-8 takes it.
func stringLen(b []byte, i int, bel bool) (int, bool) {
	for ; i < len(b); i++ {
		switch b[i] {
		case 0x07:
			if bel {
				return i + 1, true
			}
		case 0x18, 0x1a:
			return i + 1, true
		case ansi.ESC:
			if i+1 == len(b) {
				return 0, false
			}
			if b[i+1] == '\\' {
				return i + 2, true
			}
			return i, true
		}
	}
	return 0, false
}
