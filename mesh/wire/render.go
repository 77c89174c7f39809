package wire

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Inert is peer text made harmless for any terminal: every C0 control but
// tab and newline (a CRLF becomes a newline), DEL, every C1 control, the
// bidirectional overrides and isolates, and every byte that is not UTF-8
// are shown as visible escapes (\x1b, \r, \u009b, \u202e, \xff), so no
// escape sequence (cursor moves, erases, a window title or clipboard write
// through OSC, the bracketed-paste end marker) and no reordering of the
// line survives into what a person or a harness's terminal draws. It is the
// one function every surface showing peer text passes it through.
func Inert(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			break
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !inertRune(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c < 0x7f, c == '\n', c == '\t':
				b.WriteByte(c)
			case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
				// CRLF: the newline that follows says it all.
			default:
				b.WriteString(controlEscape(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + hex2(c))
		case !inertRune(r):
			b.WriteString(`\u` + strconv.FormatInt(int64(r)|0x10000, 16)[1:])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// inertRune reports whether a non-ASCII rune may be drawn as it is: not a
// C1 control and not a bidirectional control.
func inertRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1: 0x9b is CSI, 0x9d OSC on terminals that take 8-bit controls
		return false
	case r == 0x061c, r == 0x200e, r == 0x200f: // arabic letter mark, LRM, RLM
		return false
	case r >= 0x202a && r <= 0x202e: // LRE RLE PDF LRO RLO
		return false
	case r >= 0x2066 && r <= 0x2069: // LRI RLI FSI PDI
		return false
	}
	return true
}

// controlEscape is the visible form of one C0 control or DEL.
func controlEscape(c byte) string {
	switch c {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	case '\v':
		return `\v`
	}
	return `\x` + hex2(c)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// indentBreaks maps every line-break class to a newline plus two spaces; CRLF comes first so it counts as one break.
var indentBreaks = strings.NewReplacer(
	"\r\n", "\n  ",
	"\r", "\n  ",
	"\n", "\n  ",
	"\v", "\n  ",
	"\f", "\n  ",
	"\u0085", "\n  ",
	"\u2028", "\n  ",
	"\u2029", "\n  ",
)

// IndentBody keeps peer text off column 0, so only the connector can start a line a model reads as a new item; every line break class is one break, and the rest is made Inert.
func IndentBody(s string) string { return Inert(indentBreaks.Replace(s)) }

// labelCleaner drops brackets and flattens every line-break class to a space.
var labelCleaner = strings.NewReplacer(
	"[", "",
	"]", "",
	"\r\n", " ",
	"\r", " ",
	"\n", " ",
	"\v", " ",
	"\f", " ",
	"\u0085", " ",
	"\u2028", " ",
	"\u2029", " ",
)

// CleanLabel makes a peer-chosen name, role or channel label safe inside a [..] item header: no brackets to close it early, no line breaks to forge a new line, nothing a terminal would act on (Inert).
func CleanLabel(s string) string { return strings.TrimSpace(Inert(labelCleaner.Replace(s))) }

// SenderLabel is who sent a message as a person or a model sees it: the
// name comes from the authenticated principal of the subject, and from.name
// is shown only when it is that principal's own name (it is the actor on
// every identity the space mints), so no sender can appear as another. The
// role is the sender's word, shown cleaned.
func SenderLabel(sender Principal, from Sender) string {
	name := sender.Actor
	if n := CleanLabel(from.Name); strings.EqualFold(n, sender.Actor) {
		name = n
	}
	if role := CleanLabel(from.Role); role != "" {
		return name + "/" + role
	}
	return name
}
