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
// already surfaced live is acked silently; the rest is surfaced as a
// channel post that owns its ack.
func (e *Endpoint) onFrame(m jetstream.Msg) {
	if m.Headers().Get(FrameHeader) != "1" {
		e.inbox.reject(wire.RejectMalformedSubject)
		_ = m.Term()
		return
	}
	f, ok := decodeFrame(m.Data())
	if !ok {
		e.inbox.reject(wire.RejectMalformedJSON)
		_ = m.Term()
		return
	}
	if f.Msg.From.ID == e.me.ID() {
		_ = m.Ack()
		return
	}
	sender, err := wire.ParsePrincipal(f.Msg.From.ID)
	if err != nil {
		e.inbox.reject(wire.RejectSenderMismatch)
		_ = m.Term()
		return
	}
	it := &Item{
		Kind: wire.KindChannel, Msg: f.Msg, Durable: true, Received: time.Now(), msg: m,
		Subject: wire.Subject{Space: e.space, Kind: wire.KindChannel, Sender: sender, Channel: f.Channel},
	}
	if meta, err := m.Metadata(); err == nil {
		it.Seq = meta.Sequence.Stream
	}
	if !e.inbox.add(it) {
		_ = m.Ack()
	}
}

// decodeFrame checks the strict frame shape: three keys, version 1, a
// concrete channel, and a full message routed to that channel.
func decodeFrame(b []byte) (Frame, bool) {
	var keys map[string]json.RawMessage
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &keys) != nil || len(keys) != 3 {
		return Frame{}, false
	}
	var f Frame
	if json.Unmarshal(b, &f) != nil || f.Version != 1 || wire.ValidateConcreteChannel(f.Channel) != nil {
		return Frame{}, false
	}
	if f.Msg.Channel != f.Channel || f.Msg.Validate() != nil {
		return Frame{}, false
	}
	return f, true
}
