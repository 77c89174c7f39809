package mesh

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh/wire"
)

// FrameHeader marks a durable channel copy written by the space's trusted
// delivery service onto a member's DLV subject.
const FrameHeader = "Cotal-Delivery-Frame"

// Frame is the body of a durable channel copy: exactly these three keys.
type Frame struct {
	Version int          `json:"version"`
	Channel string       `json:"channel"`
	Msg     wire.Message `json:"msg"`
}

// onFrame is the member side of the durable backstop: anything but a
// well-formed frame is terminated; an own echo is acked; a copy of an id
// already handed over is acked silently; the rest is surfaced as a
// channel post that owns its ack.
func (e *Endpoint) onFrame(m jetstream.Msg) {
	if m.Headers().Get(FrameHeader) != "1" {
		e.inbox.reject(wire.RejectMalformedSubject)
		_ = m.Term()
		return
	}
	d, reject := decodeFrame(e.space, m.Data())
	if reject != "" {
		e.inbox.reject(reject)
		_ = m.Term()
		return
	}
	if d.Msg.From.ID == e.me.ID() {
		_ = m.Ack()
		return
	}
	it := &Item{Kind: wire.KindChannel, Msg: d.Msg, Subject: d.Subject, Durable: true, Received: time.Now(), msg: m}
	if meta, err := m.Metadata(); err == nil {
		it.Seq, it.stream = meta.Sequence.Stream, meta.Stream
	}
	if !e.inbox.add(it) {
		_ = m.Ack()
	}
}

// decodeFrame checks the strict frame shape (three keys, version 1, a
// concrete channel) and runs the receive rules of spec §4.1 on the
// message inside, never the publisher's: a post with an empty id, no
// parts or no ts is a post its members are owed.
func decodeFrame(space string, b []byte) (wire.Delivery, wire.Reject) {
	var keys map[string]json.RawMessage
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &keys) != nil || len(keys) != 3 {
		return wire.Delivery{}, wire.RejectMalformedJSON
	}
	var f struct {
		Version int             `json:"version"`
		Channel string          `json:"channel"`
		Msg     json.RawMessage `json:"msg"`
	}
	if json.Unmarshal(b, &f) != nil || f.Version != 1 || len(f.Msg) == 0 {
		return wire.Delivery{}, wire.RejectMalformedJSON
	}
	if wire.ValidateConcreteChannel(f.Channel) != nil {
		return wire.Delivery{}, wire.RejectMalformedSubject
	}
	d, reject, _ := wire.DecodeCopy(space, f.Channel, f.Msg)
	return d, reject
}
