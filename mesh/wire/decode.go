package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// Reject is why a delivery was refused; it is advisory and goes into logs, and "" means accepted.
type Reject string

// Reject reasons, in the order Decode checks them; all are permanent, so a durable copy is terminated, never retried.
const (
	RejectMalformedJSON    Reject = "malformed-json"
	RejectNotObject        Reject = "non-object-payload"
	RejectBadID            Reject = "bad-id"
	RejectMalformedSubject Reject = "malformed-subject"
	RejectSenderMismatch   Reject = "sender-mismatch"
	RejectServerAuthored   Reject = "server-authored" // carries JetStream's own headers: a replayed or reflected message
)

// Delivery is a decoded message together with the subject that authenticates it.
type Delivery struct {
	Subject Subject
	Msg     Message
}

// Decode runs receive steps 1-4 of spec §4.1 on every delivery path, so no unauthenticated sender or payload-chosen route reaches the application.
func Decode(subject string, data []byte) (Delivery, Reject, error) {
	return decode(data, func(json.RawMessage) (Subject, error) { return ParseSubject(subject) })
}

// DecodeCopy runs the same receive steps on the message inside a stored channel copy, which arrives on the member's own subject: the channel is the frame's, and the sender is the message's from.id, which the delivery service checked against the post's subject before storing the copy.
func DecodeCopy(space, channel string, data []byte) (Delivery, Reject, error) {
	return decode(data, func(from json.RawMessage) (Subject, error) {
		if err := ValidateConcreteChannel(channel); err != nil {
			return Subject{}, err
		}
		sub := Subject{Space: space, Kind: KindChannel, Channel: channel}
		var f senderFields
		if len(from) > 0 && from[0] == '{' && members(from, f.set) {
			if id, ok := jsonString(f.id); ok {
				// A from.id that is no principal leaves the sender empty,
				// so the sender check below refuses it.
				sub.Sender, _ = ParsePrincipal(id)
			}
		}
		return sub, nil
	})
}

// decode is steps 1-4 with the subject step supplied: subjectOf gets the raw from member and says which subject authenticates the message.
func decode(data []byte, subjectOf func(from json.RawMessage) (Subject, error)) (Delivery, Reject, error) {
	if !json.Valid(data) {
		return Delivery{}, RejectMalformedJSON, errors.New("payload is not valid JSON")
	}
	// Keys match exactly (JSON is case-sensitive); the last of a repeated
	// key wins, as with encoding/json.
	var top envelopeFields
	if !members(data, top.set) {
		return Delivery{}, RejectNotObject, errors.New("payload is not a JSON object")
	}
	id, ok := jsonString(top.id)
	if !ok {
		return Delivery{}, RejectBadID, errors.New("id is absent or not a string")
	}
	sub, err := subjectOf(top.from)
	if err != nil {
		return Delivery{}, RejectMalformedSubject, err
	}
	from, err := decodeSender(top.from, sub)
	if err != nil {
		return Delivery{}, RejectSenderMismatch, err
	}
	m := Message{
		ID:        id,
		TS:        jsonMillis(top.ts),
		Space:     jsonStringOr(top.space),
		From:      from,
		Mentions:  NormalizeMentions(jsonStrings(top.mentions)),
		Parts:     decodeParts(top.parts),
		ReplyTo:   jsonStringOr(top.replyTo),
		ContextID: jsonStringOr(top.contextID),
	}
	switch sub.Kind {
	case KindChannel:
		m.Channel = sub.Channel
	case KindDM:
		m.To = sub.Recipient.ID()
	case KindAnycast:
		m.ToService = sub.Role
	}
	return Delivery{Subject: sub, Msg: m}, "", nil
}

