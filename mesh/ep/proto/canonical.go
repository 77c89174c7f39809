package proto

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cotal-go/cotal/mesh/wire"
)

// maxNesting bounds arrays and objects inside one another, matching encoding/json, so hostile input cannot exhaust the stack.
const maxNesting = 10000

// Canonical rewrites one JSON text into its RFC 8785 (JCS) form: members sorted by UTF-16 code units, no whitespace, JCS string escapes and ECMAScript number spelling. Duplicate keys, overflowing numbers, bad UTF-8 and lone surrogates are refused, because each has no single interchangeable reading.
func Canonical(v []byte) ([]byte, error) {
	p := jcsParser{in: v}
	p.space()
	out, err := p.value(make([]byte, 0, len(v)), 0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.in) {
		return nil, p.fail("unexpected %q after the JSON value", p.in[p.pos])
	}
	return out, nil
}

// jcsParser reads JSON and writes its canonical form as it goes; only object members are buffered, to sort them.
type jcsParser struct {
	in  []byte
	pos int
}

func (p *jcsParser) fail(format string, args ...any) error {
	return wire.Refuse(ErrInvalidJSON, "invalid JSON at byte %d: "+format, append([]any{p.pos}, args...)...)
}

func (p *jcsParser) space() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at pos to dst.
func (p *jcsParser) value(dst []byte, depth int) ([]byte, error) {
	if p.pos >= len(p.in) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(dst, depth+1)
	case c == '[':
		return p.array(dst, depth+1)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return appendJCSString(dst, s), nil
	case c == 't':
		return p.literal(dst, "true")
	case c == 'f':
		return p.literal(dst, "false")
	case c == 'n':
		return p.literal(dst, "null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number(dst)
	default:
		return nil, p.fail("unexpected %q", c)
	}
}

func (p *jcsParser) literal(dst []byte, word string) ([]byte, error) {
	if len(p.in)-p.pos < len(word) || string(p.in[p.pos:p.pos+len(word)]) != word {
		return nil, p.fail("expected %s", word)
	}
	p.pos += len(word)
	return append(dst, word...), nil
}

// member is one object member, held until the object is complete so members can be sorted.
type member struct {
	key   string
	units []uint16 // the key as UTF-16, the order RFC 8785 sorts by
	value []byte   // canonical value
}

func (p *jcsParser) object(dst []byte, depth int) ([]byte, error) {
	if depth > maxNesting {
		return nil, p.fail("nesting deeper than %d", maxNesting)
	}
	p.pos++ // {
	var members []member
	seen := map[string]bool{}
	p.space()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		return append(dst, "{}"...), nil
	}
	for {
		p.space()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return nil, p.fail("expected an object key")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, wire.Refuse(ErrDuplicateKey, "JSON object names %q twice", key)
		}
		seen[key] = true
		p.space()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return nil, p.fail("expected ':' after key %q", key)
		}
		p.pos++
		p.space()
		val, err := p.value(nil, depth)
		if err != nil {
			return nil, err
		}
		members = append(members, member{key: key, units: utf16.Encode([]rune(key)), value: val})
		p.space()
		if p.pos >= len(p.in) {
			return nil, p.fail("unterminated object")
		}
		if p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.in[p.pos] != '}' {
			return nil, p.fail("expected ',' or '}' in object")
		}
		p.pos++
		break
	}
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.units, b.units) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJCSString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.value...)
	}
	return append(dst, '}'), nil
}

func (p *jcsParser) array(dst []byte, depth int) ([]byte, error) {
	if depth > maxNesting {
		return nil, p.fail("nesting deeper than %d", maxNesting)
	}
	p.pos++ // [
	dst = append(dst, '[')
	p.space()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		return append(dst, ']'), nil
	}
	for first := true; ; first = false {
		if !first {
			dst = append(dst, ',')
		}
		p.space()
		var err error
		if dst, err = p.value(dst, depth); err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.in) {
			return nil, p.fail("unterminated array")
		}
		if p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.in[p.pos] != ']' {
			return nil, p.fail("expected ',' or ']' in array")
		}
		p.pos++
		return append(dst, ']'), nil
	}
}

// str decodes the string at pos, refusing raw control characters, bad UTF-8 and lone surrogates.
func (p *jcsParser) str() (string, error) {
	p.pos++ // opening quote
	var out []byte
	for {
		if p.pos >= len(p.in) {
			return "", p.fail("unterminated string")
		}
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(out), nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
		case c < 0x20:
			return "", p.fail("raw control character %#02x in a string", c)
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.pos++
		default:
			r, n := utf8.DecodeRune(p.in[p.pos:])
			if r == utf8.RuneError && n <= 1 {
				return "", wire.Refuse(ErrInvalidText, "JSON string holds invalid UTF-8 at byte %d", p.pos)
			}
			out = append(out, p.in[p.pos:p.pos+n]...)
			p.pos += n
		}
	}
}

// escape decodes one backslash escape at pos, joining a \u surrogate pair into one rune.
func (p *jcsParser) escape() (rune, error) {
	if p.pos+1 >= len(p.in) {
		return 0, p.fail("unterminated escape")
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		return 0, p.fail("unknown escape \\%c", c)
	}
	hi, err := p.hex4()
	if err != nil {
		return 0, err
	}
	switch {
	case hi < 0xd800 || hi > 0xdfff:
		return hi, nil
	case hi >= 0xdc00:
		return 0, wire.Refuse(ErrInvalidText, "JSON string holds a lone low surrogate \\u%04x", hi)
	}
	if p.pos+1 >= len(p.in) || p.in[p.pos] != '\\' || p.in[p.pos+1] != 'u' {
		return 0, wire.Refuse(ErrInvalidText, "JSON string holds a lone high surrogate \\u%04x", hi)
	}
	p.pos += 2
	lo, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if lo < 0xdc00 || lo > 0xdfff {
		return 0, wire.Refuse(ErrInvalidText, "JSON string holds a high surrogate \\u%04x not followed by a low one", hi)
	}
	return utf16.DecodeRune(hi, lo), nil
}

func (p *jcsParser) hex4() (rune, error) {
	if len(p.in)-p.pos < 4 {
		return 0, p.fail("short \\u escape")
	}
	var r rune
	for _, c := range p.in[p.pos : p.pos+4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail("bad hex digit %q in \\u escape", c)
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, nil
}

// number scans one RFC 8259 number and appends its ECMAScript spelling.
func (p *jcsParser) number(dst []byte) ([]byte, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.in) && '0' <= p.in[p.pos] && p.in[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.in[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.in) && p.in[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("a number needs digits")
	}
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("a fraction needs digits")
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("an exponent needs digits")
		}
	}
	lit := string(p.in[start:p.pos])
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return nil, wire.Refuse(ErrNumberRange, "JSON number %.40s overflows a double", lit)
	}
	return appendJCSNumber(dst, f), nil
}

// appendJCSNumber spells a finite double the way ECMAScript Number.prototype.toString does: the shortest round-tripping digits, plain up to 1e21, exponent form below 1e-6.
func appendJCSNumber(dst []byte, f float64) []byte {
	if f == 0 { // also -0
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// FormatFloat 'e' gives d[.ddd]e±x with the shortest digits that round-trip.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	var digits []byte
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits = append(digits, e[i])
		}
	}
	exp, _ := strconv.Atoi(e[i+1:])
	k, n := len(digits), exp+1 // value = 0.digits × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// appendJCSString writes s quoted with only the escapes RFC 8785 allows: \" \\ and the control characters; everything else stays literal UTF-8.
func appendJCSString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
