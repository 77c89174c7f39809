package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cotal-go/cotal/mesh"
	"github.com/cotal-go/cotal/mesh/ep"
	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// ServiceActor is the actor of the service's own identity on the control surface.
const ServiceActor = "cotal_delivery"

// callerInfo is a caller as the space's records know it.
type callerInfo struct {
	p       wire.Principal
	uid     string
	profile wire.Profile
	role    string
	hosted  string   // the manager instance whose seat connector holds it, "" for none
	read    []string // read ACL
}

// commands are the endpoint's commands, each served in self mode only.
func (s *Service) commands() []ep.Command {
	self := []proto.Mode{proto.ModeSelf}
	cmd := func(name string, in, out any, h func(context.Context, *ep.Call, callerInfo) (any, *proto.Error)) ep.Command {
		return ep.Command{Name: name, Modes: self, Capability: "self", Input: proto.SchemaFor(in), Output: proto.SchemaFor(out),
			Handler: func(ctx context.Context, c *ep.Call) (any, *proto.Error) {
				ci, e := s.caller(ctx, c.Caller())
				if e != nil {
					return nil, e
				}
				return h(ctx, c, ci)
			}}
	}
	return []ep.Command{
		cmd(wire.DeliveryJoin, mesh.JoinArgs{}, mesh.JoinReply{}, s.epJoin),
		cmd(wire.DeliveryLeave, mesh.LeaveArgs{}, mesh.LeaveReply{}, s.epLeave),
		cmd(wire.DeliveryMemberships, struct{}{}, mesh.MembershipsReply{}, s.epMemberships),
		cmd(wire.DeliveryHistory, mesh.HistoryArgs{}, mesh.HistoryReply{}, s.epHistory),
		cmd(wire.DeliveryRoster, struct{}{}, mesh.RosterReply{}, s.epRoster),
		cmd(wire.DeliveryChannels, mesh.ChannelsArgs{}, mesh.ChannelsReply{}, s.epChannels),
		cmd(wire.DeliveryLookup, mesh.LookupArgs{}, mesh.LookupReply{}, s.epLookup),
		cmd(wire.DeliveryTake, mesh.TakeArgs{}, mesh.TakeReply{}, s.epTake),
		cmd(wire.DeliverySettle, mesh.SettleArgs{}, mesh.SettleReply{}, s.epSettle),
		cmd(wire.DeliveryPresence, mesh.PresenceArgs{}, mesh.PresenceReply{}, s.epPresence),
		cmd(wire.DeliveryMentions, mesh.MentionsArgs{}, mesh.MentionsReply{}, s.epMentions),
		cmd(wire.DeliveryStored, mesh.StoredArgs{}, mesh.StoredReply{}, s.epStored),
	}
}

// epStored says whether the newest message on one of the caller's own
// subjects (its sender tokens are the caller's) carries an id.
func (s *Service) epStored(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.StoredArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	sub, err := wire.ParseSubject(a.Subject)
	if err != nil || sub.Space != wire.SanitizeToken(s.space) || sub.Sender != ci.p {
		return nil, proto.Refuse(proto.CodePermissionDenied, "%s may ask only about its own chat, inst and svc subjects", ci.p)
	}
	stream, seq, ok := mesh.LastStoredID(ctx, s.js, s.space, a.Subject, a.ID)
	return mesh.StoredReply{Found: ok, Stream: stream, Seq: seq}, nil
}

// MaxCallsPerCaller is how many delivery calls one principal may have in
// flight at once (an agent long-polls one take at a time): one identity
// cannot take the endpoint's 4096 slots from the others.
const MaxCallsPerCaller = 64

// startEndpoint serves the delivery endpoint; it runs while the lease is held.
func (s *Service) startEndpoint(ctx context.Context) error {
	srv, err := ep.NewServer(s.nc, ep.ServerOptions{
		Space: s.space, Endpoint: wire.DeliveryEndpoint, InstanceID: s.iid,
		Identity:     ep.Identity{Principal: wire.Principal{Owner: "local", Actor: ServiceActor}, UID: s.incarn},
		EndpointType: "ai.cotal.delivery", MaxInFlight: 4096, MaxPerCaller: MaxCallsPerCaller, Logf: s.opts.Logf,
	})
	if err != nil {
		return err
	}
	for _, c := range s.commands() {
		if err := srv.Register(c); err != nil {
			return err
		}
	}
	if err := srv.Start(ctx); err != nil {
		return fmt.Errorf("serving the delivery endpoint: %w", err)
	}
	s.mu.Lock()
	s.endpoint = srv
	s.mu.Unlock()
	return nil
}

