package ep

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/cotal-go/cotal/mesh/ep/proto"

	"github.com/nats-io/nats.go"
)

// Slot is one frozen member of a scatter's expected set.
type Slot struct {
	InstanceID           string `json:"instanceId"`
	RegistrationRevision uint64 `json:"registrationRevision"`
	Epoch                uint64 `json:"epoch"`
}

// ScatterReply is one reply, attributed by its subject.
type ScatterReply struct {
	InstanceID string          `json:"instanceId"`
	Epoch      uint64          `json:"epoch"`
	Data       json.RawMessage `json:"data,omitempty"`
	Error      *proto.Error    `json:"error,omitempty"`
}

// MissingSlot is a frozen instance that gave no counted reply; Liveness is set when it was probed.
type MissingSlot struct {
	Slot
	Liveness Liveness `json:"liveness,omitempty"`
}

// Churn reasons.
const (
	ChurnEpoch        = "epoch"        // the reply came from the frozen instance at another epoch
	ChurnRegistration = "registration" // the instance re-registered after the freeze
	ChurnDeregistered = "deregistered" // the instance was explicitly deregistered after the freeze
)

// ChurnReply is an uncounted slot or reply, and why.
type ChurnReply struct {
	InstanceID string        `json:"instanceId"`
	Reason     string        `json:"reason"`
	Reply      *ScatterReply `json:"reply,omitempty"`
}

// InvalidFrame is a message on the scatter's rail that could not be read as a reply.
type InvalidFrame struct {
	Subject string `json:"subject"`
	Reason  string `json:"reason"`
}

// ScatterResult accounts for every frozen slot and every frame; nothing is dropped silently.
type ScatterResult struct {
	Complete   bool           `json:"complete"`
	Expected   []Slot         `json:"expected"`
	Replies    []ScatterReply `json:"replies"`
	Missing    []MissingSlot  `json:"missing"`
	Unexpected []ScatterReply `json:"unexpected"`
	Churn      []ChurnReply   `json:"churn"`
	Duplicate  []ScatterReply `json:"duplicate"`
	Late       []ScatterReply `json:"late"`
	Invalid    []InvalidFrame `json:"invalid"`
}

// ProbeAfter makes a scatter probe its still-silent instances once d has passed; when every silent one is gone, the scatter classifies at once instead of waiting out the deadline.
func ProbeAfter(d time.Duration) CallOption { return func(o *callOptions) { o.probeAfter = d } }

// Freeze reads the expected set of an endpoint from its svc records: (instanceId, registration revision, epoch). An empty or unreadable registry is failed-precondition.
func (c *Client) Freeze(ctx context.Context, endpoint string) ([]Slot, error) {
	slots, _, err := c.freeze(ctx, endpoint)
	return slots, err
}