// decodeSender accepts from only when it is an object whose id is the subject's sender and that sender is a real principal.
func decodeSender(raw json.RawMessage, sub Subject) (Sender, error) {
	var f senderFields
	if len(raw) == 0 || raw[0] != '{' || !members(raw, f.set) {
		return Sender{}, refuse(ErrSenderMismatch, "from is absent or not an object")
	}
	id, ok := jsonString(f.id)
	if !ok {
		return Sender{}, refuse(ErrSenderMismatch, "from.id is absent or not a string")
	}
	if want := sub.Sender.ID(); id != want {
		return Sender{}, refuse(ErrSenderMismatch, "from.id %q is not the subject's sender %q", id, want)
	}
	if err := sub.Surfaceable(); err != nil {
		return Sender{}, err
	}
	return Sender{ID: id, Name: jsonStringOr(f.name), Role: jsonStringOr(f.role)}, nil
}

// jsonString decodes raw when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	// Most strings have no escapes: their bytes are the value (the
	// surrounding Unmarshal already checked the JSON).
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonStringOr is jsonString that treats anything else as absent, for advisory fields.
func jsonStringOr(raw json.RawMessage) string {
	s, _ := jsonString(raw)
	return s
}

// jsonMillis reads ts leniently: a number is truncated to whole milliseconds, anything else is 0.
func jsonMillis(raw json.RawMessage) int64 {
	if len(raw) == 0 || !(raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9') {
		return 0
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return 0
	}
	return int64(f)
}

// jsonStrings keeps the string elements of a JSON array and drops the rest.
func jsonStrings(raw json.RawMessage) []string {
	var out []string
	elements(raw, func(e []byte) {
		if s, ok := jsonString(e); ok {
			out = append(out, s)
		}
	})
	return out
}

// decodeParts keeps every part that decodes and skips the rest, so one odd part does not cost the whole message.
func decodeParts(raw json.RawMessage) []Part {
	var out []Part
	elements(raw, func(e []byte) {
		// A text part, by far the commonest, is read without reflection.
		var kind, text []byte
		textOnly := members(e, func(key, val []byte) {
			switch string(keyBytes(key)) {
			case "kind":
				kind = val
			case "text":
				text = val
			}
		})
		if k, _ := jsonString(kind); textOnly && k == PartText {
			if t, ok := jsonString(text); ok || text == nil {
				out = append(out, Part{Kind: PartText, Text: t})
				return
			}
		}
		var p Part
		if p.UnmarshalJSON(e) == nil && p.Kind != "" {
			out = append(out, p)
		}
	})
	return out
}

// keyBytes is an object key without its quotes, unescaped when it has to be.
func keyBytes(key []byte) []byte {
	if len(key) < 2 {
		return nil
	}
	body := key[1 : len(key)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return body
	}
	s, _ := jsonString(key)
	return []byte(s)
}

// envelopeFields are the raw top-level members Decode reads.
type envelopeFields struct {
	id, ts, space, from, mentions, parts, replyTo, contextID []byte
}

func (f *envelopeFields) set(key, val []byte) {
	switch string(keyBytes(key)) {
	case "id":
		f.id = val
	case "ts":
		f.ts = val
	case "space":
		f.space = val
	case "from":
		f.from = val
	case "mentions":
		f.mentions = val
	case "parts":
		f.parts = val
	case "replyTo":
		f.replyTo = val
	case "contextId":
		f.contextID = val
	}
}

// senderFields are the raw members of from.
type senderFields struct{ id, name, role []byte }

func (f *senderFields) set(key, val []byte) {
	switch string(keyBytes(key)) {
	case "id":
		f.id = val
	case "name":
		f.name = val
	case "role":
		f.role = val
	}
}

// serverHeaders are headers only the server writes on what it sends: a
// stored message replayed by a direct get, a status answer. A message
// carrying one where a peer's message belongs was reflected through the
// server, so it is never a peer's word.
var serverHeaders = []string{"Nats-Stream", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Subject", "Nats-Last-Sequence", "Nats-Num-Pending", "Status"}

// ServerAuthored reports whether message headers carry any header only
// the server writes.
func ServerAuthored(h map[string][]string) bool {
	for _, k := range serverHeaders {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}
