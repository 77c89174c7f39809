package proto

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// Rail is how a request routes; the verb (call or cast) rides the envelope, never the subject.
type Rail string

// The three request rails of spec §2.
const (
	RailOne  Rail = "one"  // queue anycast to one instance (queue group = endpoint token)
	RailAll  Rail = "all"  // scatter to every instance
	RailInst Rail = "inst" // one instance by its instanceId
)

// Mode is the authorization mode word that follows <command>; it decides the target arity.
type Mode string

// The authorization modes; ModeNone is the untargeted form with no mode word at all.
const (
	ModeNone   Mode = ""       // untargeted: no mode word, no target tokens
	ModeSelf   Mode = "self"   // the caller is the target: no target tokens
	ModeOwner  Mode = "owner"  // <tOwner>
	ModeAny    Mode = "any"    // <tOwner>
	ModeChild  Mode = "child"  // <tOwner>
	ModeLedger Mode = "ledger" // <tOwner>
	ModeHandle Mode = "handle" // <tOwner>.<tActor>.<tUid>
	ModeExact  Mode = "exact"  // <tOwner>.<tActor>.<tUid>
)

// targetArity is how many target tokens follow each mode word; a word missing here is not a mode.
var targetArity = map[Mode]int{
	ModeSelf: 0, ModeOwner: 1, ModeAny: 1, ModeChild: 1, ModeLedger: 1, ModeHandle: 3, ModeExact: 3,
}

// IsModeWord reports whether s is one of the reserved mode words; owners are local or u_…, so no owner is ever one.
func IsModeWord(s string) bool {
	_, ok := targetArity[Mode(s)]
	return ok
}

// Targeted reports whether the mode names a target other than the caller, so the body must carry a target block.
func (m Mode) Targeted() bool { return m != ModeNone && m != ModeSelf && IsModeWord(string(m)) }

// Caller is the forge-locked caller triple every request carries: principal plus lifecycle UID.
type Caller struct {
	Owner string
	Actor string
	UID   string
}

// ID is the caller's dot-form principal, the value from.id must equal.
func (c Caller) ID() string { return c.Owner + "." + c.Actor }

// Principal is the caller without its lifecycle UID.
func (c Caller) Principal() wire.Principal { return wire.Principal{Owner: c.Owner, Actor: c.Actor} }

// Valid refuses a caller triple that could not fill its subject tokens.
func (c Caller) Valid() error {
	_, err := callerTokens(c)
	return err
}

func callerTokens(c Caller) ([]string, error) {
	if _, err := ownerTok("caller owner", c.Owner); err != nil {
		return nil, err
	}
	if _, err := actorTok("caller actor", c.Actor); err != nil {
		return nil, err
	}
	if _, err := uidTok("caller lifecycle uid", c.UID); err != nil {
		return nil, err
	}
	return []string{c.Owner, c.Actor, c.UID}, nil
}

// Target is the subject-carried target: Owner alone for owner/any/child/ledger, the full triple for handle/exact, nothing otherwise.
type Target struct {
	Owner string
	Actor string
	UID   string
}

// Request is one request subject split into its parts; Endpoint is held in wire token form.
type Request struct {
	Space      string
	Rail       Rail
	Endpoint   string // wire token (ai_cotal_manager); builders also take the dotted name
	InstanceID string // RailInst only
	Command    string
	Mode       Mode
	Target     Target // see Target for which fields each mode carries
	Caller     Caller
	Nonce      string
}

// Reply is one reply subject split into its parts; the responder's identity and epoch come from here, never from the body.
type Reply struct {
	Space      string
	Endpoint   string // wire token
	InstanceID string
	Epoch      uint64
	Caller     Caller
	Nonce      string
}

// tokens gathers subject tokens and keeps the first refusal.
type tokens struct {
	parts []string
	err   error
}

// subjectTokens is room for the longest ep subject (an inst-rail handle- or exact-mode request), so building one grows no slice.
const subjectTokens = 16

func newTokens(space string, plane ...string) *tokens {
	parts := make([]string, 0, subjectTokens)
	return &tokens{parts: append(append(parts, wire.Root(space)), plane...)}
}

func (t *tokens) lit(s ...string) {
	if t.err == nil {
		t.parts = append(t.parts, s...)
	}
}

func (t *tokens) add(v string, err error) {
	if t.err != nil {
		return
	}
	if err != nil {
		t.err = err
		return
	}
	t.parts = append(t.parts, v)
}

func (t *tokens) caller(c Caller) {
	if t.err != nil {
		return
	}
	toks, err := callerTokens(c)
	if err != nil {
		t.err = err
		return
	}
	t.parts = append(t.parts, toks...)
}

func (t *tokens) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

