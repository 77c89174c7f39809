package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
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
)

// Delivery is a decoded message together with the subject that authenticates it.
type Delivery struct {
	Subject Subject
	Msg     Message
}

// Decode runs receive steps 1-4 of spec §4.1 on every delivery path, so no unauthenticated sender or payload-chosen route reaches the application.
func Decode(subject string, data []byte) (Delivery, Reject, error) {
	if !json.Valid(data) {
		return Delivery{}, RejectMalformedJSON, errors.New("payload is not valid JSON")
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Delivery{}, RejectNotObject, errors.New("payload is not a JSON object")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return Delivery{}, RejectMalformedJSON, err
	}
	id, ok := jsonString(top["id"])
	if !ok {
		return Delivery{}, RejectBadID, errors.New("id is absent or not a string")
	}
	sub, err := ParseSubject(subject)
	if err != nil {
		return Delivery{}, RejectMalformedSubject, err
	}
	from, err := decodeSender(top["from"], sub)
	if err != nil {
		return Delivery{}, RejectSenderMismatch, err
	}
	m := Message{
		ID:        id,
		TS:        jsonMillis(top["ts"]),
		Space:     jsonStringOr(top["space"]),
		From:      from,
		Mentions:  NormalizeMentions(jsonStrings(top["mentions"])),
		Parts:     decodeParts(top["parts"]),
		ReplyTo:   jsonStringOr(top["replyTo"]),
		ContextID: jsonStringOr(top["contextId"]),
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
	var fields map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		return Sender{}, refuse(ErrSenderMismatch, "from is absent or not an object")
	}
	id, ok := jsonString(fields["id"])
	if !ok {
		return Sender{}, refuse(ErrSenderMismatch, "from.id is absent or not a string")
	}
	if want := sub.Sender.ID(); id != want {
		return Sender{}, refuse(ErrSenderMismatch, "from.id %q is not the subject's sender %q", id, want)
	}
	if err := sub.Surfaceable(); err != nil {
		return Sender{}, err
	}
	return Sender{ID: id, Name: jsonStringOr(fields["name"]), Role: jsonStringOr(fields["role"])}, nil
}

// jsonString decodes raw when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
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
	var elems []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil
	}
	var out []string
	for _, e := range elems {
		if s, ok := jsonString(e); ok {
			out = append(out, s)
		}
	}
	return out
}

// decodeParts keeps every part that decodes and skips the rest, so one odd part does not cost the whole message.
func decodeParts(raw json.RawMessage) []Part {
	var elems []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil
	}
	var out []Part
	for _, e := range elems {
		var p Part
		if p.UnmarshalJSON(e) == nil && p.Kind != "" {
			out = append(out, p)
		}
	}
	return out
}
