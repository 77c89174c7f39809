package wire

import "strings"

// subjectPrefix is token 0 of every cotal subject.
const subjectPrefix = "cotal"

// Root is the per-space subject prefix every other subject hangs off.
func Root(space string) string { return subjectPrefix + "." + SanitizeToken(space) }

// roleToken is the anycast role slot: lowercased so Reviewer and reviewer share one queue.
func roleToken(role string) string { return SanitizeToken(strings.ToLower(role)) }

// ChatSubject is where a channel post is published; the sender tokens sit where a publish grant can pin them.
func ChatSubject(space string, from Principal, channel string) (string, error) {
	if err := from.Valid(); err != nil {
		return "", err
	}
	if err := ValidateConcreteChannel(channel); err != nil {
		return "", err
	}
	return Root(space) + ".chat." + from.Owner + "." + from.Actor + "." + channel, nil
}

// ChatFilter subscribes to a channel or channel pattern from any sender.
func ChatFilter(space, channelPattern string) string {
	return Root(space) + ".chat.*.*." + channelPattern
}

// DMSubject addresses one principal; the sender is the trailing pair so a grant can pin it.
func DMSubject(space string, to, from Principal) string {
	return Root(space) + ".inst." + to.Owner + "." + to.Actor + "." + from.Owner + "." + from.Actor
}

// DMFilter is everything addressed to one principal, from any sender.
func DMFilter(space string, to Principal) string {
	return Root(space) + ".inst." + to.Owner + "." + to.Actor + ".>"
}

// SvcSubject addresses whichever holder of a role takes the work first.
func SvcSubject(space, role string, from Principal) string {
	return Root(space) + ".svc." + roleToken(role) + "." + from.Owner + "." + from.Actor
}

// SentDMFilter is every DM one principal sends, to anyone.
func SentDMFilter(space string, from Principal) string {
	return Root(space) + ".inst.*.*." + from.Owner + "." + from.Actor
}

// SentTaskFilter is every task one principal sends, to any role.
func SentTaskFilter(space string, from Principal) string {
	return Root(space) + ".svc.*." + from.Owner + "." + from.Actor
}

// SvcFilter is the shared work queue of a role; a literal * role is kept for allow-rules.
func SvcFilter(space, role string) string {
	r := "*"
	if strings.TrimSpace(role) != "*" {
		r = roleToken(role)
	}
	return Root(space) + ".svc." + r + ".>"
}

// InboxSubject is the delivery daemon's backstop inbox for one member lifecycle.
func InboxSubject(space string, p Principal, uid string) string {
	return Root(space) + ".dinbox." + p.Owner + "." + p.Actor + "." + uid
}

// DlvSubject is where the delivery daemon stores copies for one member lifecycle to read.
func DlvSubject(space string, p Principal, uid string) string {
	return Root(space) + ".dlv." + p.Owner + "." + p.Actor + "." + uid
}

// Kind is how a message was addressed, as decided by the delivering subject and never by the payload.
type Kind string

// The three delivery modes of spec §3.
const (
	KindChannel Kind = "channel" // chat subject, multicast
	KindDM      Kind = "dm"      // inst subject, unicast
	KindAnycast Kind = "anycast" // svc subject, one holder of a role
)

// Subject is a delivering subject split into its parts; only Sender is authenticated, and only once Surfaceable passes.
type Subject struct {
	Space     string
	Kind      Kind
	Sender    Principal
	Channel   string    // KindChannel only; may be dotted
	Recipient Principal // KindDM only
	Role      string    // KindAnycast only
}

