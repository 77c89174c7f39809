package proto

import (
	"encoding/json"
	"math/big"
	"reflect"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A shape is a compiled schema node read for the quick check: a value it
// accepts the full validator accepts too. It only ever says "valid" or
// "not sure"; everything it is not sure of (an invalid value, an escaped
// or non-ASCII string under a length bound, a number it would have to
// reason about, a keyword it does not know) goes to the full validator,
// which also words the refusal. The contracts are mostly objects of
// plain strings, integers and booleans, and the check reads them in one
// pass over the bytes without building the value.
type shape struct {
	unknown  bool     // a keyword outside the quick set: not sure of any value
	never    bool     // the false schema
	types    uint8    // allowed JSON types (typeBits); 0 is any
	enum     []string // all-string enum; nil is none
	props    map[string]*shape
	required map[string]uint64 // required property -> its bit
	closed   bool              // additionalProperties false
	extra    *shape            // additionalProperties schema; nil with !closed is any
	items    *shape            // items (2020-12); nil is any
	anyOf    []*shape
	minLen   int // -1 when unbounded
	maxLen   int
	minItems int
	maxItems int
	minInt   *int64 // inclusive integer bounds; a non-integer bound is unknown
	maxInt   *int64
}

const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{"null": tNull, "boolean": tBool, "number": tNumber, "integer": tInteger, "string": tString, "array": tArray, "object": tObject}

// quickFields are the Schema fields the shape reads or may ignore
// (annotations and bookkeeping); any other one set makes a node unknown.
var quickFields = map[string]bool{
	"DraftVersion": true, "Location": true, "ID": true, "Title": true, "Description": true, "Default": true, "Comment": true,
	"ReadOnly": true, "WriteOnly": true, "Examples": true, "Deprecated": true,
	"Bool": true, "Types": true, "Enum": true, "AnyOf": true, "Required": true, "Properties": true, "AdditionalProperties": true,
	"Items2020": true, "MinItems": true, "MaxItems": true, "MinLength": true, "MaxLength": true, "Minimum": true, "Maximum": true,
}

// shapeOf reads a compiled schema; seen holds the nodes already read.
func shapeOf(s *jsonschema.Schema, seen map[*jsonschema.Schema]*shape) *shape {
	if sh, ok := seen[s]; ok {
		return sh
	}
	sh := &shape{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	seen[s] = sh
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.IsExported() && !quickFields[f.Name] && !v.Field(i).IsZero() {
			sh.unknown = true
			return sh
		}
	}
	if s.Bool != nil {
		sh.never = !*s.Bool
		return sh
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			sh.types |= typeBits[t]
		}
	}
	if s.Enum != nil {
		sh.enum = []string{}
		for _, e := range s.Enum.Values {
			str, ok := e.(string)
			if !ok || !plainASCII(str) {
				sh.unknown = true
				return sh
			}
			sh.enum = append(sh.enum, str)
		}
	}
	if len(s.Required) > 64 {
		sh.unknown = true
		return sh
	}
	if len(s.Required) > 0 {
		sh.required = map[string]uint64{}
		for i, r := range s.Required {
			sh.required[r] = 1 << i
		}
	}
	if len(s.Properties) > 0 {
		sh.props = map[string]*shape{}
		for k, p := range s.Properties {
			sh.props[k] = shapeOf(p, seen)
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		sh.closed = !a
	case *jsonschema.Schema:
		sh.extra = shapeOf(a, seen)
	default:
		sh.unknown = true
	}
	if s.Items2020 != nil {
		sh.items = shapeOf(s.Items2020, seen)
	}
	for _, b := range s.AnyOf {
		sh.anyOf = append(sh.anyOf, shapeOf(b, seen))
	}
	for _, b := range []struct {
		from *int
		to   *int
	}{{s.MinLength, &sh.minLen}, {s.MaxLength, &sh.maxLen}, {s.MinItems, &sh.minItems}, {s.MaxItems, &sh.maxItems}} {
		if b.from != nil {
			*b.to = *b.from
		}
	}
	var ok bool
	if sh.minInt, ok = intBound(s.Minimum); !ok {
		sh.unknown = true
	}
	if sh.maxInt, ok = intBound(s.Maximum); !ok {
		sh.unknown = true
	}
	return sh
}

// intBound is a bound that is an int64, nil for none; ok is false for a bound the shape cannot hold.
func intBound(r *big.Rat) (*int64, bool) {
	if r == nil {
		return nil, true
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return nil, false
	}
	n := r.Num().Int64()
	return &n, true
}

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// accepts reports whether the quick check is sure v (one JSON value) is
// valid; false is "ask the full validator".
func (sh *shape) accepts(v []byte) bool {
	if !json.Valid(v) {
		return false
	}
	r := quickReader{in: v}
	r.space()
	return r.value(sh) // json.Valid saw one value and only space after it
}

// quickReader walks a text json.Valid has accepted, so it only has to
// tell tokens apart, never to find errors.
type quickReader struct {
	in  []byte
	pos int
}

func (r *quickReader) space() {
	for r.pos < len(r.in) {
		switch r.in[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// value checks the value at pos against sh and moves past it.
func (r *quickReader) value(sh *shape) bool {
	if sh.unknown || sh.never {
		return false
	}
	start := r.pos
	if !r.own(sh) {
		return false
	}
	if len(sh.anyOf) == 0 {
		return true
	}
	end := r.pos
	for _, b := range sh.anyOf {
		r.pos = start
		if r.value(b) && r.pos == end {
			return true
		}
	}
	return false
}

func (sh *shape) allows(t uint8) bool { return sh.types == 0 || sh.types&t != 0 }

// own checks the node's own keywords (all but anyOf).
func (r *quickReader) own(sh *shape) bool {
	switch c := r.in[r.pos]; {
	case c == '{':
		return sh.allows(tObject) && sh.enum == nil && r.object(sh)
	case c == '[':
		return sh.allows(tArray) && sh.enum == nil && r.array(sh)
	case c == '"':
		return sh.allows(tString) && r.str(sh)
	case c == 't':
		r.pos += len("true")
		return sh.allows(tBool) && sh.enum == nil
	case c == 'f':
		r.pos += len("false")
		return sh.allows(tBool) && sh.enum == nil
	case c == 'n':
		r.pos += len("null")
		return sh.allows(tNull) && sh.enum == nil
	default:
		return sh.enum == nil && r.number(sh)
	}
}

func (r *quickReader) object(sh *shape) bool {
	r.pos++ // {
	var seen uint64
	r.space()
	if r.in[r.pos] == '}' {
		r.pos++
		return len(sh.required) == 0
	}
	for {
		r.space()
		key, plain := r.rawString()
		if !plain {
			return false // an escaped key may spell any name
		}
		r.space()
		r.pos++ // :
		r.space()
		sub, known := sh.props[string(key)]
		switch {
		case known:
		case sh.closed:
			return false
		default:
			sub = sh.extra
		}
		if sub == nil {
			r.skip()
		} else if !r.value(sub) {
			return false
		}
		seen |= sh.required[string(key)]
		r.space()
		if r.in[r.pos] == '}' {
			r.pos++
			break
		}
		r.pos++ // ,
	}
	for _, bit := range sh.required {
		if seen&bit == 0 {
			return false
		}
	}
	return true
}

func (r *quickReader) array(sh *shape) bool {
	r.pos++ // [
	n := 0
	r.space()
	if r.in[r.pos] == ']' {
		r.pos++
	} else {
		for {
			r.space()
			if sh.items == nil {
				r.skip()
			} else if !r.value(sh.items) {
				return false
			}
			n++
			r.space()
			if r.in[r.pos] == ']' {
				r.pos++
				break
			}
			r.pos++ // ,
		}
	}
	return (sh.minItems < 0 || n >= sh.minItems) && (sh.maxItems < 0 || n <= sh.maxItems)
}

// rawString moves past the string at pos; plain reports one of printable
// ASCII without escapes, whose bytes are then its value.
func (r *quickReader) rawString() ([]byte, bool) {
	r.pos++ // "
	start, plain := r.pos, true
	for {
		switch c := r.in[r.pos]; {
		case c == '"':
			s := r.in[start:r.pos]
			r.pos++
			return s, plain
		case c == '\\':
			plain = false
			r.pos += 2
		default:
			if c >= 0x80 {
				plain = false
			}
			r.pos++
		}
	}
}

func (r *quickReader) str(sh *shape) bool {
	s, plain := r.rawString()
	bounded := sh.minLen >= 0 || sh.maxLen >= 0 || sh.enum != nil
	if bounded && !plain {
		return false
	}
	if sh.minLen >= 0 && len(s) < sh.minLen || sh.maxLen >= 0 && len(s) > sh.maxLen {
		return false
	}
	if sh.enum == nil {
		return true
	}
	for _, e := range sh.enum {
		if e == string(s) {
			return true
		}
	}
	return false
}

// number accepts a number the node allows: any, when it allows numbers
// without bounds; else only a plain integer within its bounds.
func (r *quickReader) number(sh *shape) bool {
	start := r.pos
	integral := true
	for r.pos < len(r.in) {
		c := r.in[r.pos]
		if c == '.' || c == 'e' || c == 'E' || c == '+' {
			integral = false
		} else if c != '-' && (c < '0' || c > '9') {
			break
		}
		r.pos++
	}
	bounded := sh.minInt != nil || sh.maxInt != nil
	if sh.allows(tNumber) && !bounded {
		return true
	}
	if !integral || !sh.allows(tInteger) && !sh.allows(tNumber) {
		return false
	}
	tok := r.in[start:r.pos]
	if len(tok) > 18 { // beyond what an int64 surely holds
		return false
	}
	var n int64
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	for _, d := range tok {
		n = n*10 + int64(d-'0')
	}
	if neg {
		n = -n
	}
	return (sh.minInt == nil || n >= *sh.minInt) && (sh.maxInt == nil || n <= *sh.maxInt)
}

// skip moves past one value of any kind.
func (r *quickReader) skip() {
	switch r.in[r.pos] {
	case '"':
		r.rawString()
	case '{', '[':
		for depth := 0; ; {
			switch r.in[r.pos] {
			case '"':
				r.rawString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			r.pos++
			if depth == 0 {
				return
			}
		}
	default: // a literal or a number
		for r.pos < len(r.in) {
			switch r.in[r.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			r.pos++
		}
	}
}
