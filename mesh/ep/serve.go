package ep

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
	fastjson "github.com/segmentio/encoding/json"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Call is one admitted request as its handler sees it. The subject, not the body, is the authorization boundary: Caller comes from the subject.
type Call struct {
	Subject  proto.Request
	Request  proto.EndpointRequest
	Received time.Time

	server *Server
	cmd    *command
}

// Caller is the forge-locked caller triple from the subject.
func (c *Call) Caller() proto.Caller { return c.Subject.Caller }

// Decode unmarshals the validated args into v. Args the contract let
// through that v cannot hold (a schema and a handler's type apart) are
// refused as a bad request: the handler has not acted on them.
func (c *Call) Decode(v any) *proto.Error {
	if len(c.Request.Args) == 0 {
		return nil
	}
	if err := fastjson.Unmarshal(c.Request.Args, v); err != nil {
		return proto.Refuse(proto.CodeBadRequest, "%s args do not fit the command: %v", c.Request.Op.Command, err)
	}
	return nil
}

// InstanceID and Epoch name the incarnation serving the call.
func (c *Call) InstanceID() string { return c.server.opts.InstanceID }

// Epoch is the serving epoch.
func (c *Call) Epoch() uint64 { return c.server.Epoch() }

// Fingerprint is the request's §5 identity.
func (c *Call) Fingerprint() (string, error) { return proto.RequestFingerprint(c.Subject, c.Request) }

// dispatch admits a request into the in-flight set, or refuses it when the server is saturated; the handler runs off the subscription's goroutine, on an idle worker if one waits.
func (s *Server) dispatch(m *nats.Msg, c *command) {
	if s.fenced.Load() || wire.ServerAuthored(m.Header) {
		return // a request reflected through the server is no caller's: never served, never answered
	}
	subj, err := proto.ParseRequest(m.Subject)
	if err != nil {
		return // no sender can be named: ignore, never answer
	}
	received := time.Now()
	s.gate.RLock()
	if s.draining {
		s.gate.RUnlock()
		return
	}
	who := subj.Caller.ID()
	if !s.admitCaller(who) {
		s.gate.RUnlock()
		if id, call := peekCall(m.Data); call {
			s.answer(subj, id, nil, proto.Refuse(proto.CodeResourceExhausted, "%s holds %d calls in flight at %s instance %s, its limit; retry when one ends", who, s.opts.MaxPerCaller, s.opts.Endpoint, s.opts.InstanceID))
		}
		return
	}
	select {
	case s.sem <- struct{}{}:
	default:
		s.gate.RUnlock()
		s.releaseCaller(who)
		if id, call := peekCall(m.Data); call {
			s.answer(subj, id, nil, proto.Refuse(proto.CodeResourceExhausted, "%s instance %s is at its %d in-flight limit; retry later", s.opts.Endpoint, s.opts.InstanceID, s.opts.MaxInFlight))
		}
		return
	}
	s.inflight.Add(1)
	s.gate.RUnlock()
	j := job{m: m, subj: subj, c: c, received: received, who: who}
	select {
	case s.jobs <- j: // an idle worker took it
	default:
		go s.work(j)
	}
}

// job is one admitted request on its way to a worker.
type job struct {
	m        *nats.Msg
	subj     proto.Request
	c        *command
	received time.Time
	who      string
}

// workerIdle is how long a worker waits for its next request before it
// ends. A worker kept between calls spares each call a goroutine start
// and the growth of a fresh goroutine's stack through the pipeline.
const workerIdle = 2 * time.Second

// work runs j, then each request handed to it while it waits idle, until
// it has waited workerIdle for none or the server closes. The workers are
// as many as the requests that ever ran at once (at most MaxInFlight).
func (s *Server) work(j job) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		s.run(j)
		j = job{} // hold no request while idle
		idle.Reset(workerIdle)
		select {
		case j = <-s.jobs:
		case <-idle.C:
			return
		case <-s.ctx.Done():
			return
		}
	}
}

func (s *Server) run(j job) {
	defer s.inflight.Done()
	defer func() { <-s.sem }()
	defer s.releaseCaller(j.who)
	s.serve(j.m, j.subj, j.c, j.received)
}

// admitCaller takes one of the caller's MaxPerCaller slots, if it has one.
func (s *Server) admitCaller(who string) bool {
	s.perMu.Lock()
	defer s.perMu.Unlock()
	if s.per[who] >= s.opts.MaxPerCaller {
		return false
	}
	s.per[who]++
	return true
}

func (s *Server) releaseCaller(who string) {
	s.perMu.Lock()
	defer s.perMu.Unlock()
	if s.per[who]--; s.per[who] <= 0 {
		delete(s.per, who)
	}
}

// peekCall reads just id and replyExpected from a body that failed to decode, so a call still hears why while a cast stays silent.
func peekCall(data []byte) (string, bool) {
	var p struct {
		ID            string `json:"id"`
		ReplyExpected bool   `json:"replyExpected"`
	}
	if json.Unmarshal(data, &p) != nil {
		return "", false
	}
	return p.ID, p.ReplyExpected
}