// caller admits only a lifecycle the space knows and has not ended: the
// records' identity row names this very lifecycle uid. The broker vouches
// for the triple through the subject; this check refuses a triple that no
// credential was ever minted for, or one that was replaced or retired.
func (s *Service) caller(ctx context.Context, c proto.Caller) (callerInfo, *proto.Error) {
	p := c.Principal()
	rec, err := s.identity(ctx, p)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return callerInfo{}, proto.Refuse(proto.CodePermissionDenied, "%s is not an identity of space %s", p, s.space)
	}
	if err != nil {
		return callerInfo{}, proto.Refuse(proto.CodeUnavailable, "reading the identity of %s: %v", p, err)
	}
	if !rec.Current(c.UID) {
		return callerInfo{}, proto.Refuse(proto.CodePermissionDenied, "lifecycle %s of %s has ended or was never minted", c.UID, p)
	}
	ci := callerInfo{p: p, uid: c.UID, profile: rec.Profile, role: rec.Role, hosted: rec.HostedBy}
	switch ci.profile {
	case wire.ProfileObserver, wire.ProfileOperator:
		ci.read = []string{">"}
	default:
		row, found, err := s.aclRow(ctx, p, c.UID)
		if err != nil {
			return callerInfo{}, proto.Refuse(proto.CodeUnavailable, "reading the read ACL of %s: %v", p, err)
		}
		if !found || row.Ended() || s.life.isEnded(p, c.UID) {
			return callerInfo{}, proto.Refuse(proto.CodePermissionDenied, "lifecycle %s of %s has ended or has no read ACL on record", c.UID, p)
		}
		ci.read = row.AllowSubscribe
	}
	return ci, nil
}

// identity reads a principal's identity record.
func (s *Service) identity(ctx context.Context, p wire.Principal) (wire.IdentityRecord, error) {
	var rec wire.IdentityRecord
	ent, err := s.recordsKV.Get(ctx, wire.IdentityKey(p))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(ent.Value(), &rec); err != nil || rec.ID != p.ID() {
		return rec, fmt.Errorf("identity record of %s is not valid", p)
	}
	return rec, nil
}

func (s *Service) epJoin(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.JoinArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if ci.profile == wire.ProfileObserver {
		return mesh.JoinReply{Reason: "an observer follows channels live only"}, nil
	}
	s.ctlMu.Lock()
	rep := s.durableJoin(ctx, ci.p, ci.uid, a.Channel)
	s.ctlMu.Unlock()
	if rep.Error != nil {
		return nil, rep.Error
	}
	return mesh.JoinReply{Durable: rep.Durable, Generation: rep.Generation, Frontier: rep.Frontier, Existing: rep.Existing, Reason: rep.Reason}, nil
}

func (s *Service) epLeave(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.LeaveArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	s.ctlMu.Lock()
	rep := s.durableLeave(ctx, ci.p, ci.uid, a.Channel, a.Generation)
	s.ctlMu.Unlock()
	if rep.Error != nil {
		return nil, rep.Error
	}
	return mesh.LeaveReply{AlreadyLeft: rep.AlreadyLeft, Generation: rep.Generation}, nil
}

func (s *Service) epMemberships(_ context.Context, _ *ep.Call, ci callerInfo) (any, *proto.Error) {
	out := mesh.MembershipsReply{Memberships: []mesh.MembershipInfo{}}
	for _, m := range s.store.of(ci.p, ci.uid) {
		if !m.Left() {
			out.Memberships = append(out.Memberships, mesh.MembershipInfo{Channel: m.Channel, Generation: m.Generation, Activated: m.Activated, JoinCursor: m.JoinCursor})
		}
	}
	return out, nil
}

func (s *Service) epHistory(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.HistoryArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if err := wire.ValidateConcreteChannel(a.Channel); err != nil {
		return nil, proto.Refuse(proto.CodeBadRequest, "%v", err)
	}
	if !wire.Covered(ci.read, a.Channel) {
		return nil, proto.Refuse(proto.CodePermissionDenied, "channel %q is not within your read ACL [%s]", a.Channel, strings.Join(ci.read, ", "))
	}
	rep := s.readHistory(ctx, a)
	if rep.Error != nil {
		return nil, rep.Error
	}
	items := rep.Items
	if items == nil {
		items = []mesh.HistoryItem{}
	}
	return mesh.HistoryReply{Items: items, Complete: rep.Complete, Frontier: rep.Frontier}, nil
}

func (s *Service) epRoster(context.Context, *ep.Call, callerInfo) (any, *proto.Error) {
	v := s.roster.View()
	out := mesh.RosterReply{Peers: []mesh.RosterPeer{}, View: string(v.State), StaleSinceMs: msOf(v.StaleSince), LastDeliveryMs: msOf(v.LastDelivery), NowMs: time.Now().UnixMilli()}
	for _, p := range s.roster.Roster() {
		rec, _ := json.Marshal(p.Record)
		out.Peers = append(out.Peers, mesh.RosterPeer{
			ID: p.ID, Name: p.Name, Role: p.Role, Record: rec, Status: string(p.Status), Offline: p.Offline,
			OfflineReason: p.OfflineReason, LastHeardMs: msOf(p.LastHeard), HeartbeatMs: msOf(p.HeartbeatAt),
			StatusSinceMs: msOf(p.StatusSince), Known: p.Known,
		})
	}
	return out, nil
}

