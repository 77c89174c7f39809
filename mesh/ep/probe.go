package ep

import (
	"context"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Liveness is a probe's verdict. Only the broker's own no-responders answer affirms an instance gone; silence proves nothing.
type Liveness string

// The probe verdicts.
const (
	Gone            Liveness = "gone"    // the broker answered 503 on the sentinel: nobody holds the instance rail
	LivenessUnknown Liveness = "unknown" // anything else: the rail is held, or the broker did not say
)

// Probe casts describe on the instance rail with the no-responders sentinel as reply-to. The broker writes its 503 before the PONG that ends the flush, so the verdict is known when the flush returns. A refused probe publish is a permission-denied error naming the subject, never a verdict.
func (c *Client) Probe(ctx context.Context, endpoint, instanceID string) (Liveness, error) {
	ctx, cancel := withDeadline(ctx, 0)
	defer cancel()
	req := proto.Request{Rail: proto.RailInst, Endpoint: endpoint, InstanceID: instanceID, Command: proto.CommandDescribe}
	body := proto.EndpointRequest{V: proto.Version, ID: wire.NewID(), Op: proto.Op{Endpoint: proto.EndpointName(mustTok(endpoint)), Command: proto.CommandDescribe},
		Class: proto.ClassEphemeral, From: c.opts.From}
	p, e := c.prepare(req, body)
	if e != nil {
		return LivenessUnknown, e
	}
	sentinel := proto.NoRespondersSubject(c.opts.Space, c.opts.Caller, p.req.Nonce)
	ch := make(chan *nats.Msg, 2)
	sub, err := c.nc.ChanSubscribe(sentinel, ch)
	if err != nil {
		return LivenessUnknown, proto.Refuse(proto.CodeUnavailable, "cannot listen on %s: %v", sentinel, err)
	}
	defer sub.Unsubscribe()
	forget, err := c.replies.absent(p.req.Nonce, ch)
	if err != nil {
		return LivenessUnknown, proto.Refuse(proto.CodeUnavailable, "cannot listen on %s: %v", sentinel, err)
	}
	defer forget()
	if err := c.publishFlushed(ctx, p.subject, sentinel, p.body); err != nil {
		return LivenessUnknown, err
	}
	c.replies.caughtUp(ctx) // the broker's answer, if it went to the shared subscription
	for {
		select {
		case m := <-ch:
			if isNoResponders(m) {
				return Gone, nil
			}
		default:
			return LivenessUnknown, nil
		}
	}
}
