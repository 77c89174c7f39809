package attach

import (
	"encoding/json"
	"strconv"
)

// Frame types on a rail (spec §12).
const (
	frameData   = "f"
	frameCredit = "credit"
	frameClose  = "close"
)

// frame is one decoded rail frame.
type frame struct {
	t      string
	seq    uint64
	ack    uint64
	hasAck bool
	data   json.RawMessage
}

// appendDataFrame writes {"t":"f","seq":seq[,"ack":ack],"data":data}; data is
// already JSON.
func appendDataFrame(dst []byte, seq, ack uint64, data []byte) []byte {
	dst = append(dst, `{"t":"f","seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	if ack > 0 {
		dst = append(dst, `,"ack":`...)
		dst = strconv.AppendUint(dst, ack, 10)
	}
	dst = append(dst, `,"data":`...)
	dst = append(dst, data...)
	return append(dst, '}')
}

func encodeCredit(ack uint64) []byte {
	return append(strconv.AppendUint([]byte(`{"t":"credit","ack":`), ack, 10), '}')
}

var closeFrame = []byte(`{"t":"close"}`)

// decodeFrame reads one frame of the closed schema: a data frame with a
// positive seq, data and an optional ack; a credit frame with an ack; a
// close frame with nothing else. Anything else is garbled.
func decodeFrame(b []byte) (frame, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return frame{}, refuse(errGarbled, "frame is not a JSON object")
	}
	var f frame
	if err := json.Unmarshal(m["t"], &f.t); err != nil {
		return frame{}, refuse(errGarbled, "frame has no string t")
	}
	allowed := map[string][]string{frameData: {"t", "seq", "data", "ack"}, frameCredit: {"t", "ack"}, frameClose: {"t"}}[f.t]
	if allowed == nil {
		return frame{}, refuse(errGarbled, "unknown frame type %q", f.t)
	}
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return frame{}, refuse(errGarbled, "%s frame carries the unknown member %q", f.t, k)
		}
	}
	switch f.t {
	case frameData:
		var err error
		if f.seq, err = counter(m["seq"]); err != nil || f.seq == 0 {
			return frame{}, refuse(errGarbled, "data frame seq is not a positive integer")
		}
		if f.data = m["data"]; f.data == nil {
			return frame{}, refuse(errGarbled, "data frame carries no data")
		}
		if raw, ok := m["ack"]; ok {
			if f.ack, err = counter(raw); err != nil {
				return frame{}, refuse(errGarbled, "data frame ack is not a non-negative integer")
			}
			f.hasAck = true
		}
	case frameCredit:
		raw, ok := m["ack"]
		var err error
		if f.ack, err = counter(raw); !ok || err != nil {
			return frame{}, refuse(errGarbled, "credit frame ack is not a non-negative integer")
		}
		f.hasAck = true
	}
	return f, nil
}

// counter reads a seq or ack: a non-negative integer up to 2^53-1, spelt
// without fraction or exponent.
func counter(raw json.RawMessage) (uint64, error) {
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil || n > maxSafeInt {
		return 0, errGarbled
	}
	return n, nil
}