// ParseSubject splits a delivering subject so the sender can be checked against from.id; it does not judge the owner, Surfaceable does.
func ParseSubject(subject string) (Subject, error) {
	t := strings.Split(subject, ".")
	if len(t) < 3 || t[0] != subjectPrefix {
		return Subject{}, refuse(ErrNoSender, "subject %q is not a cotal subject", subject)
	}
	for _, tok := range t {
		if tok == "" {
			return Subject{}, refuse(ErrNoSender, "subject %q has an empty token", subject)
		}
	}
	s := Subject{Space: t[1]}
	switch {
	case t[2] == "chat" && len(t) >= 6:
		s.Kind = KindChannel
		s.Sender = Principal{Owner: t[3], Actor: t[4]}
		s.Channel = strings.Join(t[5:], ".")
	case t[2] == "inst" && len(t) == 7:
		s.Kind = KindDM
		s.Recipient = Principal{Owner: t[3], Actor: t[4]}
		s.Sender = Principal{Owner: t[5], Actor: t[6]}
	case t[2] == "svc" && len(t) == 6:
		s.Kind = KindAnycast
		s.Role = t[3]
		s.Sender = Principal{Owner: t[4], Actor: t[5]}
	default:
		return Subject{}, refuse(ErrNoSender, "subject %q is not a chat (6+ tokens), inst (7) or svc (6) subject", subject)
	}
	return s, nil
}

// Surfaceable refuses a sender that is not a real principal, such as an nkey in the owner slot, before anything reaches the application.
func (s Subject) Surfaceable() error {
	o := s.Sender.Owner
	switch {
	case IsNkeyShaped(o):
		return refuse(ErrUnsurfaceable, "sender owner %q is a connection nkey, not a principal owner", o)
	case !ValidOwner(o):
		return refuse(ErrUnsurfaceable, "sender owner %q is neither local nor a u_ owner token", o)
	case !ValidToken(s.Sender.Actor):
		return refuse(ErrUnsurfaceable, "sender actor %q is not one token of A-Z a-z 0-9 _", s.Sender.Actor)
	}
	return nil
}

// String is the delivering subject the parts were parsed from.
func (s Subject) String() string {
	switch s.Kind {
	case KindChannel:
		return Root(s.Space) + ".chat." + s.Sender.Owner + "." + s.Sender.Actor + "." + s.Channel
	case KindDM:
		return DMSubject(s.Space, s.Recipient, s.Sender)
	case KindAnycast:
		return Root(s.Space) + ".svc." + s.Role + "." + s.Sender.Owner + "." + s.Sender.Actor
	}
	return ""
}

// storedToken is the kind token of the stored notices.
const storedToken = "stored"

// StoredFilter is every stored notice of one sender: the space's CHAT, DM
// and TASK streams acknowledge nothing to a publisher (a PubAck goes to
// whatever reply subject the publisher names, so it could be aimed at any
// key or stream of the space) and instead republish the headers of each
// message they store here, the sender's tokens first, so that only the
// sender may subscribe.
func StoredFilter(space string, sender Principal) string {
	return Root(space) + "." + storedToken + "." + sender.Owner + "." + sender.Actor + ".>"
}

// StoredRepublish is the republish rule of a stream agents publish to: the
// source pattern of its subjects and the stored-notice subject each maps
// to, with the sender's owner and actor moved to the front. ok is false for
// a stream that takes no agent's publishes.
func StoredRepublish(space, stream string) (source, destination string, ok bool) {
	root := Root(space)
	to := root + "." + storedToken + "."
	switch stream {
	case ChatStream(space): // chat.<owner>.<actor>.<channel...>
		return root + ".chat.*.*.>", to + "{{wildcard(1)}}.{{wildcard(2)}}.chat.>", true
	case DMStream(space): // inst.<to owner>.<to actor>.<owner>.<actor>
		return root + ".inst.*.*.*.*", to + "{{wildcard(3)}}.{{wildcard(4)}}.inst.{{wildcard(1)}}.{{wildcard(2)}}", true
	case TaskStream(space): // svc.<role>.<owner>.<actor>
		return root + ".svc.*.*.*", to + "{{wildcard(2)}}.{{wildcard(3)}}.svc.{{wildcard(1)}}", true
	}
	return "", "", false
}
