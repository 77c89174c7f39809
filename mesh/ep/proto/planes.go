package proto

import (
	"strconv"
	"strings"

	"github.com/cotal-go/cotal/mesh/wire"
)

// EventSubject is where an instance publishes events at its epoch: cotal.<s>.epe.<e>.<iid>.<epoch>.<topic…>.
func EventSubject(space, endpoint, instanceID string, epoch uint64, topic ...string) (string, error) {
	t := newTokens(space, "epe")
	t.add(EndpointToken(endpoint))
	t.add(IDToken("instance id", instanceID))
	t.lit(strconv.FormatUint(epoch, 10))
	t.topic("event", topic)
	return t.subject()
}

// FactSubject is a create-only canonical fact, not fenced by epoch: cotal.<s>.epf.<e>.<topic…>.
func FactSubject(space, endpoint string, topic ...string) (string, error) {
	t := newTokens(space, "epf")
	t.add(EndpointToken(endpoint))
	t.topic("fact", topic)
	return t.subject()
}

func (t *tokens) topic(what string, topic []string) {
	if len(topic) == 0 {
		t.fail(wire.Refuse(ErrInvalidToken, "%s topic needs at least one token", what))
		return
	}
	for _, tok := range topic {
		if !validTopicToken(tok) {
			t.fail(wire.Refuse(ErrInvalidToken, "%s topic token %q must be 1 or more characters of A-Z a-z 0-9 _ - (no dots or wildcards)", what, tok))
			return
		}
	}
	t.lit(topic...)
}

// ContractSubject is the one create-only message holding a contract artifact: cotal.<s>.epc.<64 hex>. It takes the bare hex or a sha256:<hex> digest.
func ContractSubject(space, hexDigest string) (string, error) {
	hex, err := DigestHex(hexDigest)
	if err != nil {
		return "", err
	}
	t := newTokens(space, "epc", hex)
	return t.subject()
}

// DigestHex normalizes sha256:<hex> or <hex> to the bare 64 lowercase hex characters.
func DigestHex(ref string) (string, error) {
	hex := strings.TrimPrefix(ref, DigestPrefix)
	if len(hex) != 64 || !wire.AllBytes(hex, func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }) {
		return "", wire.Refuse(ErrInvalidDigest, "digest %q must be sha256: followed by 64 characters of 0-9 a-f", ref)
	}
	return hex, nil
}

// GoalTopic is goal.<cO>.<cA>.<cUid>.<goalId>, the caller-scoped prefix of every goal topic.
func GoalTopic(c Caller, goalID string) ([]string, error) {
	toks, err := callerTokens(c)
	if err != nil {
		return nil, err
	}
	if _, err := IDToken("goal id", goalID); err != nil {
		return nil, err
	}
	return append(append([]string{"goal"}, toks...), goalID), nil
}

// GoalProgressSubject is a goal's progress event at the executor's epoch: epe.<e>.<iid>.<epoch>.goal.<cO>.<cA>.<cUid>.<goalId>.progress.
func GoalProgressSubject(space, endpoint, instanceID string, epoch uint64, caller Caller, goalID string) (string, error) {
	topic, err := GoalTopic(caller, goalID)
	if err != nil {
		return "", err
	}
	return EventSubject(space, endpoint, instanceID, epoch, append(topic, "progress")...)
}

// GoalProgressFilter is the caller's read grant on its own goals' progress from any instance and epoch: epe.<e>.*.*.goal.<cO>.<cA>.<cUid>.>.
func GoalProgressFilter(space, endpoint string, caller Caller) (string, error) {
	t := newTokens(space, "epe")
	t.add(EndpointToken(endpoint))
	t.lit("*", "*", "goal")
	t.caller(caller)
	t.lit(">")
	return t.subject()
}

// GoalResultSubject is the one create-only terminal fact of a goal, the same at every epoch: epf.<e>.goal.<cO>.<cA>.<cUid>.<goalId>.result.
func GoalResultSubject(space, endpoint string, caller Caller, goalID string) (string, error) {
	topic, err := GoalTopic(caller, goalID)
	if err != nil {
		return "", err
	}
	return FactSubject(space, endpoint, append(topic, "result")...)
}