// freeze is Freeze, with the store sequence of the newest entry on the
// endpoint's spec keys it read (a deletion's too): the reconcile's
// mark of an unchanged registry.
func (c *Client) freeze(ctx context.Context, endpoint string) ([]Slot, uint64, error) {
	kv, err := c.records(ctx)
	if err != nil {
		return nil, 0, proto.Refuse(proto.CodeFailedPrecondition, "the registry is unreadable: %v", err)
	}
	regs, err := snapshotRegistrations(ctx, kv, c.nc, endpoint, readStatus)
	if err != nil {
		return nil, 0, proto.Refuse(proto.CodeFailedPrecondition, "the registry is unreadable: %v", err)
	}
	slots := make([]Slot, 0, len(regs))
	var mark uint64
	for _, r := range regs {
		mark = max(mark, r.specSeq)
		if r.SpecRevision == 0 {
			continue // deregistered, or a status alone
		}
		s := Slot{InstanceID: r.InstanceID, RegistrationRevision: r.SpecRevision}
		if r.Status != nil {
			s.Epoch = r.Status.Epoch
		}
		slots = append(slots, s)
	}
	if len(slots) == 0 {
		return nil, 0, proto.Refuse(proto.CodeFailedPrecondition, "no instance of %s is registered", endpoint)
	}
	slices.SortFunc(slots, func(a, b Slot) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return slots, mark, nil
}

// Scatter sends one request to every instance on the all rail and attributes each reply against the frozen expected set. The classification point is when every slot answered or the deadline passed (earlier when every silent instance is probed gone); a bounded registry reconcile follows. A reconcile that finds a registration missing or behind returns the result with a failed-precondition error.
func (c *Client) Scatter(ctx context.Context, endpoint, command string, args any, opts ...CallOption) (*ScatterResult, error) {
	o := buildOptions(opts)
	ctx, cancel := withDeadline(ctx, o.timeout)
	defer cancel()
	raw, e := encodeArgs(args)
	if e != nil {
		return nil, e
	}
	slots, mark, err := c.freeze(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	_, cmd, err := c.lookup(ctx, endpoint, command, "", false, raw)
	if err != nil {
		return nil, err
	}
	o.on = ""
	req, body := c.request(endpoint, cmd, o, proto.RailAll)
	body.ReplyExpected, body.Args, body.DeadlineMs = true, raw, deadlineMs(ctx)
	p, e := c.prepare(req, body)
	if e != nil {
		return nil, e
	}
	// The replies come through the caller's shared reply subscription,
	// which routes them by nonce: no subscribe and unsubscribe per scatter.
	ch, forget, err := c.replies.listen(p.req.Nonce, 4*len(slots)+16)
	if err != nil {
		return nil, proto.Refuse(proto.CodeUnavailable, "cannot listen for replies: %v", err)
	}
	defer forget()
	refused, stop := c.perms.Watch(p.subject)
	defer stop()
	if err := c.nc.PublishRequest(p.subject, proto.NoRespondersSubject(c.opts.Space, c.opts.Caller, p.req.Nonce), p.body); err != nil {
		return nil, proto.Refuse(proto.CodeUnavailable, "publishing %s: %v", p.subject, err)
	}

	g := newGather(slots, body.ID, c.opts.Caller, p.req.Nonce)
	var probeC <-chan time.Time
	if o.probeAfter > 0 {
		t := time.NewTimer(o.probeAfter)
		defer t.Stop()
		probeC = t.C
	}
	verdicts := make(chan probeVerdict, len(slots))
	probing := 0
gather:
	for !g.allAnswered() {
		select {
		case <-ctx.Done():
			break gather
		case err := <-refused:
			return nil, proto.Refuse(proto.CodePermissionDenied, "the broker refused to publish on %s: %v", p.subject, err)
		case m := <-ch:
			if isNoResponders(m) {
				g.allGone()
				break gather
			}
			g.take(m, false)
		case <-probeC:
			for _, s := range g.silent() {
				probing++
				go func(iid string) {
					pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
					defer pcancel()
					l, err := c.Probe(pctx, endpoint, iid)
					verdicts <- probeVerdict{iid, l, err}
				}(s)
			}
		case v := <-verdicts:
			probing--
			if v.err == nil {
				g.liveness[v.iid] = v.l
			} else if c.opts.Logf != nil {
				c.opts.Logf("probing %s: %v", v.iid, v.err)
			}
			if g.silentAllGone() {
				break gather
			}
		}
	}
	// T has passed: whatever is already queued is late.
	for drained := false; !drained; {
		select {
		case m := <-ch:
			if !isNoResponders(m) {
				g.take(m, true)
			}
		default:
			drained = true
		}
	}
	res := g.result()
	return res, c.reconcile(ctx, endpoint, mark, res)
}

type probeVerdict struct {
	iid string
	l   Liveness
	err error
}

// gather holds the attribution state of one scatter; one goroutine owns it.
type gather struct {
	slots    map[string]Slot
	order    []Slot
	answered map[string]bool
	liveness map[string]Liveness
	id       string
	caller   proto.Caller
	nonce    string
	res      ScatterResult
}

func newGather(slots []Slot, id string, caller proto.Caller, nonce string) *gather {
	g := &gather{slots: map[string]Slot{}, order: slots, answered: map[string]bool{}, liveness: map[string]Liveness{}, id: id, caller: caller, nonce: nonce}
	for _, s := range slots {
		g.slots[s.InstanceID] = s
	}
	g.res.Expected = slots
	return g
}

func (g *gather) allAnswered() bool { return len(g.answered) == len(g.slots) }

func (g *gather) silent() []string {
	var out []string
	for _, s := range g.order {
		if !g.answered[s.InstanceID] && g.liveness[s.InstanceID] == "" {
			out = append(out, s.InstanceID)
		}
	}
	return out
}

func (g *gather) silentAllGone() bool {
	for _, s := range g.order {
		if !g.answered[s.InstanceID] && g.liveness[s.InstanceID] != Gone {
			return false
		}
	}
	return true
}

// allGone records a 503 on the all rail: no instance holds it, so every silent one is affirmed gone.
func (g *gather) allGone() {
	for _, s := range g.order {
		if !g.answered[s.InstanceID] {
			g.liveness[s.InstanceID] = Gone
		}
	}
}

// take attributes one frame: first valid reply per frozen (iid, epoch) counts; the rest are classified, never dropped.
func (g *gather) take(m *nats.Msg, late bool) {
	rs, err := proto.ParseReply(m.Subject)
	if err != nil || rs.Caller != g.caller || rs.Nonce != g.nonce {
		g.res.Invalid = append(g.res.Invalid, InvalidFrame{Subject: m.Subject, Reason: "not a reply subject of this scatter"})
		return
	}
	r, err := proto.DecodeReply(m.Data)
	if err != nil {
		g.res.Invalid = append(g.res.Invalid, InvalidFrame{Subject: m.Subject, Reason: err.Error()})
		return
	}
	if r.ID != g.id {
		g.res.Invalid = append(g.res.Invalid, InvalidFrame{Subject: m.Subject, Reason: "reply to request " + r.ID})
		return
	}
	sr := ScatterReply{InstanceID: rs.InstanceID, Epoch: rs.Epoch, Data: r.Data, Error: r.Error}
	slot, frozen := g.slots[rs.InstanceID]
	switch {
	case late:
		g.res.Late = append(g.res.Late, sr)
	case !frozen:
		g.res.Unexpected = append(g.res.Unexpected, sr)
	case rs.Epoch != slot.Epoch:
		g.res.Churn = append(g.res.Churn, ChurnReply{InstanceID: rs.InstanceID, Reason: ChurnEpoch, Reply: &sr})
	case g.answered[rs.InstanceID]:
		g.res.Duplicate = append(g.res.Duplicate, sr)
	default:
		g.answered[rs.InstanceID] = true
		g.res.Replies = append(g.res.Replies, sr)
	}
}

func (g *gather) result() *ScatterResult {
	for _, s := range g.order {
		if !g.answered[s.InstanceID] {
			g.res.Missing = append(g.res.Missing, MissingSlot{Slot: s, Liveness: g.liveness[s.InstanceID]})
		}
	}
	return &g.res
}

// reconcile re-reads the frozen registrations after T, in one pass: an advanced revision makes the slot churn (uncounted), an explicit deregistration keeps a reply given and excuses a silent slot, and a registration gone without a trace or behind the freeze is failed-precondition.
func (c *Client) reconcile(ctx context.Context, endpoint string, mark uint64, res *ScatterResult) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	kv, err := c.records(rctx)
	if err != nil {
		return proto.Refuse(proto.CodeFailedPrecondition, "the registry is unreadable after the scatter: %v", err)
	}
	// No spec key has an entry newer than the freeze read: every frozen
	// registration stands as frozen, which is all a full read would find.
	if seq, ok := lastSpecSeq(rctx, c.nc, kv.Bucket(), endpoint); ok && mark > 0 && seq == mark {
		res.Complete = len(res.Missing) == 0
		return nil
	}
	now, err := snapshotRegistrations(rctx, kv, c.nc, endpoint, readRevisions)
	if err != nil {
		return proto.Refuse(proto.CodeFailedPrecondition, "the registry is unreadable after the scatter: %v", err)
	}
	var bad []string
	for _, s := range res.Expected {
		r := now[s.InstanceID]
		if r == nil {
			r = &Registration{InstanceID: s.InstanceID}
		}
		switch {
		case r.SpecRevision == 0 && r.Deregistered:
			res.Missing = slices.DeleteFunc(res.Missing, func(m MissingSlot) bool {
				if m.InstanceID == s.InstanceID {
					res.Churn = append(res.Churn, ChurnReply{InstanceID: s.InstanceID, Reason: ChurnDeregistered})
					return true
				}
				return false
			})
		case r.SpecRevision == 0:
			bad = append(bad, s.InstanceID+" (registration missing)")
		case r.SpecRevision > s.RegistrationRevision:
			res.Missing = slices.DeleteFunc(res.Missing, func(m MissingSlot) bool { return m.InstanceID == s.InstanceID })
			res.Replies = slices.DeleteFunc(res.Replies, func(sr ScatterReply) bool {
				if sr.InstanceID == s.InstanceID {
					cp := sr
					res.Churn = append(res.Churn, ChurnReply{InstanceID: s.InstanceID, Reason: ChurnRegistration, Reply: &cp})
					return true
				}
				return false
			})
			if !slices.ContainsFunc(res.Churn, func(ch ChurnReply) bool { return ch.InstanceID == s.InstanceID && ch.Reason == ChurnRegistration }) {
				res.Churn = append(res.Churn, ChurnReply{InstanceID: s.InstanceID, Reason: ChurnRegistration})
			}
		case r.SpecRevision < s.RegistrationRevision:
			bad = append(bad, s.InstanceID+" (registration behind the freeze)")
		}
	}
	res.Complete = len(res.Missing) == 0 && len(bad) == 0
	if len(bad) > 0 {
		return &proto.Error{Code: proto.CodeFailedPrecondition, Message: "the registry no longer accounts for " + strings.Join(bad, ", "), Outcome: proto.Unknown}
	}
	return nil
}