func (s *Server) serve(m *nats.Msg, subj proto.Request, c *command, received time.Time) {
	body, e := proto.DecodeRequest(m.Data)
	if e != nil {
		if id, call := peekCall(m.Data); call {
			s.answer(subj, id, nil, e)
		}
		return
	}
	call := &Call{Subject: subj, Request: body, Received: received, server: s, cmd: c}
	data, e := s.pipeline(call)
	if !body.ReplyExpected {
		if e != nil {
			s.logf("cast %s from %s refused: %v", c.Name, subj.Caller.ID(), e)
		}
		return // casts never get replies, even errors
	}
	s.answer(subj, body.ID, data, e)
}

// pipeline is the §3 serve order; everything before the handler refuses not-executed.
func (s *Server) pipeline(call *Call) (json.RawMessage, *proto.Error) {
	subj, body, c := call.Subject, call.Request, call.cmd
	if e := proto.CheckRequest(subj, body, c.Class, c.in.Digest(), c.out.Digest()); e != nil {
		return nil, e
	}
	if !c.modes[subj.Mode] {
		return nil, proto.Refuse(proto.CodePermissionDenied, "%s is not served %s", c.Name, modePhrase(subj.Mode))
	}
	if b := body.Bind; b != nil {
		if b.InstanceID != s.opts.InstanceID {
			return nil, proto.BindRefused(proto.CodeFailedPrecondition, "bound to instance %s, but this is %s; describe again", b.InstanceID, s.opts.InstanceID)
		}
		if ep := s.Epoch(); b.Epoch != ep {
			return nil, proto.BindRefused(proto.CodeExpired, "bound to epoch %d of %s, but it serves epoch %d; describe again", b.Epoch, b.InstanceID, ep)
		}
	}
	ctx, cancel := s.handlerContext(call)
	defer cancel()
	if c.Authorize != nil {
		if e := c.Authorize(ctx, call); e != nil {
			return nil, notExecuted(e)
		}
	}
	if err := c.in.Validate(body.Args); err != nil {
		return nil, proto.Refuse(proto.CodeBadRequest, "args do not fit %s's input schema: %v", c.Name, err)
	}
	if subj.Mode.Targeted() {
		switch {
		case c.Target != nil:
			if e := c.Target(ctx, call); e != nil {
				return nil, notExecuted(e)
			}
		case subj.Mode == proto.ModeChild || subj.Mode == proto.ModeLedger:
			return nil, proto.Refuse(proto.CodeUnavailable, "%s has no %s authority seam", c.Name, subj.Mode)
		}
	}
	v, e := runHandler(ctx, c, call)
	if e != nil {
		if e.Outcome == "" {
			e.Outcome = proto.Executed
		}
		if !proto.ValidCode(e.Code) {
			return nil, proto.Failed(proto.CodeInternal, "%s failed with a malformed code %q: %s", c.Name, e.Code, e.Message)
		}
		return nil, e
	}
	out, err := encodeData(v)
	if err != nil {
		return nil, proto.Failed(proto.CodeInternal, "%s produced unencodable data: %v", c.Name, err)
	}
	if err := c.out.Validate(out); err != nil {
		s.logf("%s: output fails its schema: %v", c.Name, err)
		return nil, proto.Failed(proto.CodeInternal, "%s produced output outside its schema", c.Name)
	}
	return out, nil
}

func (s *Server) handlerContext(call *Call) (context.Context, context.CancelFunc) {
	if ms := call.Request.DeadlineMs; ms > 0 {
		return context.WithDeadline(s.ctx, call.Received.Add(time.Duration(ms)*time.Millisecond))
	}
	return context.WithCancel(s.ctx)
}

// runHandler runs the handler, turning a panic into an internal error whose effect is unknown.
func runHandler(ctx context.Context, c *command, call *Call) (v any, e *proto.Error) {
	defer func() {
		if r := recover(); r != nil {
			v, e = nil, &proto.Error{Code: proto.CodeInternal, Message: fmt.Sprintf("%s panicked: %v", c.Name, r), Outcome: proto.Unknown}
		}
	}()
	return c.Handler(ctx, call)
}

func notExecuted(e *proto.Error) *proto.Error {
	cp := *e
	cp.Outcome = proto.NotExecuted
	if !proto.ValidCode(cp.Code) {
		cp.Code = proto.CodePermissionDenied
	}
	return &cp
}

func encodeData(v any) (json.RawMessage, error) {
	switch d := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return d, nil
	}
	return fastjson.Marshal(v)
}

func modePhrase(m proto.Mode) string {
	if m == proto.ModeNone {
		return "untargeted"
	}
	return "in " + string(m) + " mode"
}

// answer publishes a reply on the subject derived from the request, at this epoch; a fenced server publishes nothing.
func (s *Server) answer(subj proto.Request, id string, data json.RawMessage, e *proto.Error) {
	if s.fenced.Load() {
		return
	}
	to, err := subj.ReplySubject(s.opts.InstanceID, s.Epoch())
	if err != nil {
		return
	}
	r := proto.OKReply(id, data)
	if e != nil {
		r = proto.ErrorReply(id, e)
	}
	b, err := fastjson.Marshal(r)
	if err != nil {
		return
	}
	if err := s.nc.Publish(to, b); err != nil {
		s.logf("replying on %s: %v", to, err)
	}
}