func (t *tokens) target(m Mode, tg Target) {
	switch m {
	case ModeNone, ModeSelf:
		if tg != (Target{}) {
			t.fail(wire.Refuse(ErrInvalidToken, "a %s request carries no subject target, got %+v", modeLabel(m), tg))
			return
		}
		if m == ModeSelf {
			t.lit(string(m))
		}
	case ModeOwner, ModeAny, ModeChild, ModeLedger:
		if tg.Actor != "" || tg.UID != "" {
			t.fail(wire.Refuse(ErrInvalidToken, "%s mode carries only the target owner on the subject; the actor and uid ride the body", m))
			return
		}
		t.lit(string(m))
		t.add(ownerTok("target owner", tg.Owner))
	case ModeHandle, ModeExact:
		t.lit(string(m))
		t.add(ownerTok("target owner", tg.Owner))
		t.add(actorTok("target actor", tg.Actor))
		t.add(uidTok("target lifecycle uid", tg.UID))
	default:
		t.fail(wire.Refuse(ErrInvalidToken, "mode %q must be empty (untargeted) or one of self, owner, any, child, ledger, handle, exact", m))
	}
}

func modeLabel(m Mode) string {
	if m == ModeNone {
		return "untargeted"
	}
	return string(m) + "-mode"
}

func (t *tokens) subject() (string, error) {
	if t.err != nil {
		return "", t.err
	}
	return sized(strings.Join(t.parts, "."))
}

// Subject builds the request subject, refusing any bad token or a subject over MaxSubjectBytes.
func (r Request) Subject() (string, error) {
	t := newTokens(r.Space, "ep")
	switch r.Rail {
	case RailOne, RailAll:
		if r.InstanceID != "" {
			return "", wire.Refuse(ErrInvalidToken, "instance id %q belongs only on the inst rail, not %q", r.InstanceID, r.Rail)
		}
		t.lit(string(r.Rail))
		t.add(EndpointToken(r.Endpoint))
	case RailInst:
		t.lit(string(r.Rail))
		t.add(EndpointToken(r.Endpoint))
		t.add(IDToken("instance id", r.InstanceID))
	default:
		return "", wire.Refuse(ErrInvalidToken, "rail %q must be one, all or inst", r.Rail)
	}
	t.add(commandTok(r.Command))
	t.target(r.Mode, r.Target)
	t.caller(r.Caller)
	t.add(nonceTok(r.Nonce))
	return t.subject()
}

// ParseRequest splits a request subject; the word after <command> decides the mode, and the arity must then be exact. Anything else is ErrNotRail and must be ignored.
func ParseRequest(subject string) (Request, error) {
	notRail := func(format string, args ...any) (Request, error) {
		return Request{}, wire.Refuse(ErrNotRail, "subject %.120q is not an ep request: "+format, append([]any{subject}, args...)...)
	}
	if len(subject) > MaxSubjectBytes {
		return notRail("longer than %d bytes", MaxSubjectBytes)
	}
	t := strings.Split(subject, ".")
	if len(t) < 10 || t[0] != "cotal" || t[2] != "ep" {
		return notRail("want cotal.<space>.ep.<one|all|inst>… with at least 10 tokens")
	}
	r := Request{Space: t[1], Rail: Rail(t[3]), Endpoint: t[4]}
	i := 5
	switch r.Rail {
	case RailOne, RailAll:
	case RailInst:
		r.InstanceID = t[5]
		i = 6
	default:
		return notRail("rail %q is not one, all or inst", t[3])
	}
	r.Command = t[i]
	i++
	if IsModeWord(t[i]) {
		r.Mode = Mode(t[i])
		i++
		n := targetArity[r.Mode]
		if len(t) < i+n {
			return notRail("%s mode needs %d target tokens", r.Mode, n)
		}
		switch n {
		case 1:
			r.Target = Target{Owner: t[i]}
		case 3:
			r.Target = Target{Owner: t[i], Actor: t[i+1], UID: t[i+2]}
		}
		i += n
	}
	if want := i + 4; len(t) != want {
		return notRail("the %s %s form has %d tokens, not %d", r.Rail, modeLabel(r.Mode), want, len(t))
	}
	r.Caller = Caller{Owner: t[i], Actor: t[i+1], UID: t[i+2]}
	r.Nonce = t[i+3]
	if !validSpaceToken(r.Space) {
		return notRail("space %q is not a routing token", r.Space)
	}
	rebuilt, err := r.Subject()
	if err != nil {
		return notRail("%v", err)
	}
	if rebuilt != subject {
		return notRail("it does not rebuild to itself")
	}
	return r, nil
}

// Reply is the reply this request's responder answers on: its own endpoint instance and epoch, then the caller triple and nonce copied from the request subject.
func (r Request) Reply(instanceID string, epoch uint64) Reply {
	return Reply{Space: r.Space, Endpoint: r.Endpoint, InstanceID: instanceID, Epoch: epoch, Caller: r.Caller, Nonce: r.Nonce}
}

// ReplySubject derives the only subject a reply to this request may go to; transport and payload reply targets are ignored.
func (r Request) ReplySubject(instanceID string, epoch uint64) (string, error) {
	return r.Reply(instanceID, epoch).Subject()
}

// Subject builds cotal.<s>.ep.reply.<e>.<iid>.<epoch>.<o>.<a>.<uid>.<nonce>.
func (r Reply) Subject() (string, error) {
	t := newTokens(r.Space, "ep", "reply")
	t.add(EndpointToken(r.Endpoint))
	t.add(IDToken("instance id", r.InstanceID))
	t.lit(strconv.FormatUint(r.Epoch, 10))
	t.caller(r.Caller)
	t.add(nonceTok(r.Nonce))
	return t.subject()
}

