package mcp_test

import (
	"strings"
	"testing"
)

// TestConformance52_SendDefaultIsAChannelYouMayPostTo: cotal_send with no
// channel posts to the first concrete joined channel the post ACL permits,
// and refuses the omitted channel when none does (the channel-permissions
// page). It picked #news, which the agent may only read, and then failed
// "not allowed to post to #news".
func TestConformance52_SendDefaultIsAChannelYouMayPostTo(t *testing.T) {
	h := startMesh(t)
	c := standalone(t, h, h.mint("alice", "", []string{"team.>", "news", "team"}, []string{"team"}))
	c.waitOK("cotal_orientation", nil, "cotal_send without a channel posts to #team.")
	if got := c.ok("cotal_send", map[string]any{"text": "hello"}); !strings.HasPrefix(got, "Sent to #team.") {
		t.Errorf("send without a channel: %q; want it on #team", got)
	}
	lurker := standalone(t, h, h.mint("lurker", "", []string{"news", "team.>"}, []string{"team.x"}))
	lurker.waitOK("cotal_orientation", nil, "You are lurker")
	got := lurker.refused("cotal_send", map[string]any{"text": "hello"})
	if !strings.HasPrefix(got, "Couldn't send: no channel given, and none of the channels you joined (#news, #team.>) is one you may post to (allowPublish: #team.x)") {
		t.Errorf("send without a channel, only read-only and family subscriptions: %q", got)
	}
}

// TestConformanceSeedFollowedFamilyShowsItsStoredCopies: cotal_channels
// lists a followed family as its own row with the state of its stored
// copies (the families paragraph). A team.> follower holding an active
// durable membership read "a family of channels, live"; a pattern with *
// holds none and says so.
func TestConformanceSeedFollowedFamilyShowsItsStoredCopies(t *testing.T) {
	h := startMesh(t)
	c := standalone(t, h, h.mint("alice", "", []string{"team.>", "ops.*"}, nil))
	got := c.waitOK("cotal_channels", nil, "#team.>")
	for _, want := range []string{
		"* #team.> — a family of channels; durable, backstop active",
		"* #ops.* — a family of channels, followed live: no stored copies",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("cotal_channels lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "#team.> — a family of channels, live") {
		t.Errorf("a family with an active membership reads live:\n%s", got)
	}
	// A family nested in the held one stores through the outer hold even
	// when its own could not be taken; here it has its own.
	c.ok("cotal_join", map[string]any{"channel": "team.ci.>"})
	if got := c.ok("cotal_channels", nil); !strings.Contains(got, "* #team.ci.> — a family of channels; durable, backstop active") {
		t.Errorf("nested family:\n%s", got)
	}
	h.m.Delivery().Close()
	c.waitOK("cotal_channels", nil, "* #team.> — a family of channels; durable, backstop DEGRADED")
}
