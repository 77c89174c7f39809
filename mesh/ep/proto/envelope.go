package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	fastjson "github.com/segmentio/encoding/json"
)

// Version is the envelope version; any other v is unsupported-version.
const Version = 1

// The two request classes; record is a state contract, never a request class.
const (
	ClassEphemeral = "ephemeral"
	ClassJournal   = "journal"
)

// Op binds a request to one command of one described contract; it must agree with the subject.
type Op struct {
	Endpoint     string `json:"endpoint"` // dotted name, not the wire token
	Command      string `json:"command"`
	InputDigest  string `json:"inputDigest,omitempty"`  // closure digest; required except on describe
	OutputDigest string `json:"outputDigest,omitempty"` // closure digest; required except on describe
}

// BodyTarget is the body target block: present exactly for targeted modes, owner equal to the subject's target owner.
type BodyTarget struct {
	Owner           string `json:"owner"`
	Actor           string `json:"actor"`
	LifecycleUID    string `json:"lifecycleUid"`
	MappingRevision uint64 `json:"mappingRevision,omitempty"` // 0 is absent: store revisions start at 1
}

// Bind is the incarnation a caller resolved through describe; a responder that is not it refuses before any effect.
type Bind struct {
	InstanceID string `json:"instanceId"`
	Epoch      uint64 `json:"epoch"`
}

// From names the sender as the body claims it; ID must equal the subject's caller principal.
type From struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role string `json:"role,omitempty"`
}

// Correlation is W3C Trace Context, propagated to downstream calls, events and facts.
type Correlation struct {
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
	Baggage     string `json:"baggage,omitempty"`
}

// EndpointRequest is the body of a request; the subject, not this body, is the authorization boundary, and the body may only narrow it.
type EndpointRequest struct {
	V             int             `json:"v"`
	ID            string          `json:"id"`
	Op            Op              `json:"op"`
	Class         string          `json:"class"`
	ReplyExpected bool            `json:"replyExpected"` // true = call, false = cast
	GoalID        string          `json:"goalId,omitempty"`
	Target        *BodyTarget     `json:"target,omitempty"`
	Bind          *Bind           `json:"bind,omitempty"`
	Args          json.RawMessage `json:"args,omitempty"`
	From          From            `json:"from"`
	DeadlineMs    int64           `json:"deadlineMs,omitempty"` // required on calls, scatters and journal submissions
	Correlation   *Correlation    `json:"correlation,omitempty"`
	Auth          json.RawMessage `json:"auth,omitempty"` // opaque signed slot; identity never rides it
}

// EndpointReply is the body of a reply. A reply proves the request was handled, not that it executed; see Error.Outcome.
type EndpointReply struct {
	V       int             `json:"v"`
	ID      string          `json:"id"`
	OK      bool            `json:"ok"`
	Data    json.RawMessage `json:"data,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	Receipt json.RawMessage `json:"receipt,omitempty"`
}

// OKReply answers request id with validated output data.
func OKReply(id string, data json.RawMessage) EndpointReply {
	return EndpointReply{V: Version, ID: id, OK: true, Data: data}
}

// ErrorReply answers request id with a refusal or failure.
func ErrorReply(id string, e *Error) EndpointReply {
	return EndpointReply{V: Version, ID: id, Error: e}
}

// DecodeRequest parses a request body (the result points into data); the version is judged before any other field, so version skew never reads as a shape error. A well-formed v1 body is read in one pass; only a body that fails is read again for its version.
func DecodeRequest(data []byte) (EndpointRequest, *Error) {
	var r EndpointRequest
	err := decodeAliasing(data, &r)
	if err == nil && r.V == Version {
		return r, nil
	}
	var probe struct {
		V json.RawMessage `json:"v"`
	}
	if perr := fastjson.Unmarshal(data, &probe); perr != nil {
		return EndpointRequest{}, Refuse(CodeBadRequest, "request body is not a JSON object: %v", perr)
	}
	if string(probe.V) != "1" {
		return EndpointRequest{}, Refuse(CodeUnsupportedVersion, "request envelope version %s is not %d", orAbsent(probe.V), Version)
	}
	return EndpointRequest{}, Refuse(CodeBadRequest, "request body does not fit the envelope: %v", err)
}

// DecodeReply parses a reply body at the caller (the result points into data): v must be 1, an ok reply carries no error and a failed one carries an error with a known code and outcome.
func DecodeReply(data []byte) (EndpointReply, error) {
	var r EndpointReply
	if err := decodeAliasing(data, &r); err != nil {
		return EndpointReply{}, fmt.Errorf("ep: reply body does not fit the envelope: %w", err)
	}
	switch {
	case r.V != Version:
		return EndpointReply{}, fmt.Errorf("ep: reply envelope version %d is not %d", r.V, Version)
	case r.OK && r.Error != nil:
		return EndpointReply{}, fmt.Errorf("ep: reply %q is ok but carries an error", r.ID)
	case !r.OK && r.Error == nil:
		return EndpointReply{}, fmt.Errorf("ep: reply %q failed without an error", r.ID)
	case !r.OK && !ValidCode(r.Error.Code):
		return EndpointReply{}, fmt.Errorf("ep: reply %q carries unknown error code %q", r.ID, r.Error.Code)
	case !r.OK && r.Error.Outcome != "" && !r.Error.Outcome.valid():
		return EndpointReply{}, fmt.Errorf("ep: reply %q carries unknown outcome %q", r.ID, r.Error.Outcome)
	}
	return r, nil
}

// decodeAliasing reads one JSON value into v, its strings and raw
// messages pointing into data instead of copies: a message's data is its
// own (nats.go copies each payload it delivers), and the decoded envelope
// lives as long as the message.
func decodeAliasing(data []byte, v any) error {
	rest, err := fastjson.Parse(data, v, fastjson.ZeroCopy)
	if err != nil {
		return err
	}
	if len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return errors.New("invalid character after top-level value")
	}
	return nil
}

func orAbsent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(absent)"
	}
	return string(raw)
}
