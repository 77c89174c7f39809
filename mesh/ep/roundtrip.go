package ep

import (
	"context"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
	fastjson "github.com/segmentio/encoding/json"
)

// isNoResponders reports a broker-authored 503 on the sentinel: nobody holds the rail.
func isNoResponders(m *nats.Msg) bool {
	return proto.IsNoResponders(m.Subject) && len(m.Data) == 0 && m.Header.Get("Status") == "503"
}

// prepared is a request ready to publish: its subject, body and nonce.
type prepared struct {
	req     proto.Request
	subject string
	body    []byte
}

func (c *Client) prepare(req proto.Request, body proto.EndpointRequest) (prepared, *proto.Error) {
	req.Space, req.Caller, req.Nonce = c.opts.Space, c.opts.Caller, proto.NewNonce()
	subject, err := req.Subject()
	if err != nil {
		return prepared{}, proto.Refuse(proto.CodeBadRequest, "cannot address the request: %v", err)
	}
	b, err := fastjson.Marshal(body)
	if err != nil {
		return prepared{}, proto.Refuse(proto.CodeBadRequest, "cannot encode the request: %v", err)
	}
	return prepared{req: req, subject: subject, body: b}, nil
}

// roundTrip publishes one call and waits for its reply: the exact nonce rail is subscribed first, the transport reply-to is the no-responders sentinel (servers ignore it), and a broker refusal of the publish is permission-denied. The responder comes from the reply subject only.
func (c *Client) roundTrip(ctx context.Context, req proto.Request, body proto.EndpointRequest) (Responder, proto.EndpointReply, *proto.Error) {
	p, e := c.prepare(req, body)
	if e != nil {
		return Responder{}, proto.EndpointReply{}, e
	}
	ch, forget, err := c.replies.listen(p.req.Nonce, 8)
	if err != nil {
		return Responder{}, proto.EndpointReply{}, proto.Refuse(proto.CodeUnavailable, "cannot listen for the reply: %v", err)
	}
	defer forget()
	refused, stop := c.perms.Watch(p.subject)
	defer stop()
	m := &nats.Msg{Subject: p.subject, Reply: proto.NoRespondersSubject(c.opts.Space, c.opts.Caller, p.req.Nonce), Data: p.body}
	if err := c.nc.PublishMsg(m); err != nil {
		return Responder{}, proto.EndpointReply{}, proto.Refuse(proto.CodeUnavailable, "publishing %s: %v", p.subject, err)
	}
	for {
		select {
		case <-ctx.Done():
			return Responder{}, proto.EndpointReply{}, &proto.Error{Code: proto.CodeDeadlineExceeded, Message: "no reply to " + body.Op.Command + " within the deadline; it may or may not have run", Outcome: proto.Unknown}
		case err := <-refused:
			return Responder{}, proto.EndpointReply{}, proto.Refuse(proto.CodePermissionDenied, "the broker refused to publish on %s: %v", p.subject, err)
		case m := <-ch:
			if isNoResponders(m) {
				return Responder{}, proto.EndpointReply{}, proto.Refuse(proto.CodeUnavailable, "no instance of %s serves %s on %s", proto.EndpointName(p.req.Endpoint), body.Op.Command, p.req.Rail)
			}
			rs, err := proto.ParseReply(m.Subject)
			if err != nil || rs.Caller != c.opts.Caller || rs.Nonce != p.req.Nonce {
				continue
			}
			r, err := proto.DecodeReply(m.Data)
			if err != nil || r.ID != body.ID {
				continue // a bad frame never ends the wait
			}
			return Responder{InstanceID: rs.InstanceID, Epoch: rs.Epoch}, r, nil
		}
	}
}
