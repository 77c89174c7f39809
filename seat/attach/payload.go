package attach

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// Terminal payload kinds (spec §12): the caller sends ready, data and
// resize; the server sends data, drop and end.
const (
	kindData   = "data"
	kindReady  = "ready"
	kindResize = "resize"
	kindEnd    = "end"
	kindDrop   = "drop"
)

// payload is one decoded terminal payload.
type payload struct {
	kind       string
	b          []byte
	cols, rows int
	reason     Reason
	bytes      int64
}

func encodeData(p []byte) []byte {
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(p))+20)
	out = append(out, `{"k":"data","b":"`...)
	out = base64.StdEncoding.AppendEncode(out, p)
	return append(out, `"}`...)
}

var readyPayload = []byte(`{"k":"ready"}`)

func encodeResize(cols, rows int) []byte {
	out := append([]byte(`{"k":"resize","cols":`), strconv.Itoa(cols)...)
	out = append(append(out, `,"rows":`...), strconv.Itoa(rows)...)
	return append(out, '}')
}

func encodeEnd(r Reason) []byte {
	b, _ := json.Marshal(map[string]string{"k": kindEnd, "reason": string(r)})
	return b
}

func encodeDrop(n int64) []byte {
	return append(strconv.AppendInt([]byte(`{"k":"drop","bytes":`), n, 10), '}')
}

// payloadMembers is the closed schema of each kind.
var payloadMembers = map[string][]string{
	kindData:   {"k", "b"},
	kindReady:  {"k"},
	kindResize: {"k", "cols", "rows"},
	kindEnd:    {"k", "reason"},
	kindDrop:   {"k", "bytes"},
}

// decodePayload reads one terminal payload of the closed schema.
func decodePayload(raw json.RawMessage) (payload, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return payload{}, refuse(errGarbled, "terminal payload is not a JSON object")
	}
	var p payload
	if err := json.Unmarshal(m["k"], &p.kind); err != nil {
		return payload{}, refuse(errGarbled, "terminal payload has no string k")
	}
	members, ok := payloadMembers[p.kind]
	if !ok {
		return payload{}, refuse(errGarbled, "unknown terminal payload %q", p.kind)
	}
	if len(m) != len(members) {
		return payload{}, refuse(errGarbled, "%s payload must have exactly %v", p.kind, members)
	}
	for _, k := range members {
		if _, ok := m[k]; !ok {
			return payload{}, refuse(errGarbled, "%s payload lacks %q", p.kind, k)
		}
	}
	var err error
	switch p.kind {
	case kindData:
		p.b, err = base64Member(m["b"])
	case kindResize:
		if p.cols, err = positive(m["cols"]); err == nil {
			p.rows, err = positive(m["rows"])
		}
	case kindEnd:
		var s string
		if err = json.Unmarshal(m["reason"], &s); err == nil && !validReason(Reason(s)) {
			err = errGarbled
		}
		p.reason = Reason(s)
	case kindDrop:
		var n uint64
		n, err = counter(m["bytes"])
		p.bytes = int64(n)
	}
	if err != nil {
		return payload{}, refuse(errGarbled, "%s payload: bad member value", p.kind)
	}
	return p, nil
}

// base64Member decodes a JSON string of standard base64, without an
// unquoting copy when the string has no escapes (base64 never needs one).
func base64Member(raw json.RawMessage) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, errGarbled
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			body = []byte(s)
			break
		}
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(body)))
	n, err := base64.StdEncoding.Decode(out, body)
	return out[:n], err
}

func positive(raw json.RawMessage) (int, error) {
	n, err := counter(raw)
	if err != nil || n == 0 || n > 1<<16 {
		return 0, errGarbled
	}
	return int(n), nil
}
