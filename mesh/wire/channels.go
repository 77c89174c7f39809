package wire

import "strings"

// MaxChannelLength is the spec's MAX_CHANNEL_LENGTH, in characters.
const MaxChannelLength = 4096

// channelRule is the allowed shape, repeated in every refusal so the user knows what to type.
const channelRule = "use dotted segments of A-Z a-z 0-9 _ - (a segment may also be exactly * or, last, >)"

// quoteShort keeps an error about a huge channel readable.
func quoteShort(s string) string {
	const keep = 64
	if len(s) <= keep {
		return s
	}
	return s[:keep] + "..."
}

// ValidateChannel is the policy check for ACL entries, join targets and flags; it refuses anything SanitizeToken would rewrite so foo/bar never grants foo_bar.
func ValidateChannel(ch string) error {
	if ch == "" {
		return refuse(ErrInvalidChannel, "invalid channel %q: empty name; %s", ch, channelRule)
	}
	if len(ch) > MaxChannelLength {
		return refuse(ErrInvalidChannel, "invalid channel %q: %d characters, the limit is %d", quoteShort(ch), len(ch), MaxChannelLength)
	}
	segs := strings.Split(ch, ".")
	for i, seg := range segs {
		switch {
		case seg == "":
			return refuse(ErrInvalidChannel, "invalid channel %q: empty segment (no leading, trailing or double dots); %s", ch, channelRule)
		case seg == "*":
		case seg == ">":
			if i != len(segs)-1 {
				return refuse(ErrInvalidChannel, "invalid channel %q: > may only be the last segment", ch)
			}
		case !AllBytes(seg, IsNameByte):
			return refuse(ErrInvalidChannel, "invalid channel %q: segment %q is not allowed; %s", ch, seg, channelRule)
		}
	}
	return nil
}

// IsConcrete reports whether ch names one channel rather than a family, which is what a publish needs.
func IsConcrete(ch string) bool {
	for _, seg := range strings.Split(ch, ".") {
		if seg == "*" || seg == ">" {
			return false
		}
	}
	return true
}

// ValidateConcreteChannel checks a publish target: a valid channel that is not a wildcard.
func ValidateConcreteChannel(ch string) error {
	if err := ValidateChannel(ch); err != nil {
		return err
	}
	if !IsConcrete(ch) {
		return refuse(ErrWildcardTarget, "cannot publish to wildcard channel %q - pick a concrete sub-channel", ch)
	}
	return nil
}

// ChannelMatches applies NATS matching to channel names so ACLs and joins agree with the broker: * is one segment, a trailing > is one or more.
func ChannelMatches(pattern, ch string) bool {
	if pattern == "" || ch == "" {
		return false
	}
	ps := strings.Split(pattern, ".")
	cs := strings.Split(ch, ".")
	for i, p := range ps {
		if p == ">" && i == len(ps)-1 {
			return len(cs) > i
		}
		if i >= len(cs) {
			return false
		}
		if p != "*" && p != cs[i] {
			return false
		}
	}
	return len(cs) == len(ps)
}

// PatternCovers reports whether every channel pattern can match is also matched by grant, so a wildcard subscribe or join never reads past its ACL entry.
func PatternCovers(grant, pattern string) bool {
	if grant == "" || pattern == "" {
		return false
	}
	gs := strings.Split(grant, ".")
	ps := strings.Split(pattern, ".")
	for i, g := range gs {
		if g == ">" && i == len(gs)-1 {
			// Every remaining pattern segment, wildcard or not, stands for at least one level.
			return len(ps) > i
		}
		if i >= len(ps) {
			return false
		}
		p := ps[i]
		switch {
		case p == ">":
			return false // pattern reaches any depth here; grant does not
		case g == "*":
			// one level of anything covers a literal or another *
		case g != p:
			return false
		}
	}
	return len(ps) == len(gs)
}

// Covered reports whether any grant in an ACL covers pattern.
func Covered(grants []string, pattern string) bool {
	for _, g := range grants {
		if PatternCovers(g, pattern) {
			return true
		}
	}
	return false
}