// ParseReply splits a reply subject; the no-responders sentinel and every other shape are ErrNotRail.
func ParseReply(subject string) (Reply, error) {
	notRail := func(format string, args ...any) (Reply, error) {
		return Reply{}, wire.Refuse(ErrNotRail, "subject %.120q is not an ep reply: "+format, append([]any{subject}, args...)...)
	}
	if len(subject) > MaxSubjectBytes {
		return notRail("longer than %d bytes", MaxSubjectBytes)
	}
	t := strings.Split(subject, ".")
	if len(t) != 11 || t[0] != "cotal" || t[2] != "ep" || t[3] != "reply" {
		return notRail("want cotal.<space>.ep.reply.<e>.<iid>.<epoch>.<o>.<a>.<uid>.<nonce>")
	}
	epoch, ok := parseEpoch(t[6])
	if !ok {
		return notRail("epoch %q is not a decimal uint", t[6])
	}
	r := Reply{Space: t[1], Endpoint: t[4], InstanceID: t[5], Epoch: epoch, Caller: Caller{Owner: t[7], Actor: t[8], UID: t[9]}, Nonce: t[10]}
	if !validSpaceToken(r.Space) {
		return notRail("space %q is not a routing token", r.Space)
	}
	rebuilt, err := r.Subject()
	if err != nil {
		return notRail("%v", err)
	}
	if rebuilt != subject {
		return notRail("it does not rebuild to itself")
	}
	return r, nil
}

// mustSubject backs the filter helpers whose inputs are the process's own identity; a bad one is a programming error, so it panics loudly instead of subscribing wider than meant.
func mustSubject(s string, err error) string {
	if err != nil {
		panic("ep: " + err.Error())
	}
	return s
}

// CallerReplyFilter is a caller's own reply rail, exact arity: cotal.<s>.ep.reply.*.*.*.<o>.<a>.<uid>.*. It panics on an invalid caller.
func CallerReplyFilter(space string, c Caller) string {
	t := newTokens(space, "ep", "reply", "*", "*", "*")
	t.caller(c)
	t.lit("*")
	return mustSubject(t.subject())
}

// ResponderReplyFilter is what one instance at one epoch may publish replies on: …ep.reply.<e>.<iid>.<epoch>.*.*.*.*. It panics on an invalid endpoint or instance id.
func ResponderReplyFilter(space, endpoint, instanceID string, epoch uint64) string {
	t := newTokens(space, "ep", "reply")
	t.add(EndpointToken(endpoint))
	t.add(IDToken("instance id", instanceID))
	t.lit(strconv.FormatUint(epoch, 10), "*", "*", "*", "*")
	return mustSubject(t.subject())
}

// noResponders fills the responder slots of the sentinel; '_' cannot start an endpoint token, so no real reply collides.
const noResponders = "_nr"

// NoRespondersSubject is the reply-to of a liveness probe: a broker 503 there means no instance holds the rail. It panics on an invalid caller or nonce.
func NoRespondersSubject(space string, c Caller, nonce string) string {
	t := newTokens(space, "ep", "reply", noResponders, noResponders, noResponders)
	t.caller(c)
	t.add(nonceTok(nonce))
	return mustSubject(t.subject())
}

// IsNoResponders reports whether subject is a well-formed no-responders sentinel.
func IsNoResponders(subject string) bool {
	t := strings.Split(subject, ".")
	if len(t) != 11 || t[0] != "cotal" || t[2] != "ep" || t[3] != "reply" ||
		t[4] != noResponders || t[5] != noResponders || t[6] != noResponders || !validSpaceToken(t[1]) {
		return false
	}
	return Caller{Owner: t[7], Actor: t[8], UID: t[9]}.Valid() == nil && ValidNonce(t[10])
}

// QueueGroup is the only queue a server may take the one rail with: the endpoint token. It panics on an invalid endpoint.
func QueueGroup(endpoint string) string { return mustSubject(EndpointToken(endpoint)) }

// ServeSubjects are the three subscriptions for one registered command; the one rail must be queue-subscribed with QueueGroup. It panics on an invalid token.
func ServeSubjects(space, endpoint, instanceID, command string) (one, all, inst string) {
	e := mustSubject(EndpointToken(endpoint))
	cmd := mustSubject(commandTok(command))
	iid := mustSubject(IDToken("instance id", instanceID))
	root := wire.Root(space) + ".ep."
	return mustSubject(sized(root + "one." + e + "." + cmd + ".>")),
		mustSubject(sized(root + "all." + e + "." + cmd + ".>")),
		mustSubject(sized(root + "inst." + e + "." + iid + "." + cmd + ".>"))
}

// NewNonce mints a reply nonce: 24 CSPRNG bytes, base64url without padding (32 characters).
func NewNonce() string {
	var b [24]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return base64.RawURLEncoding.EncodeToString(b[:])
}
