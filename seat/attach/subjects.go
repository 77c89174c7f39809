package attach

import (
	"strconv"
	"strings"

	"github.com/cotal-go/cotal/mesh/ep/proto"
	"github.com/cotal-go/cotal/mesh/wire"
)

// The two directions of a session.
const (
	DirIn  = "in"  // holder to server: keys, resize, ready
	DirOut = "out" // server to holder: terminal output
)

// Subjects are a session's two core subjects.
type Subjects struct {
	In  string `json:"in"`
	Out string `json:"out"`
}

// SessionSubjects builds cotal.<space>.eps.<endpoint>.<sessionId>.<epoch>.<hOwner>.<hActor>.<hUid>.<in|out>.
//
// The holder's triple sits in the subject, unlike the spec's
// eps.<endpoint>.<sessionId>.<epoch>.<in|out>, so the broker binds a
// session to its holder with one standing row per agent (see
// HolderPermissions): no per-session credential is minted, and any other
// identity's publish or subscribe there is a permissions violation.
func SessionSubjects(space, endpoint, sessionID string, epoch uint64, holder proto.Caller) (Subjects, error) {
	prefix, err := sessionPrefix(space, endpoint, sessionID, epoch, holder)
	if err != nil {
		return Subjects{}, err
	}
	s := Subjects{In: prefix + DirIn, Out: prefix + DirOut}
	if len(s.Out) > proto.MaxSubjectBytes || len(s.In) > proto.MaxSubjectBytes {
		return Subjects{}, refuse(ErrInvalidGrant, "session subject is %d bytes, over the %d-byte limit", len(s.Out), proto.MaxSubjectBytes)
	}
	return s, nil
}

func sessionPrefix(space, endpoint, sessionID string, epoch uint64, holder proto.Caller) (string, error) {
	if err := wire.ValidSpace(space); err != nil {
		return "", err
	}
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return "", err
	}
	if !validSessionID(sessionID) {
		return "", refuse(ErrInvalidGrant, "session id %q must be %d-64 characters of A-Z a-z 0-9 _ -", sessionID, MinSessionIDLen)
	}
	if epoch > maxSafeInt {
		return "", refuse(ErrInvalidGrant, "epoch %d is beyond 2^53-1", epoch)
	}
	if err := holder.Valid(); err != nil {
		return "", err
	}
	return strings.Join([]string{wire.Root(space), "eps", tok, sessionID, strconv.FormatUint(epoch, 10),
		holder.Owner, holder.Actor, holder.UID, ""}, "."), nil
}

// HolderPermissions are the standing rows every agent credential carries
// for the sessions it holds: publish on `in` and subscribe on `out` of any
// session whose subject names its own triple, on any endpoint and epoch.
// Another identity's triple never matches, so the broker refuses it.
func HolderPermissions(space string, holder proto.Caller) (pub, sub []string, err error) {
	if err := wire.ValidSpace(space); err != nil {
		return nil, nil, err
	}
	if err := holder.Valid(); err != nil {
		return nil, nil, err
	}
	base := wire.Root(space) + ".eps.*.*.*." + holder.Owner + "." + holder.Actor + "." + holder.UID + "."
	return []string{base + DirIn}, []string{base + DirOut}, nil
}

// ServePermissions are the rows a serving credential needs for the
// sessions of endpoint at epoch: publish on every `out`, subscribe on every
// `in`, pinned to the epoch like the reply rail.
func ServePermissions(space, endpoint string, epoch uint64) (pub, sub []string, err error) {
	if err := wire.ValidSpace(space); err != nil {
		return nil, nil, err
	}
	tok, err := proto.EndpointToken(endpoint)
	if err != nil {
		return nil, nil, err
	}
	base := wire.Root(space) + ".eps." + tok + ".*." + strconv.FormatUint(epoch, 10) + ".*.*.*."
	return []string{base + DirOut}, []string{base + DirIn}, nil
}
