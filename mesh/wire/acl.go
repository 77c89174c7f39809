package wire

import "slices"

// ACL is a read list (allowSubscribe) or a post list (allowPublish) of
// channel patterns. Its zero value covers no channel: nil and empty mean
// the same everywhere an ACL is read, so a list left out grants nothing.
// A list that covers every channel says so with ">" (Every); a read list
// that follows the subscribe list says so by being built with
// SameAsSubscribe, where a person left it out (an agent file, a flag).
type ACL []string

// Every is the ACL that covers every channel.
func Every() ACL { return ACL{">"} }

// SameAsSubscribe is the read list of an identity whose allowSubscribe was
// left out: the channels it joins at connect, and no others.
func SameAsSubscribe(subscribe []string) ACL {
	return append(ACL{}, subscribe...)
}

// Covers reports whether the list covers a channel or pattern.
func (a ACL) Covers(pattern string) bool { return Covered(a, pattern) }

// CoversEvery reports whether the list covers every channel.
func (a ACL) CoversEvery() bool { return slices.Contains(a, ">") }

// Listed is the list as it goes on the wire and into records: never
// null, so a reader cannot take a missing list for a different one.
func (a ACL) Listed() []string {
	if a == nil {
		return []string{}
	}
	return a
}
