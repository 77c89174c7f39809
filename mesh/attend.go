package mesh

import (
	"github.com/cotal-go/cotal/mesh/presence"
	"github.com/cotal-go/cotal/mesh/render"
	"github.com/cotal-go/cotal/mesh/wire"
)

// Action is what a connector does with an arrival.
type Action int

// The actions of the attention table.
const (
	Inject Action = iota // put it in front of the agent now
	Hold                 // inject later: when the agent is idle, or with the next turn
	Pull                 // keep it for the agent's own inbox read; never injected
	Drop                 // ack it unread (a muted channel)
)

func (a Action) String() string {
	switch a {
	case Inject:
		return "inject"
	case Hold:
		return "hold"
	case Pull:
		return "pull"
	}
	return "drop"
}

// Attend applies the attention table of spec §12 to one arrival: the
// agent's global mode, its override of the item's channel ("" or normal
// for none), and whether it is idle now. DMs and tasks always inject;
// historical channel chatter is pull-only; a muted channel drops even its
// mentions; a quiet one keeps ambient posts pull-only while its mentions
// inject; under focus a mention of the agent wakes it (it is injected on
// its own: focus holds nothing back to ride along with it) while ambient
// posts are left for the inbox (spec §16 item 57); under dnd ambient posts
// wait for the next turn; under open they wait only while the agent is
// working.
func Attend(it *Item, me wire.Principal, global presence.Attention, channelMode ChannelMode, idle bool) Action {
	if it.Directed() {
		return Inject
	}
	if it.PullOnly {
		return Pull
	}
	mention := render.Mentions(it.Msg, me)
	switch {
	case channelMode == ModeMuted:
		return Drop
	case it.Historical && !mention:
		return Pull
	case channelMode == ModeQuiet && !mention:
		return Pull
	case mention:
		return Inject
	case global == presence.Focus:
		return Pull
	case global == presence.DND:
		return Hold
	case idle:
		return Inject
	}
	return Hold
}