func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func (s *Service) epChannels(ctx context.Context, c *ep.Call, _ callerInfo) (any, *proto.Error) {
	var a mesh.ChannelsArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	def, err := s.reg.Defaults(ctx)
	if err != nil {
		return nil, proto.Failed(proto.CodeUnavailable, "reading the channel registry: %v", err)
	}
	out := mesh.ChannelsReply{Defaults: def, Channels: map[string]mesh.ChannelConfig{}}
	if a.Channel != "" {
		ch, err := s.reg.Get(ctx, a.Channel)
		if err != nil {
			return nil, proto.Refuse(proto.CodeBadRequest, "%v", err)
		}
		if ch != nil {
			out.Channels[a.Channel] = *ch
		}
		return out, nil
	}
	_, all, err := s.reg.List(ctx)
	if err != nil {
		return nil, proto.Failed(proto.CodeUnavailable, "listing the channel registry: %v", err)
	}
	out.Channels = all
	return out, nil
}

// epLookup answers names from the identity records: an id (owner.actor),
// or a name, which on a workstation is the actor of owner local.
func (s *Service) epLookup(ctx context.Context, c *ep.Call, _ callerInfo) (any, *proto.Error) {
	var a mesh.LookupArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	out := mesh.LookupReply{Identities: []mesh.IdentityInfo{}}
	for _, q := range a.Names {
		info := mesh.IdentityInfo{Query: q}
		var cands []wire.Principal
		if p, err := wire.ParsePrincipal(q); err == nil {
			cands = append(cands, p)
		} else if wire.ValidToken(q) {
			cands = append(cands, wire.Principal{Owner: "local", Actor: q}, wire.Principal{Owner: "local", Actor: strings.ToLower(q)})
		}
		for _, p := range cands {
			rec, err := s.identity(ctx, p)
			if err != nil || rec.Retired {
				continue
			}
			info.Found, info.ID, info.Name, info.Role, info.Profile = true, rec.ID, rec.Name, rec.Role, rec.Profile
			if info.Name == "" {
				info.Name = p.Actor
			}
			break
		}
		out.Identities = append(out.Identities, info)
	}
	return out, nil
}

func (s *Service) epTake(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.TakeArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	h, e := s.host(ctx, ci)
	if e != nil {
		return nil, e
	}
	items, rejected, err := h.take(ctx, a.Max, time.Duration(a.WaitMs)*time.Millisecond, a.Session)
	if err != nil {
		return nil, proto.Failed(proto.CodeUnavailable, "reading stored messages of %s: %v", ci.p, err)
	}
	return mesh.TakeReply{Items: items, Rejected: rejected}, nil
}

func (s *Service) epSettle(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.SettleArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	h, e := s.host(ctx, ci)
	if e != nil {
		return nil, e
	}
	return mesh.SettleReply{Settled: h.settle(a.Keys, a.Release)}, nil
}

func (s *Service) epPresence(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.PresenceArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	if ci.profile == wire.ProfileObserver {
		return nil, proto.Refuse(proto.CodePermissionDenied, "an observer is not on the roster")
	}
	h, e := s.host(ctx, ci)
	if e != nil {
		return nil, e
	}
	rec, err := h.presence(ctx, a)
	if err != nil {
		return nil, proto.Failed(proto.CodeUnavailable, "writing the presence of %s: %v", ci.p, err)
	}
	return mesh.PresenceReply{Status: string(rec.Status), Activity: rec.Activity, Attention: string(rec.Attention)}, nil
}

// epMentions says which mentions of a post by the caller get a stored
// copy, as the fan-out will decide it.
func (s *Service) epMentions(ctx context.Context, c *ep.Call, ci callerInfo) (any, *proto.Error) {
	var a mesh.MentionsArgs
	if e := c.Decode(&a); e != nil {
		return nil, e
	}
	ms, err := s.ResolveMentions(ctx, ci.p, a.Channel, a.Names)
	if err != nil {
		return nil, proto.Refuse(proto.CodeBadRequest, "%v", err)
	}
	out := mesh.MentionsReply{Mentions: make([]mesh.MentionCopy, 0, len(ms))}
	for _, m := range ms {
		out.Mentions = append(out.Mentions, mesh.MentionCopy{Name: m.Name, Stored: m.Stored})
	}
	return out, nil
}

// WarmSchemas compiles the delivery endpoint's contracts ahead of its
// start (ep.WarmSchemas).
func WarmSchemas() { ep.WarmSchemas((&Service{}).commands()) }
