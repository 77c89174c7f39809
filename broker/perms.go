package broker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/jwt/v2"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Profile is the kind of principal a credential is minted for.
type Profile string

// The profiles a credential can be minted with.
const (
	// ProfileAgent may post only as itself within allowPublish, read only
	// within allowSubscribe, and bind only its own pre-created durables.
	ProfileAgent Profile = "agent"
	// ProfileObserver reads chat, presence and the channel registry; no DMs,
	// no posting.
	ProfileObserver Profile = "observer"
	// ProfileOperator is the local user's CLI: everything in the space's
	// account. The threat model trusts the operator.
	ProfileOperator Profile = "operator"
)

// ParseProfile accepts a profile name as typed on the command line.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case ProfileAgent, ProfileObserver, ProfileOperator:
		return p, nil
	}
	return "", fmt.Errorf("unknown profile %q: use agent, observer or operator", s)
}

// Identity is everything a credential is minted from.
type Identity struct {
	Space     string
	Principal wire.Principal
	UID       string // lifecycle uid; minted when empty
	Profile   Profile
	Role      string // anycast role, lowercase token; "" for none

	Subscribe      []string // channels joined at connect; must be covered by AllowSubscribe
	AllowSubscribe []string // read ACL; nil means "same as Subscribe"
	AllowPublish   []string // post ACL; nil means deny

	// Capabilities grant control-surface commands beyond describe and the
	// caller's own self commands: "spawn" lets it ask the manager for seats.
	Capabilities []string
}

// Capabilities an identity may be minted with.
const (
	CapSpawn = "spawn"
	CapRun   = "run"
)

// SelfCommands are the manager commands every agent may call about itself
// (the seat connector answers them); the broker vouches for the caller
// through the subject.
var SelfCommands = []string{"inbox", "set-status", "join", "leave"}

// Normalize fills defaults and checks every field, refusing (never
// rewriting) anything invalid: an ACL entry that is not a valid channel
// pattern, a subscribe entry outside the read ACL, a bad principal.
func (id *Identity) Normalize() error {
	if err := wire.ValidSpace(id.Space); err != nil {
		return err
	}
	if err := id.Principal.Valid(); err != nil {
		return err
	}
	if id.UID == "" {
		id.UID = wire.NewLifecycleUID()
	} else if !wire.ValidLifecycleUID(id.UID) {
		return fmt.Errorf("lifecycle uid %q is not 26-32 characters of [a-z0-9]", id.UID)
	}
	if id.Profile == "" {
		id.Profile = ProfileAgent
	}
	if _, err := ParseProfile(string(id.Profile)); err != nil {
		return err
	}
	if id.Role != "" {
		id.Role = strings.ToLower(id.Role)
		if !wire.ValidToken(id.Role) {
			return fmt.Errorf("role %q is not a token of [A-Za-z0-9_]", id.Role)
		}
	}
	for _, list := range []struct {
		name string
		l    []string
	}{{"subscribe", id.Subscribe}, {"allowSubscribe", id.AllowSubscribe}, {"allowPublish", id.AllowPublish}} {
		for _, ch := range list.l {
			if err := wire.ValidateChannel(ch); err != nil {
				return fmt.Errorf("%s: %w", list.name, err)
			}
		}
	}
	for _, c := range id.Capabilities {
		switch {
		case c == CapSpawn, c == CapRun, strings.HasPrefix(c, "role:") && wire.ValidToken(strings.TrimPrefix(c, "role:")):
		case c == "admin":
			return fmt.Errorf("capability admin is never grantable")
		default:
			return fmt.Errorf("unknown capability %q: use spawn, run or role:<name>", c)
		}
	}
	if id.AllowSubscribe == nil {
		id.AllowSubscribe = append([]string(nil), id.Subscribe...)
	}
	for _, ch := range id.Subscribe {
		if !wire.Covered(id.AllowSubscribe, ch) {
			return fmt.Errorf("subscribe: %q is not within allowSubscribe %v", ch, id.AllowSubscribe)
		}
	}
	return nil
}

// ConnID is the connection id that scopes this identity's reply inbox:
// `_INBOX_<ConnID>.>` is the only inbox its credential may subscribe to.
func (id Identity) ConnID() string {
	return id.Principal.Dash() + "-" + id.UID
}

// InboxPrefix is the nats.CustomInboxPrefix a client of this identity must use.
func (id Identity) InboxPrefix() string { return "_INBOX_" + id.ConnID() }

