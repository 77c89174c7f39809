package broker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/jwt/v2"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Identity is everything a credential is minted from.
type Identity struct {
	Space     string
	Principal wire.Principal
	UID       string // lifecycle uid; minted when empty
	Profile   wire.Profile
	Role      string // anycast role, lowercase token; "" for none

	Subscribe      []string // channels joined at connect; must be covered by AllowSubscribe
	AllowSubscribe wire.ACL // read ACL; nil reads nothing (wire.SameAsSubscribe follows Subscribe)
	AllowPublish   wire.ACL // post ACL; nil posts nothing

	// Capabilities grant control-surface commands beyond describe and the
	// caller's own self commands: "spawn" lets it ask the manager for seats.
	Capabilities []string

	// HostedBy names the manager instance whose seat connector holds this
	// identity's inbox and presence; empty for an identity outside a seat.
	HostedBy string `json:",omitempty"`
}

// Capabilities an identity may be minted with.
const (
	CapSpawn = "spawn"
	CapRun   = "run"
)

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
		id.Profile = wire.ProfileAgent
	}
	if _, err := wire.ParseProfile(string(id.Profile)); err != nil {
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
	for _, ch := range id.Subscribe {
		if !id.AllowSubscribe.Covers(ch) {
			return fmt.Errorf("subscribe: %q is not within allowSubscribe %v", ch, id.AllowSubscribe)
		}
	}
	return nil
}

// InboxPrefix is the nats.CustomInboxPrefix a client of this identity must
// use: `<prefix>.>` is the only inbox its credential may subscribe to.
func (id Identity) InboxPrefix() string { return wire.ReplyInbox(id.Principal, id.UID) }

// Permissions builds the broker-enforced permissions of the identity. The
// forge lock is here: every publish row that carries a sender pins it to the
// identity's own owner and actor tokens.
//
// An agent or observer gets no $JS.API or $KV row at all: JetStream answers
// on whatever reply subject a requester names, from inside the account and
// past the requester's own publish rights, so any such right would let it
// publish as anyone (DESIGN, Known pitfalls). What it reads from storage it
// reads through the delivery endpoint's self-mode commands; its publishes
// to chat, inst and svc subjects are stored by JetStream, which answers
// none of them and tells it of each stored one on its stored-notice
// subject instead.
func (id Identity) Permissions() jwt.Permissions {
	var perm jwt.Permissions
	if id.Profile == wire.ProfileOperator {
		perm.Pub.Allow.Add(">")
		perm.Sub.Allow.Add(">")
		return perm
	}
	s, me := id.Space, id.Principal
	root := wire.Root(s)
	pub := map[string]bool{}
	sub := map[string]bool{id.InboxPrefix() + ".>": true}

	switch id.Profile {
	case wire.ProfileObserver:
		sub[root+".chat.>"] = true
		id.deliveryRows(pub, wire.ObserverDeliveryCommands)
	case wire.ProfileAgent:
		for _, ch := range id.AllowPublish {
			pub[root+".chat."+me.Owner+"."+me.Actor+"."+ch] = true
		}
		pub[root+".inst.*.*."+me.Owner+"."+me.Actor] = true
		pub[root+".svc.*."+me.Owner+"."+me.Actor] = true
		for _, ch := range id.AllowSubscribe {
			sub[wire.ChatFilter(s, ch)] = true
		}
		// The receipts of its own messages, which only trusted
		// connectors publish.
		sub[wire.ReceiptFilter(s, me)+".*"] = true
		// The stored notices of its own publishes: the streams it
		// publishes to acknowledge nothing and republish these instead.
		sub[wire.StoredFilter(s, me)] = true
		id.deliveryRows(pub, wire.DeliveryCommands)
		id.controlRows(pub, sub)
	}
	id.describeRows(pub, sub)
	perm.Pub.Allow.Add(sorted(pub)...)
	perm.Sub.Allow.Add(sorted(sub)...)
	return perm
}

// caller is the identity's caller triple as the control-surface subjects
// carry it.
func (id Identity) caller() string {
	return id.Principal.Owner + "." + id.Principal.Actor + "." + id.UID
}

// describeRows let the identity discover any endpoint and hear answers on
// its own reply rail only.
func (id Identity) describeRows(pub, sub map[string]bool) {
	root := wire.Root(id.Space)
	for _, rail := range []string{"one.*", "all.*", "inst.*.*"} {
		pub[root+".ep."+rail+".describe."+id.caller()+".*"] = true
	}
	sub[root+".ep.reply.*.*.*."+id.caller()+".*"] = true
}

// deliveryRows are one self-mode request row per delivery command, pinned
// to the identity's own caller triple, on the one and inst rails.
func (id Identity) deliveryRows(pub map[string]bool, commands []string) {
	root := wire.Root(id.Space)
	for _, cmd := range commands {
		pub[root+".ep.one."+wire.DeliveryEndpoint+"."+cmd+".self."+id.caller()+".*"] = true
		pub[root+".ep.inst."+wire.DeliveryEndpoint+".*."+cmd+".self."+id.caller()+".*"] = true
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

// controlRows are an agent's manager grants, one request row per command
// it may call, each pinned to its own caller triple: the manager's self
// commands and goal results, and spawn only with that capability.
func (id Identity) controlRows(pub, sub map[string]bool) {
	root := wire.Root(id.Space)
	caller := id.caller()
	for _, cmd := range wire.ManagerSelfCommands {
		pub[root+".ep.one.manager."+cmd+".self."+caller+".*"] = true
		pub[root+".ep.inst.manager.*."+cmd+".self."+caller+".*"] = true
	}
	pub[root+".ep.one.manager.goal-result."+caller+".*"] = true
	pub[root+".ep.inst.manager.*.goal-result."+caller+".*"] = true
	for _, c := range id.Capabilities {
		if c != CapSpawn {
			continue
		}
		for _, cmd := range wire.ManagerSpawnCommands {
			pub[root+".ep.one.manager."+cmd+"."+caller+".*"] = true
			pub[root+".ep.inst.manager.*."+cmd+"."+caller+".*"] = true
		}
		// Attach sessions it is granted on the seats it spawned: a
		// session's subjects carry its holder, so these rows reach only
		// sessions granted to this very lifecycle.
		pub[root+".eps.*.*.*."+caller+".in"] = true
		sub[root+".eps.*.*.*."+caller+".out"] = true
		// Owner mode on the seats it spawned (the manager checks which):
		// the target owner is its own owner, never another's.
		for _, cmd := range wire.ManagerOwnerCommands {
			pub[root+".ep.one.manager."+cmd+".owner."+id.Principal.Owner+"."+caller+".*"] = true
			pub[root+".ep.inst.manager.*."+cmd+".owner."+id.Principal.Owner+"."+caller+".*"] = true
		}
	}
	sub[root+".epe.manager.*.*.goal."+caller+".>"] = true
}