// Permissions builds the broker-enforced permissions of the identity. The
// forge lock is here: every publish row that carries a sender pins it to the
// identity's own owner and actor tokens.
func (id Identity) Permissions() jwt.Permissions {
	var perm jwt.Permissions
	if id.Profile == ProfileOperator {
		perm.Pub.Allow.Add(">")
		perm.Sub.Allow.Add(">")
		return perm
	}
	s, me := id.Space, id.Principal
	root := wire.Root(s)
	pub := map[string]bool{}
	sub := map[string]bool{id.InboxPrefix() + ".>": true}

	// Presence, the channel registry and the identity records: world-readable through KV reads.
	for _, bucket := range []string{wire.PresenceBucket(s), wire.ChannelsBucket(s), wire.RecordsBucket(s)} {
		for _, row := range kvReadRows(bucket) {
			pub[row] = true
		}
	}

	switch id.Profile {
	case ProfileObserver:
		sub[root+".chat.>"] = true
		for _, row := range streamReadRows(wire.ChatStream(s)) {
			pub[row] = true
		}
	case ProfileAgent:
		for _, ch := range id.AllowPublish {
			pub[root+".chat."+me.Owner+"."+me.Actor+"."+ch] = true
		}
		pub[root+".inst.*.*."+me.Owner+"."+me.Actor] = true
		pub[root+".svc.*."+me.Owner+"."+me.Actor] = true
		pub["$KV."+wire.PresenceBucket(s)+"."+me.Owner+"."+me.Actor] = true
		// The delivery service: ask as yourself, hear answers under your own request.
		pub[wire.DeliveryCtlSubject(s, me)] = true
		sub[wire.DeliveryReplyPrefix(s, me)+">"] = true
		for _, ch := range id.AllowSubscribe {
			sub[wire.ChatFilter(s, ch)] = true
		}
		for _, row := range bindRows(wire.DMStream(s), wire.DMConsumer(me, id.UID)) {
			pub[row] = true
		}
		for _, row := range bindRows(wire.DlvStream(s), wire.DlvConsumer(me, id.UID)) {
			pub[row] = true
		}
		if id.Role != "" {
			for _, row := range bindRows(wire.TaskStream(s), wire.SvcConsumer(id.Role)) {
				pub[row] = true
			}
		}
		id.controlRows(pub, sub)
	}
	perm.Pub.Allow.Add(sorted(pub)...)
	perm.Sub.Allow.Add(sorted(sub)...)
	return perm
}

// bindRows are the three rows that let a client bind and drain one
// pre-created durable without any right to create, delete or inspect
// others (DESIGN: agents get no $JS.API.>).
func bindRows(stream, durable string) []string {
	return []string{
		"$JS.API.CONSUMER.INFO." + stream + "." + durable,
		"$JS.API.CONSUMER.MSG.NEXT." + stream + "." + durable,
		"$JS.ACK." + stream + "." + durable + ".>",
	}
}

// kvReadRows let a client open a bucket, get keys and watch it.
func kvReadRows(bucket string) []string {
	return streamReadRows("KV_" + bucket)
}

// streamReadRows let a client read a stream through its own ordered
// consumers: info, consumer create (both subject forms), direct get and
// flow-control replies.
func streamReadRows(stream string) []string {
	return []string{
		"$JS.API.STREAM.INFO." + stream,
		"$JS.API.CONSUMER.CREATE." + stream,
		"$JS.API.CONSUMER.CREATE." + stream + ".>",
		"$JS.API.CONSUMER.DELETE." + stream + ".*",
		"$JS.API.DIRECT.GET." + stream,
		"$JS.API.DIRECT.GET." + stream + ".>",
		"$JS.API.STREAM.MSG.GET." + stream,
		"$JS.FC." + stream + ".>",
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// controlRows are an agent's control-surface grants, one request row per
// command it may call, each pinned to its own caller triple: describe on
// every endpoint and rail, the manager's self commands and goal results,
// and spawn only with that capability. Replies come only on its own
// reply rail.
func (id Identity) controlRows(pub, sub map[string]bool) {
	root := wire.Root(id.Space)
	caller := id.Principal.Owner + "." + id.Principal.Actor + "." + id.UID
	for _, rail := range []string{"one.*", "all.*", "inst.*.*"} {
		pub[root+".ep."+rail+".describe."+caller+".*"] = true
	}
	for _, cmd := range SelfCommands {
		pub[root+".ep.one.manager."+cmd+".self."+caller+".*"] = true
		pub[root+".ep.inst.manager.*."+cmd+".self."+caller+".*"] = true
	}
	pub[root+".ep.one.manager.goal-result."+caller+".*"] = true
	pub[root+".ep.inst.manager.*.goal-result."+caller+".*"] = true
	for _, c := range id.Capabilities {
		if c == CapSpawn {
			pub[root+".ep.one.manager.spawn."+caller+".*"] = true
			pub[root+".ep.inst.manager.*.spawn."+caller+".*"] = true
		}
	}
	// Contracts are read by sequence through the stream API, never listed.
	pub["$JS.API.STREAM.MSG.GET."+wire.EPCStream(id.Space)] = true
	sub[root+".ep.reply.*.*.*."+caller+".*"] = true
	sub[root+".epe.manager.*.*.goal."+caller+".>"] = true
}
